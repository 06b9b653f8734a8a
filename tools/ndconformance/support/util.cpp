#include <dirent.h>

#include <fstream>
#include "support/util.h"

#include "common/await.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace ndc {

namespace {
uint64_t g_wait_ms = 10000;
}

uint64_t WaitMs() { return g_wait_ms; }
void SetWaitMs(uint64_t ms) { g_wait_ms = ms ? ms : 1; }
uint64_t QuietMs() { return std::max<uint64_t>(50, g_wait_ms / 200); }

void Backoff::Pause() {
    ++n_;
    if (n_ < 64) return;
    if (n_ < 256) {
        sched_yield();
        return;
    }
    usleep(n_ < 2048 ? 20 : 200);
}

void SleepMs(uint64_t ms) { usleep(static_cast<useconds_t>(ms * 1000)); }

BusyProcess::BusyProcess() {
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);  // SIGALRM ends it if nobody does
        for (;;) asm volatile("" ::: "memory");  // spin
    }
    pid_ = pid;
}

BusyProcess::~BusyProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
}

size_t OpenFdCount() {
    size_t n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}

size_t SharedMappingCount() {
    std::ifstream maps("/proc/self/maps");
    size_t n = 0;
    for (std::string line; std::getline(maps, line);)
        n += line.find("/memfd:") != std::string::npos || line.find("/dev/shm/") != std::string::npos;
    return n;
}

std::string StatusName(HRESULT hr) {
    char buf[48];
    if (hr == kHang) return "HANG (no completion within the wait bound)";
    const char *name = OpenNdStatusName(hr);
    if (hr == kAddressAlreadyAssociated) name = "STATUS_ADDRESS_ALREADY_ASSOCIATED";
    if (hr == kBadNetworkName) name = "STATUS_BAD_NETWORK_NAME";
    if (hr == kConnectionDisconnected) name = "STATUS_CONNECTION_DISCONNECTED";
    if (hr == E_NOINTERFACE) name = "E_NOINTERFACE";
    std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(hr));
    return name ? std::string(name) + " (" + buf + ")" : std::string(buf);
}

bool StatusAllowedForType(HRESULT s, ND2_REQUEST_TYPE type) {
    switch (s) {
    case ND_SUCCESS:
    case ND_CANCELED:
    case ND_INVALID_DEVICE_REQUEST:
    case ND_INTERNAL_ERROR: return true;
    case ND_DATA_OVERRUN:
        return type == Nd2RequestTypeSend || type == Nd2RequestTypeRead || type == Nd2RequestTypeWrite ||
               type == Nd2RequestTypeReceive;  // COMPAT: a Receive too small
    case ND_BUFFER_OVERFLOW: return type == Nd2RequestTypeReceive;
    case ND_ACCESS_VIOLATION: return type != Nd2RequestTypeInvalidate;  // Bind per D09
    // COMPAT: Microsoft's own IB provider reports a request the peer found
    // malformed (a Send longer than its receive) as STATUS_DATA_ERROR.
    case static_cast<HRESULT>(0xC000003Eu):
        return type == Nd2RequestTypeSend || type == Nd2RequestTypeRead || type == Nd2RequestTypeWrite;
    case ND_IO_TIMEOUT:
    case ND_REMOTE_ERROR:
        return type == Nd2RequestTypeSend || type == Nd2RequestTypeReceive || type == Nd2RequestTypeRead ||
               type == Nd2RequestTypeWrite;
    default: return false;
    }
}

const char *RequestTypeName(int type) {
    switch (type) {
    case Nd2RequestTypeReceive: return "Receive";
    case Nd2RequestTypeSend: return "Send";
    case Nd2RequestTypeBind: return "Bind";
    case Nd2RequestTypeInvalidate: return "Invalidate";
    case Nd2RequestTypeRead: return "Read";
    case Nd2RequestTypeWrite: return "Write";
    default: return "?";
    }
}

Ov::Ov(bool with_event) : OVERLAPPED{} {
    if (with_event) event = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    hEvent = event;
}

Ov::~Ov() {
    if (event) CloseHandle(event);
}

void Ov::Reuse() {
    HANDLE e = event;
    static_cast<OVERLAPPED &>(*this) = OVERLAPPED{};
    if (e) ResetEvent(e);
    hEvent = e;
}

bool Ov::Signaled() const { return event && WaitForSingleObject(event, 0) == WAIT_OBJECT_0; }

