// WSAStringToAddressA/W: IPv4 and IPv6 text, optional ports and scopes,
// buffer sizes and errors as Winsock reports them.
#include <arpa/inet.h>
#include <sys/un.h>

#include <cstring>
#include <string>

#include "win32_test_util.h"

using namespace win32_test;

namespace {

// Calls WSAStringToAddressA on a copy (it takes a non-const LPSTR, as on Windows).
INT Parse(const std::string &text, INT family, sockaddr_storage *out, INT *len) {
    std::string copy = text;
    std::memset(out, 0xCC, sizeof *out);  // every byte of the result must be written
    return WSAStringToAddressA(copy.data(), family, nullptr, reinterpret_cast<LPSOCKADDR>(out), len);
}

::testing::AssertionResult Ipv4(const std::string &text, const char *addr, uint16_t port) {
    sockaddr_storage ss;
    INT len = sizeof ss;
    if (Parse(text, AF_INET, &ss, &len) != 0)
        return ::testing::AssertionFailure() << text << ": error " << WSAGetLastError();
    const auto *sin = reinterpret_cast<const sockaddr_in *>(&ss);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
    static const char zero[sizeof sin->sin_zero] = {};
    if (len != static_cast<INT>(sizeof(sockaddr_in)) || sin->sin_family != AF_INET || ntohs(sin->sin_port) != port ||
        std::strcmp(buf, addr) != 0 || std::memcmp(sin->sin_zero, zero, sizeof zero) != 0)
        return ::testing::AssertionFailure() << text << " -> " << buf << " port " << ntohs(sin->sin_port) << " len "
                                             << len;
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult Ipv6(const std::string &text, const char *addr, uint16_t port, uint32_t scope) {
    sockaddr_storage ss;
    INT len = sizeof ss;
    if (Parse(text, AF_INET6, &ss, &len) != 0)
        return ::testing::AssertionFailure() << text << ": error " << WSAGetLastError();
    const auto *sin6 = reinterpret_cast<const sockaddr_in6 *>(&ss);
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof buf);
    if (len != static_cast<INT>(sizeof(sockaddr_in6)) || sin6->sin6_family != AF_INET6 ||
        ntohs(sin6->sin6_port) != port || std::strcmp(buf, addr) != 0 || sin6->sin6_scope_id != scope ||
        sin6->sin6_flowinfo != 0)
        return ::testing::AssertionFailure() << text << " -> " << buf << " port " << ntohs(sin6->sin6_port)
                                             << " scope " << sin6->sin6_scope_id << " len " << len;
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult Invalid(const std::string &text, INT family) {
    sockaddr_storage ss;
    INT len = sizeof ss;
    WSASetLastError(0);
    INT rc = Parse(text, family, &ss, &len);
    if (rc != SOCKET_ERROR || WSAGetLastError() != WSAEINVAL)
        return ::testing::AssertionFailure() << "\"" << text << "\" gave " << rc << ", error " << WSAGetLastError();
    return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Winsock, Ipv4WithAndWithoutPort) {
    EXPECT_TRUE(Ipv4("1.2.3.4", "1.2.3.4", 0));  // a missing port is 0
    EXPECT_TRUE(Ipv4("1.2.3.4:80", "1.2.3.4", 80));
    EXPECT_TRUE(Ipv4("127.0.0.1:0", "127.0.0.1", 0));
    EXPECT_TRUE(Ipv4("255.255.255.255:65535", "255.255.255.255", 65535));
    EXPECT_TRUE(Ipv4("0.0.0.0", "0.0.0.0", 0));
}

// Winsock parses IPv4 as RtlIpv4StringToAddressEx with Strict FALSE: one to
// four parts, each decimal, octal or hex.
TEST(Winsock, Ipv4NonStrictForms) {
    EXPECT_TRUE(Ipv4("127.1", "127.0.0.1", 0));
    EXPECT_TRUE(Ipv4("10.1.2:7", "10.1.0.2", 7));
    EXPECT_TRUE(Ipv4("0x7f.0.0.1", "127.0.0.1", 0));
    EXPECT_TRUE(Ipv4("010.0.0.1", "8.0.0.1", 0));
    EXPECT_TRUE(Ipv4("3232235777", "192.168.1.1", 0));
}

TEST(Winsock, BadIpv4) {
    for (const char *s : {"", "1.2.3.256", "1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3.4:8x", "1.2.3.4:80:81",
                          " 1.2.3.4", "1.2.3.4 ", "1.2.3.4 junk", "1.2.3.4.5", "1..2.3", "host", "::1", "[1.2.3.4]:80",
                          ":80"})
        EXPECT_TRUE(Invalid(s, AF_INET));
}

TEST(Winsock, Ipv6Forms) {
    EXPECT_TRUE(Ipv6("::1", "::1", 0, 0));
    EXPECT_TRUE(Ipv6("[::1]", "::1", 0, 0));
    EXPECT_TRUE(Ipv6("[::1]:80", "::1", 80, 0));
    EXPECT_TRUE(Ipv6("fe80::1%3", "fe80::1", 0, 3));
    EXPECT_TRUE(Ipv6("[fe80::1%2]:443", "fe80::1", 443, 2));
    EXPECT_TRUE(Ipv6("2001:db8::a:b:c:d", "2001:db8::a:b:c:d", 0, 0));
    EXPECT_TRUE(Ipv6("[::ffff:1.2.3.4]:65535", "::ffff:1.2.3.4", 65535, 0));
    EXPECT_TRUE(Ipv6("::", "::", 0, 0));
}

TEST(Winsock, BadIpv6) {
    for (const char *s : {"", "[::1]:", "[::1", "::1]", "[::1]80", "[::1]:65536", "::g", "1.2.3.4", "[1.2.3.4]:80",
                          "fe80::1%", "fe80::1%eth0", "[::1%]:80", " ::1", "::1 ", "[]:80", "1:2:3:4:5:6:7:8:9"})
        EXPECT_TRUE(Invalid(s, AF_INET6));
}

TEST(Winsock, UnsupportedFamilyIsInvalid) {
    EXPECT_TRUE(Invalid("1.2.3.4", AF_UNIX));
    EXPECT_TRUE(Invalid("1.2.3.4", AF_UNSPEC));
}

// Too small a buffer: WSAEFAULT and the size needed.
TEST(Winsock, BufferTooSmall) {
    sockaddr_storage ss;
    INT len = sizeof(sockaddr_in) - 1;
    WSASetLastError(0);
    EXPECT_EQ(Parse("1.2.3.4", AF_INET, &ss, &len), SOCKET_ERROR);
    EXPECT_EQ(WSAGetLastError(), WSAEFAULT);
    EXPECT_EQ(len, static_cast<INT>(sizeof(sockaddr_in)));
    EXPECT_EQ(Parse("1.2.3.4", AF_INET, &ss, &len), 0);  // exactly the size is enough

    len = sizeof(sockaddr_in);
    EXPECT_EQ(Parse("::1", AF_INET6, &ss, &len), SOCKET_ERROR);
    EXPECT_EQ(WSAGetLastError(), WSAEFAULT);
    EXPECT_EQ(len, 28);  // sizeof(SOCKADDR_IN6), as on Windows

    // The size is checked before the text.
    len = 4;
    EXPECT_EQ(Parse("not an address", AF_INET, &ss, &len), SOCKET_ERROR);
    EXPECT_EQ(WSAGetLastError(), WSAEFAULT);
    EXPECT_EQ(len, static_cast<INT>(sizeof(sockaddr_in)));

    char text[] = "1.2.3.4";
    EXPECT_EQ(WSAStringToAddressA(text, AF_INET, nullptr, reinterpret_cast<LPSOCKADDR>(&ss), nullptr), SOCKET_ERROR);
    len = sizeof ss;
    EXPECT_EQ(WSAStringToAddressA(text, AF_INET, nullptr, nullptr, &len), SOCKET_ERROR);
    WSASetLastError(0);
    EXPECT_EQ(WSAStringToAddressA(nullptr, AF_INET, nullptr, reinterpret_cast<LPSOCKADDR>(&ss), &len), SOCKET_ERROR);
    EXPECT_EQ(WSAGetLastError(), WSAEINVAL);
}

// A refused string leaves the buffer zeroed, the length unchanged.
TEST(Winsock, RefusedStringZeroesTheBuffer) {
    sockaddr_storage ss;
    INT len = sizeof ss;
    ASSERT_EQ(Parse("1.2.3.4.5", AF_INET, &ss, &len), SOCKET_ERROR);
    EXPECT_EQ(len, static_cast<INT>(sizeof ss));
    const auto *bytes = reinterpret_cast<const unsigned char *>(&ss);
    for (size_t i = 0; i < sizeof(sockaddr_in); ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(Winsock, WideAndGenericNames) {
    sockaddr_in6 sin6;
    INT len = sizeof sin6;
    WCHAR wide[] = L"[::1]:8080";
    ASSERT_EQ(WSAStringToAddressW(wide, AF_INET6, nullptr, reinterpret_cast<LPSOCKADDR>(&sin6), &len), 0);
    EXPECT_EQ(ntohs(sin6.sin6_port), 8080);
    EXPECT_EQ(std::memcmp(&sin6.sin6_addr, &in6addr_loopback, sizeof(in6_addr)), 0);
    WCHAR accented[] = L"1.2.3.\u00e9";
    sockaddr_in sin;
    len = sizeof sin;
    EXPECT_EQ(WSAStringToAddressW(accented, AF_INET, nullptr, reinterpret_cast<LPSOCKADDR>(&sin), &len), SOCKET_ERROR);
    EXPECT_EQ(WSAGetLastError(), WSAEINVAL);

    // WSAStringToAddress is the char version, as without UNICODE on Windows.
    char text[] = "10.0.0.1:4791";
    len = sizeof sin;
    ASSERT_EQ(WSAStringToAddress(text, AF_INET, nullptr, reinterpret_cast<LPSOCKADDR>(&sin), &len), 0);
    EXPECT_EQ(ntohs(sin.sin_port), 4791);
    EXPECT_EQ(ntohl(sin.sin_addr.s_addr), 0x0A000001u);
}
