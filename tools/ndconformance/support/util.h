// ndconformance support: time bounds, status names, a small COM pointer, an
// OVERLAPPED with an event, bounded completion of overlapped calls, IP
// addresses and the data pattern. Used by the test process and by the peer
// process alike (no GoogleTest in here).
#pragma once

#include <sched.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/com_ptr.h"
#include "ndspi.h"
#include "opennd/ip_address.h"

namespace ndc {

// ------------------------------------------------------------------ time

inline uint64_t NowMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}
inline uint64_t NowUs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
}

// The bound for one wait (a completion, a reply): --timeout, default 10 s.
uint64_t WaitMs();
void SetWaitMs(uint64_t ms);
// A short bound used to check that nothing more arrives ("no extra
// completion"): 50 ms, scaled with --timeout.
uint64_t QuietMs();

struct Deadline {
    uint64_t end;
    explicit Deadline(uint64_t ms) : end(NowMs() + ms) {}
    bool Expired() const { return NowMs() >= end; }
};

// Polling without burning a core that the peer process needs: spin a
// little, then yield, then sleep in small steps.
class Backoff {
public:
    void Pause();
    void Reset() { n_ = 0; }

private:
    unsigned n_ = 0;
};

void SleepMs(uint64_t ms);

// The interface the fault cases may take down (--fault-link), "" if none.
const std::string &FaultLink();
void SetFaultLink(const std::string &iface);
// Takes the interface down (`ip link set IFACE down`) until Up(), or until
// it is destroyed. ok(): it went down.
class LinkDown {
public:
    explicit LinkDown(const std::string &iface);
    ~LinkDown() { Up(); }
    LinkDown(const LinkDown &) = delete;
    LinkDown &operator=(const LinkDown &) = delete;
    bool ok() const { return ok_; }
    // Brings it back up and waits, bounded, until it and the RDMA ports on
    // it are up again: "" or what went wrong (once; later calls say "").
    std::string Up();

private:
    std::string iface_;
    bool ok_ = false, down_ = false;
};

// A competing busy process while it lives: a child that spins on a core
// (and dies by itself after a minute if we do), for the cases that lost
// completions or clients only on a loaded machine.
class BusyProcess {
public:
    BusyProcess();
    ~BusyProcess();
    BusyProcess(const BusyProcess &) = delete;
    BusyProcess &operator=(const BusyProcess &) = delete;

private:
    int pid_ = -1;
};
// This process's open file descriptors, and its mappings of shared memory
// files (memfd, /dev/shm): what a provider could leak per connection.
size_t OpenFdCount();
size_t SharedMappingCount();

// -------------------------------------------------------------- statuses

// Returned by the bounded waits when nothing happened in time. Not an ND
// status: it names a hang in failure messages.
constexpr HRESULT kHang = static_cast<HRESULT>(0x7E57AB1Eu);

// "ND_SUCCESS (0x00000000)", "HANG (...)", or the hex value.
std::string StatusName(HRESULT hr);

// STATUS_ADDRESS_ALREADY_ASSOCIATED and STATUS_BAD_NETWORK_NAME, which
// COMPAT-NOTES requires for a port in use and for connecting to 0.0.0.0;
// STATUS_CONNECTION_DISCONNECTED, allowed for NotifyDisconnect.
constexpr HRESULT kAddressAlreadyAssociated = static_cast<HRESULT>(0xC0000238u);
constexpr HRESULT kBadNetworkName = static_cast<HRESULT>(0xC00000CCu);
constexpr HRESULT kConnectionDisconnected = static_cast<HRESULT>(0xC000020Cu);

// May `status` be the completion status of a request of this type? The
// ND2_RESULT matrix (§2.5.4) with COMPAT-NOTES applied (a Receive too small
// completes ND_DATA_OVERRUN) and D09 (Bind may complete ND_ACCESS_VIOLATION).
bool StatusAllowedForType(HRESULT status, ND2_REQUEST_TYPE type);
const char *RequestTypeName(int type);

// ----------------------------------------------------------- COM pointer

// The consumer-side helper's (tools/common): move-only; Share() for a
// second reference.
template <class T>
using Ref = opennd::client::ComPtr<T>;

// ------------------------------------------------------------ overlapped

// An OVERLAPPED with its own manual-reset event (or none).
struct Ov : OVERLAPPED {
    HANDLE event = nullptr;
    explicit Ov(bool with_event = true);
    ~Ov();
    Ov(const Ov &) = delete;
    Ov &operator=(const Ov &) = delete;
    // Clears the fields (keeps the event, reset) for reuse.
    void Reuse();
    bool Signaled() const;  // the event is set (without consuming it)
};

// The final status of an overlapped call that returned `hr`: hr itself
// unless it is ND_PENDING; then opennd::client::Await's, for at most `ms`
// (default WaitMs()). If the request does not finish by then, the object's
// requests are cancelled and the completion collected (so nothing completes
// into a dead OVERLAPPED later), and the result is kHang.
HRESULT Finish(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr, uint64_t ms = 0);
// One completion packet from the port within `ms`; false if none.
bool DequeuePacket(HANDLE port, OVERLAPPED_ENTRY *e, DWORD ms);

// ------------------------------------------------------------- addresses

using IpAddress = opennd::net::IpAddress;

IpAddress ParseIp(const std::string &text);  // aborts on a malformed literal
IpAddress WithPort(IpAddress a, uint16_t port);
IpAddress Wildcard(int family, uint16_t port = 0);
std::string IpText(const IpAddress &a, bool with_port = false);
uint16_t PortOf(const IpAddress &a);
// The addresses of a SOCKET_ADDRESS_LIST (those of a known family).
std::vector<IpAddress> AddressListOf(const SOCKET_ADDRESS_LIST *list);
bool Contains(const std::vector<IpAddress> &list, const IpAddress &a);  // same IP, any port
// IND2Connector::GetLocalAddress; its status in *hr.
IpAddress ConnectorLocalAddress(IND2Connector *c, HRESULT *hr);

// ---------------------------------------------------------------- pattern

// Data that catches misplacement: the 8-byte word at offset o (relative to
// the start of the transfer) is (seed << 40) | o, little endian; a partial
// last word is that word's first bytes.
uint64_t PatternWord(uint32_t seed, uint64_t offset);
void FillPattern(void *dst, size_t len, uint32_t seed);
// Fills with the bitwise complement (every byte differs from the pattern).
void FillAntiPattern(void *dst, size_t len, uint32_t seed);
// "" if dst holds the pattern, otherwise where and what (decoding the word
// found, so a misplaced block names the seed and offset it came from).
std::string CheckPattern(const void *dst, size_t len, uint32_t seed);
uint8_t PatternByte(uint32_t seed, uint64_t offset);

// -------------------------------------------------------------- hex text

std::string ToHex(const void *data, size_t len);
std::vector<uint8_t> FromHex(const std::string &hex);

}  // namespace ndc