HRESULT Finish(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr, uint64_t ms) {
    opennd::client::Status s = opennd::client::Await(
        obj, *ov, hr, opennd::client::Deadline::After(ms ? ms : WaitMs()), "");
    return s.timed_out() ? kHang : s.hr();
}

IpAddress ParseIp(const std::string &text) {
    IpAddress a;
    if (!opennd::net::ParseAddress(text, &a)) {
        std::fprintf(stderr, "ndconformance: not an IP address: %s\n", text.c_str());
        std::abort();
    }
    return a;
}

IpAddress WithPort(IpAddress a, uint16_t port) {
    opennd::net::SetPort(a.sa(), port);
    return a;
}

IpAddress Wildcard(int family, uint16_t port) {
    return WithPort(ParseIp(family == AF_INET6 ? "::" : "0.0.0.0"), port);
}

std::string IpText(const IpAddress &a, bool with_port) { return opennd::net::ToString(a.sa(), with_port); }
uint16_t PortOf(const IpAddress &a) { return opennd::net::Port(a.sa()); }

std::vector<IpAddress> AddressListOf(const SOCKET_ADDRESS_LIST *list) {
    std::vector<IpAddress> out;
    for (INT i = 0; i < list->iAddressCount; ++i) {
        IpAddress a;
        if (opennd::net::FromSockaddr(list->Address[i].lpSockaddr, list->Address[i].iSockaddrLength, &a))
            out.push_back(a);
    }
    return out;
}

bool Contains(const std::vector<IpAddress> &list, const IpAddress &a) {
    for (const auto &x : list)
        if (opennd::net::SameIp(x.sa(), a.sa())) return true;
    return false;
}

bool DequeuePacket(HANDLE port, OVERLAPPED_ENTRY *e, DWORD ms) {
    ULONG n = 0;
    return GetQueuedCompletionStatusEx(port, e, 1, &n, ms, FALSE) && n == 1;
}

IpAddress ConnectorLocalAddress(IND2Connector *c, HRESULT *hr) {
    IpAddress a;
    ULONG len = sizeof a.storage;
    *hr = c->GetLocalAddress(a.sa(), &len);
    return a;
}

uint64_t PatternWord(uint32_t seed, uint64_t offset) {
    return (uint64_t(seed & 0xFFFFFF) << 40) | (offset & ((uint64_t(1) << 40) - 1));
}

uint8_t PatternByte(uint32_t seed, uint64_t offset) {
    uint64_t w = PatternWord(seed, offset & ~uint64_t(7));
    return static_cast<uint8_t>(w >> (8 * (offset & 7)));
}

void FillPattern(void *dst, size_t len, uint32_t seed) {
    auto *p = static_cast<uint8_t *>(dst);
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w = PatternWord(seed, i * 8);
        std::memcpy(p + i * 8, &w, 8);
    }
    for (size_t o = words * 8; o < len; ++o) p[o] = PatternByte(seed, o);
}

void FillAntiPattern(void *dst, size_t len, uint32_t seed) {
    FillPattern(dst, len, seed);
    auto *p = static_cast<uint8_t *>(dst);
    for (size_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(~p[i]);
}

std::string CheckPattern(const void *dst, size_t len, uint32_t seed) {
    const auto *p = static_cast<const uint8_t *>(dst);
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w;
        std::memcpy(&w, p + i * 8, 8);
        uint64_t want = PatternWord(seed, i * 8);
        if (w != want) {
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "data mismatch at offset %zu of %zu: expected 0x%016llx, found 0x%016llx "
                          "(looks like seed %llu offset %llu)",
                          i * 8, len, static_cast<unsigned long long>(want), static_cast<unsigned long long>(w),
                          static_cast<unsigned long long>(w >> 40),
                          static_cast<unsigned long long>(w & ((uint64_t(1) << 40) - 1)));
            return buf;
        }
    }
    for (size_t o = words * 8; o < len; ++o)
        if (p[o] != PatternByte(seed, o)) {
            char buf[120];
            std::snprintf(buf, sizeof buf, "data mismatch at offset %zu of %zu: expected 0x%02x, found 0x%02x", o, len,
                          PatternByte(seed, o), p[o]);
            return buf;
        }
    return "";
}

std::string ToHex(const void *data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(len * 2);
    const auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < len; ++i) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

std::vector<uint8_t> FromHex(const std::string &hex) {
    std::vector<uint8_t> out;
    auto v = [](char c) { return c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0'; };
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(v(hex[i]) * 16 + v(hex[i + 1])));
    return out;
}

}  // namespace ndc
