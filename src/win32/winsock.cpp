// WSAStringToAddressA/W: text to a sockaddr_in / sockaddr_in6, as Winsock
// parses it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <string>
#include <string_view>

#include "win32/common.h"

namespace opennd::win32 {
namespace {

bool AllDigits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// A decimal number no greater than max.
bool ParseDecimal(std::string_view s, unsigned long max, unsigned long *out) {
    if (!AllDigits(s) || s.size() > 10) return false;
    unsigned long v = 0;
    for (char c : s) v = v * 10 + static_cast<unsigned long>(c - '0');
    if (v > max) return false;
    *out = v;
    return true;
}

// "a.b.c.d" with an optional ":port". Winsock parses it as
// RtlIpv4StringToAddressEx with Strict FALSE: the address may also be written
// in one to four parts, each decimal, octal (0...) or hex (0x...) ("127.1",
// "0x7f.0.0.1"), which is what inet_aton accepts once anything but those
// characters, in particular the white space inet_aton would stop at, is
// refused.
bool ParseIpv4(std::string_view text, sockaddr_in *out) {
    std::memset(out, 0, sizeof *out);
    unsigned long port = 0;
    size_t colon = text.find(':');
    std::string_view addr = text.substr(0, colon);
    if (colon != std::string_view::npos && !ParseDecimal(text.substr(colon + 1), 65535, &port)) return false;
    if (addr.empty()) return false;
    for (char c : addr)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' || c == 'X' ||
              c == '.'))
            return false;
    in_addr a;
    if (inet_aton(std::string(addr).c_str(), &a) == 0) return false;
    out->sin_family = AF_INET;
    out->sin_port = htons(static_cast<uint16_t>(port));
    out->sin_addr = a;
    return true;
}

// "addr", "addr%scope", "[addr]", "[addr%scope]" and either bracketed form
// followed by ":port". The scope is a number (an interface index).
bool ParseIpv6(std::string_view text, sockaddr_in6 *out) {
    std::memset(out, 0, sizeof *out);
    unsigned long port = 0, scope = 0;
    std::string_view addr = text;
    if (!text.empty() && text.front() == '[') {
        size_t close = text.find(']');
        if (close == std::string_view::npos) return false;
        addr = text.substr(1, close - 1);
        std::string_view rest = text.substr(close + 1);
        if (!rest.empty() && (rest.front() != ':' || !ParseDecimal(rest.substr(1), 65535, &port))) return false;
    }
    size_t percent = addr.find('%');
    if (percent != std::string_view::npos) {
        if (!ParseDecimal(addr.substr(percent + 1), 0xFFFFFFFFul, &scope)) return false;
        addr = addr.substr(0, percent);
    }
    in6_addr a;
    if (addr.empty() || inet_pton(AF_INET6, std::string(addr).c_str(), &a) != 1) return false;
    out->sin6_family = AF_INET6;
    out->sin6_port = htons(static_cast<uint16_t>(port));
    out->sin6_addr = a;
    out->sin6_scope_id = static_cast<uint32_t>(scope);
    return true;
}

INT Fail(int error) {
    SetError(static_cast<DWORD>(error));
    return SOCKET_ERROR;
}

// The checks in Winsock's order: the family, then the buffer size (so too
// small a buffer is WSAEFAULT whatever the text), then the text.
INT StringToAddress(std::string_view text, INT family, LPSOCKADDR address, LPINT length) {
    INT needed;
    if (family == AF_INET)
        needed = static_cast<INT>(sizeof(sockaddr_in));
    else if (family == AF_INET6)
        needed = static_cast<INT>(sizeof(sockaddr_in6));
    else
        return Fail(WSAEINVAL);  // only AF_INET and AF_INET6 are supported
    if (*length < needed) {
        *length = needed;
        return Fail(WSAEFAULT);
    }
    // Parsed into an aligned local: the caller's buffer may be any bytes.
    sockaddr_storage parsed;
    bool ok = family == AF_INET ? ParseIpv4(text, reinterpret_cast<sockaddr_in *>(&parsed))
                                : ParseIpv6(text, reinterpret_cast<sockaddr_in6 *>(&parsed));
    std::memcpy(address, &parsed, static_cast<size_t>(needed));  // zeroes when refused, as Winsock does
    if (!ok) return Fail(WSAEINVAL);
    *length = needed;
    return 0;
}

}  // namespace
}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API INT WSAStringToAddressA(LPSTR AddressString, INT AddressFamily, LPWSAPROTOCOL_INFOA lpProtocolInfo,
                                   LPSOCKADDR lpAddress, LPINT lpAddressLength) {
    (void)lpProtocolInfo;
    if (!lpAddress || !lpAddressLength) return Fail(WSAEFAULT);
    if (!AddressString) return Fail(WSAEINVAL);
    return StringToAddress(AddressString, AddressFamily, lpAddress, lpAddressLength);
}

// Addresses are ASCII: any other character makes the string invalid.
OPENND_API INT WSAStringToAddressW(LPWSTR AddressString, INT AddressFamily, struct _WSAPROTOCOL_INFOW *lpProtocolInfo,
                                   LPSOCKADDR lpAddress, LPINT lpAddressLength) {
    (void)lpProtocolInfo;
    if (!lpAddress || !lpAddressLength) return Fail(WSAEFAULT);
    if (!AddressString) return Fail(WSAEINVAL);
    std::string narrow;
    bool ascii = true;
    for (const WCHAR *p = AddressString; *p && ascii; ++p) {
        ascii = *p > 0 && *p <= 0x7F;
        if (ascii) narrow.push_back(static_cast<char>(*p));
    }
    // Anything else is invalid in either family; the size check still comes first.
    return StringToAddress(ascii ? narrow : std::string(1, '?'), AddressFamily, lpAddress, lpAddressLength);
}

}  // extern "C"
