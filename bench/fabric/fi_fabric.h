// What both processes of fi_rma_bw share: options, the error and timeout
// handling, the socketpair between them and one side's libfabric objects.
#pragma once

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fi_bench {

using Clock = std::chrono::steady_clock;

constexpr unsigned kApiVersion = FI_VERSION(1, 9);
constexpr uint64_t kAccess = FI_REMOTE_WRITE | FI_REMOTE_READ | FI_WRITE | FI_READ;
constexpr uint64_t kMrModes = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT |
                              FI_MR_RAW;
constexpr unsigned char kInitiatorFill = 0x5a;  // what a write carries
constexpr unsigned char kTargetFill = 0xc3;     // what a read fetches
constexpr char kDone = 'D';                     // initiator -> target: stop polling
constexpr char kBye = 'B';                      // target -> initiator: closed, exiting

enum class Op { Write, Read, Send };

inline const char *OpName(Op op) { return op == Op::Write ? "write" : op == Op::Read ? "read" : "send"; }

struct Options {
    std::string provider = "tcp;ofi_rxm";
    bool provider_given = false;
    Op op = Op::Write;
    size_t size = 1 << 20;
    long iters = 1000;
    int window = 32;
    int timeout = 30;
    bool json = false;
};

// Set before any wait so the handlers and Die() can act on them (fi_fabric.cpp).
extern pid_t g_child;
extern const char *g_role;
extern int g_timeout;

// Kills and reaps the target, if any (the initiator, on its way out).
void ReapChild();
// Prints "fi_rma_bw (role): error: ..." to stderr, reaps the child, exits 1.
[[noreturn]] void Die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// SIGALRM: the run took longer than --timeout.
void OnAlarm(int);

// A polite poll loop: spin for up to 50 us without progress, then
// sched_yield() between polls, so that the two processes still make progress
// when they share a core (a yield with nothing else to run costs a syscall).
class Spinner {
public:
    void Progressed() { idle_since_ = {}; }
    void Idle() {
        const auto now = Clock::now();
        if (idle_since_ == Clock::time_point{}) idle_since_ = now;
        else if (now - idle_since_ > std::chrono::microseconds(50)) sched_yield();
    }

private:
    Clock::time_point idle_since_{};
};

void CheckFi(int ret, const char *call);
#define FI_CHECK(call) CheckFi(static_cast<int>(call), #call)

// The socketpair between the two processes: whole buffers, bounded waits.
void WriteAll(int fd, const void *buf, size_t len);
void ReadAll(int fd, void *buf, size_t len, const char *what);

// What one side tells the other: its endpoint name, and how to target its buffer.
struct PeerInfo {
    uint64_t name_len = 0;
    uint64_t key = 0;      // the MR key (not FI_MR_RAW)
    uint64_t addr = 0;     // the remote address of the buffer: virtual address or offset 0
    uint64_t raw_len = 0;  // FI_MR_RAW: the raw key's bytes
    uint8_t name[256] = {};
    uint8_t raw[256] = {};
};

struct Fabric {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
    fid_mr *mr = nullptr;
    void *desc = nullptr;
    unsigned char *buf = nullptr;
    size_t buf_len = 0;
    fi_addr_t peer = FI_ADDR_UNSPEC;
    uint64_t peer_key = 0;
    uint64_t peer_addr = 0;
    bool peer_key_mapped = false;

    uint64_t MrMode() const { return info->domain_attr->mr_mode; }

    void Close() {
        if (peer_key_mapped) fi_mr_unmap_key(domain, peer_key);
        if (mr) fi_close(&mr->fid);
        if (ep) fi_close(&ep->fid);
        if (av) fi_close(&av->fid);
        if (cq) fi_close(&cq->fid);
        if (domain) fi_close(&domain->fid);
        if (fabric) fi_close(&fabric->fid);
        if (info) fi_freeinfo(info);
        std::free(buf);
        *this = Fabric{};
    }
};

std::string MrModeText(uint64_t m);
// Opens the fabric, endpoint and registered buffer; the peer is not known yet.
void Open(Fabric &f, const Options &o);
PeerInfo Describe(Fabric &f);
void Learn(Fabric &f, const PeerInfo &peer);
[[noreturn]] void CqError(Fabric &f);
// Opens the endpoint, fills the buffer with `fill` and trades endpoint
// descriptions with the other process.
void Meet(Fabric &f, int sock, const Options &o, char fill);

}  // namespace fi_bench
