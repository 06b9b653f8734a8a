// fi_rma_bw: libfabric's one-sided (RMA Write / RMA Read) bandwidth between
// two processes on this host, the figure OpenND's write_bw / read_bw are set
// against, and with --op send its message rate (fi_send into posted
// fi_recv), set against send_bw's (Debian 12 ships no fabtests, only
// fi_pingpong). See bench/README.md.
//
// The process forks: the parent is the initiator, the child the target. Each
// opens its own fabric (RDM endpoint, AV, CQ, one registered buffer of --size
// bytes) after the fork, and they swap endpoint names, MR keys and buffer
// addresses over a socketpair. The initiator keeps --window fi_write (fi_read)
// operations in flight; the target only polls its CQ, which is what makes a
// manual-progress provider (tcp;ofi_rxm) move the data (with --op send it
// also keeps 2 x --window receives posted and counts what arrives), until
// the initiator says over the socketpair that it is done and how many Sends
// to expect. Every wait is bounded (--timeout,
// alarm() in both processes); the child dies with the parent and is reaped.
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

namespace {

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

const char *OpName(Op op) { return op == Op::Write ? "write" : op == Op::Read ? "read" : "send"; }

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

// Set before any wait so the handlers and Die() can act on them.
pid_t g_child = -1;
const char *g_role = "fi_rma_bw";
int g_timeout = 30;

void ReapChild() {
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        while (waitpid(g_child, nullptr, 0) < 0 && errno == EINTR) {
        }
        g_child = -1;
    }
}

[[noreturn]] void Die(const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "fi_rma_bw (%s): error: %s\n", g_role, msg);
    std::fflush(stderr);
    ReapChild();
    _exit(1);
}

void OnAlarm(int) {
    char msg[128];
    int n = std::snprintf(msg, sizeof msg, "fi_rma_bw (%s): error: timed out after %d s\n", g_role, g_timeout);
    if (n > 0) (void)!write(2, msg, static_cast<size_t>(n));
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, nullptr, 0);
    }
    _exit(1);
}

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

void CheckFi(int ret, const char *call) {
    if (ret < 0) Die("%s: %s (%d)", call, fi_strerror(-ret), ret);
}
#define FI_CHECK(call) CheckFi(static_cast<int>(call), #call)

// --- socketpair messages ---------------------------------------------------

void WriteAll(int fd, const void *buf, size_t len) {
    const char *p = static_cast<const char *>(buf);
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) Die("socketpair write: %s", std::strerror(errno));
        p += n;
        len -= static_cast<size_t>(n);
    }
}

void ReadAll(int fd, void *buf, size_t len, const char *what) {
    char *p = static_cast<char *>(buf);
    while (len > 0) {
        pollfd pfd{fd, POLLIN, 0};
        int r = poll(&pfd, 1, g_timeout * 1000);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) Die("no %s from the peer in %d s", what, g_timeout);
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) Die("the peer closed the socketpair before sending %s", what);
        if (n < 0) Die("socketpair read: %s", std::strerror(errno));
        p += n;
        len -= static_cast<size_t>(n);
    }
}

// What one side tells the other: its endpoint name, and how to target its buffer.
struct PeerInfo {
    uint64_t name_len = 0;
    uint64_t key = 0;      // the MR key (not FI_MR_RAW)
    uint64_t addr = 0;     // the remote address of the buffer: virtual address or offset 0
    uint64_t raw_len = 0;  // FI_MR_RAW: the raw key's bytes
    uint8_t name[256] = {};
    uint8_t raw[256] = {};
};

// --- one side's fabric -------------------------------------------------------

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

std::string MrModeText(uint64_t m) {
    static const std::pair<uint64_t, const char *> bits[] = {
        {FI_MR_LOCAL, "local"},        {FI_MR_RAW, "raw"},         {FI_MR_VIRT_ADDR, "virt_addr"},
        {FI_MR_ALLOCATED, "allocated"}, {FI_MR_PROV_KEY, "prov_key"}, {FI_MR_MMU_NOTIFY, "mmu_notify"},
        {FI_MR_RMA_EVENT, "rma_event"}, {FI_MR_ENDPOINT, "endpoint"}, {FI_MR_HMEM, "hmem"},
    };
    std::string s;
    for (auto &[bit, name] : bits)
        if (m & bit) s += (s.empty() ? "" : ",") + std::string(name);
    return s.empty() ? "none" : s;
}

fi_info *GetInfo(const std::string &provider, Op op) {
    fi_info *hints = fi_allocinfo();
    if (!hints) Die("fi_allocinfo failed");
    hints->caps = op == Op::Send ? FI_MSG | FI_SEND | FI_RECV : FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = static_cast<int>(kMrModes);
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider.c_str());
    // Socket-based providers bind to loopback: both processes are on this host.
    const bool sockets = provider.find("tcp") != std::string::npos || provider.find("sockets") != std::string::npos;
    if (sockets) hints->addr_format = FI_SOCKADDR_IN;
    fi_info *info = nullptr;
    int ret = fi_getinfo(kApiVersion, sockets ? "127.0.0.1" : nullptr, nullptr, sockets ? FI_SOURCE : 0, hints,
                         &info);
    fi_freeinfo(hints);
    if (ret) {
        if (info) fi_freeinfo(info);
        return nullptr;
    }
    return info;
}

// Opens the fabric, endpoint and registered buffer; the peer is not known yet.
void Open(Fabric &f, const Options &o) {
    f.info = GetInfo(o.provider, o.op);
    if (!f.info && !o.provider_given) f.info = GetInfo("tcp", o.op);  // the default failed: plain tcp (its own RDM)
    if (!f.info)
        Die("fi_getinfo: no provider \"%s\" with FI_EP_RDM and %s%s", o.provider.c_str(),
            o.op == Op::Send ? "FI_MSG" : "FI_RMA", o.provider_given ? "" : " (nor \"tcp\")");
    const fi_info *i = f.info;
    if (i->ep_attr->max_msg_size && o.size > i->ep_attr->max_msg_size)
        Die("--size %zu is over the provider's max_msg_size %zu", o.size, i->ep_attr->max_msg_size);

    FI_CHECK(fi_fabric(i->fabric_attr, &f.fabric, nullptr));
    FI_CHECK(fi_domain(f.fabric, f.info, &f.domain, nullptr));

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = static_cast<size_t>(std::max(o.window * 2, 128));
    FI_CHECK(fi_cq_open(f.domain, &cq_attr, &f.cq, nullptr));

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = 2;
    FI_CHECK(fi_av_open(f.domain, &av_attr, &f.av, nullptr));

    FI_CHECK(fi_endpoint(f.domain, f.info, &f.ep, nullptr));
    FI_CHECK(fi_ep_bind(f.ep, &f.av->fid, 0));
    FI_CHECK(fi_ep_bind(f.ep, &f.cq->fid, FI_TRANSMIT | FI_RECV));
    FI_CHECK(fi_enable(f.ep));

    // A page-aligned buffer whose pages exist (FI_MR_ALLOCATED asks for that).
    f.buf_len = (o.size + 4095) / 4096 * 4096;
    f.buf = static_cast<unsigned char *>(std::aligned_alloc(4096, f.buf_len));
    if (!f.buf) Die("cannot allocate %zu bytes", f.buf_len);
    std::memset(f.buf, 0, f.buf_len);

    // Without FI_MR_PROV_KEY the application picks the key: one per process is enough.
    const uint64_t requested_key = (f.MrMode() & FI_MR_PROV_KEY) ? 0 : 0xfab0 + static_cast<uint64_t>(getpid() & 0xff);
    FI_CHECK(fi_mr_reg(f.domain, f.buf, o.size, kAccess, 0, requested_key, 0, &f.mr, nullptr));
    if (f.MrMode() & FI_MR_ENDPOINT) {
        FI_CHECK(fi_mr_bind(f.mr, &f.ep->fid, 0));
        FI_CHECK(fi_mr_enable(f.mr));
    }
    f.desc = fi_mr_desc(f.mr);  // passed on every operation; required with FI_MR_LOCAL
}

PeerInfo Describe(Fabric &f) {
    PeerInfo me;
    size_t len = sizeof me.name;
    FI_CHECK(fi_getname(&f.ep->fid, me.name, &len));
    me.name_len = len;
    me.addr = (f.MrMode() & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(f.buf) : 0;
    if (f.MrMode() & FI_MR_RAW) {
        size_t key_len = sizeof me.raw;
        uint64_t base = 0;
        FI_CHECK(fi_mr_raw_attr(f.mr, &base, me.raw, &key_len, 0));
        me.raw_len = key_len;
        me.addr = base;
    } else {
        me.key = fi_mr_key(f.mr);
        if (me.key == FI_KEY_NOTAVAIL) Die("fi_mr_key: no key available");
    }
    return me;
}

void Learn(Fabric &f, const PeerInfo &peer) {
    if (peer.name_len == 0 || peer.name_len > sizeof peer.name || peer.raw_len > sizeof peer.raw)
        Die("bad peer description");
    int n = fi_av_insert(f.av, peer.name, 1, &f.peer, 0, nullptr);
    if (n != 1) Die("fi_av_insert: inserted %d of 1 addresses%s%s", n, n < 0 ? ": " : "", n < 0 ? fi_strerror(-n) : "");
    f.peer_addr = peer.addr;
    if (f.MrMode() & FI_MR_RAW) {
        FI_CHECK(fi_mr_map_raw(f.domain, peer.addr, const_cast<uint8_t *>(peer.raw), peer.raw_len, &f.peer_key, 0));
        f.peer_key_mapped = true;
    } else {
        f.peer_key = peer.key;
    }
}

[[noreturn]] void CqError(Fabric &f) {
    fi_cq_err_entry err{};
    ssize_t r = fi_cq_readerr(f.cq, &err, 0);
    if (r < 0) Die("fi_cq_readerr: %s", fi_strerror(static_cast<int>(-r)));
    Die("completion error: %s (%d), provider: %s", fi_strerror(err.err), err.err,
        fi_cq_strerror(f.cq, err.prov_errno, err.err_data, nullptr, 0));
}

// --- target ----------------------------------------------------------------

// Opens the endpoint, fills the buffer with `fill` and trades endpoint
// descriptions with the other process.
void Meet(Fabric &f, int sock, const Options &o, char fill) {
    Open(f, o);
    std::memset(f.buf, fill, o.size);
    PeerInfo me = Describe(f), peer;
    WriteAll(sock, &me, sizeof me);
    ReadAll(sock, &peer, sizeof peer, "its endpoint description");
    Learn(f, peer);
}

// --op send: the receives the target keeps posted (all into the one buffer:
// every Send carries the same bytes).
struct Receives {
    std::vector<fi_context2> ctx;
    std::vector<fi_context2 *> to_post;
    long received = 0;

    Receives(int n) : ctx(static_cast<size_t>(n)) {
        for (auto &c : ctx) to_post.push_back(&c);
    }
    void Post(Fabric &f, const Options &o) {
        while (!to_post.empty()) {
            ssize_t r = fi_recv(f.ep, f.buf, o.size, f.desc, FI_ADDR_UNSPEC, to_post.back());
            if (r == -FI_EAGAIN) return;  // after the next progress
            CheckFi(static_cast<int>(r), "fi_recv");
            to_post.pop_back();
        }
    }
};

int Target(int sock, const Options &o) {
    g_role = "target";
    Fabric f;
    Meet(f, sock, o, kTargetFill);

    // Progress until told to stop (and, for Sends, until every one has
    // arrived). RMA targets see no completions: polling the CQ drives the
    // provider's data progress.
    const bool sends = o.op == Op::Send;
    Receives rx(sends ? 2 * o.window : 0);
    rx.Post(f, o);
    long expected = -1;  // Sends the initiator made, once it says
    fi_cq_entry entries[16];
    Spinner spinner;
    for (unsigned long spins = 0; expected < 0 || rx.received < expected; ++spins) {
        ssize_t r = fi_cq_read(f.cq, entries, 16);
        if (r == -FI_EAVAIL) CqError(f);
        if (r < 0 && r != -FI_EAGAIN) CheckFi(static_cast<int>(r), "fi_cq_read");
        for (ssize_t k = 0; k < r; ++k) {
            if (!sends) Die("a completion at an RMA target");
            rx.to_post.push_back(static_cast<fi_context2 *>(entries[k].op_context));
            ++rx.received;
        }
        if (r > 0 || !rx.to_post.empty()) rx.Post(f, o);
        if (r > 0)
            spinner.Progressed();
        else
            spinner.Idle();
        if ((spins & 63) != 0 || expected >= 0) continue;
        char c;
        ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);
        if (n == 1 && c == kDone) {
            ReadAll(sock, &expected, sizeof expected, "the number of Sends");
            continue;
        }
        if (n == 1) Die("unexpected byte %d from the initiator", c);
        if (n == 0) Die("the initiator closed the socketpair (it failed)");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) Die("recv: %s", std::strerror(errno));
    }
    if (sends && rx.received > 0)
        for (size_t k = 0; k < o.size; ++k)
            if (f.buf[k] != kInitiatorFill) Die("a Send brought byte %zu = 0x%02x, not 0x%02x", k, f.buf[k], kInitiatorFill);
    f.Close();
    WriteAll(sock, &kBye, 1);
    WriteAll(sock, &rx.received, sizeof rx.received);
    return 0;
}

// --- initiator -------------------------------------------------------------

struct Run {
    double seconds = 0;
    std::vector<double> window_seconds;  // time per `window` completions
};

// Posts n operations, `window` at a time, and waits for them all.
Run Pump(Fabric &f, const Options &o, long n, bool timed) {
    struct Slot {
        fi_context2 ctx;
    };
    std::vector<Slot> slots(static_cast<size_t>(o.window));
    std::vector<Slot *> free_slots;
    for (auto &s : slots) free_slots.push_back(&s);
    Run run;
    if (timed) run.window_seconds.reserve(static_cast<size_t>(n / o.window + 1));
    long posted = 0, completed = 0;
    const auto t0 = Clock::now();
    auto last = t0;
    fi_cq_entry entries[16];
    Spinner spinner;
    while (completed < n) {
        while (posted < n && !free_slots.empty()) {
            Slot *s = free_slots.back();
            ssize_t r = o.op == Op::Read    ? fi_read(f.ep, f.buf, o.size, f.desc, f.peer, f.peer_addr, f.peer_key, &s->ctx)
                        : o.op == Op::Write ? fi_write(f.ep, f.buf, o.size, f.desc, f.peer, f.peer_addr, f.peer_key, &s->ctx)
                                            : fi_send(f.ep, f.buf, o.size, f.desc, f.peer, &s->ctx);
            if (r == -FI_EAGAIN) break;  // the provider needs progress first
            CheckFi(static_cast<int>(r), o.op == Op::Read ? "fi_read" : o.op == Op::Write ? "fi_write" : "fi_send");
            free_slots.pop_back();
            ++posted;
        }
        ssize_t r = fi_cq_read(f.cq, entries, 16);
        if (r == -FI_EAGAIN) {
            spinner.Idle();
            continue;
        }
        if (r == -FI_EAVAIL) CqError(f);
        CheckFi(static_cast<int>(r), "fi_cq_read");
        spinner.Progressed();
        for (ssize_t k = 0; k < r; ++k) {
            if (!entries[k].op_context) Die("fi_cq_read: a completion without its operation's context");
            free_slots.push_back(static_cast<Slot *>(entries[k].op_context));
        }
        const long before = completed;
        completed += r;
        const long windows = completed / o.window - before / o.window;  // boundaries this batch crossed
        if (timed && windows > 0) {
            const auto now = Clock::now();
            const double each = std::chrono::duration<double>(now - last).count() / static_cast<double>(windows);
            run.window_seconds.insert(run.window_seconds.end(), static_cast<size_t>(windows), each);
            last = now;
        }
    }
    run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return run;
}

double Median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string JsonString(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out + "\"";
}

int Initiator(int sock, const Options &o) {
    g_role = "initiator";
    Fabric f;
    Meet(f, sock, o, kInitiatorFill);

    const long warmup = std::max(o.iters / 10, 1L);
    Pump(f, o, warmup, false);  // warm-up: connection set-up, first touches
    Run run = Pump(f, o, o.iters, true);
    if (o.op == Op::Read) {  // a completed read has the target's bytes here
        for (size_t k = 0; k < o.size; ++k)
            if (f.buf[k] != kTargetFill) Die("fi_read brought byte %zu = 0x%02x, not 0x%02x", k, f.buf[k], kTargetFill);
    }
    WriteAll(sock, &kDone, 1);
    const long sent = o.op == Op::Send ? warmup + o.iters : 0;
    WriteAll(sock, &sent, sizeof sent);
    char bye = 0;
    ReadAll(sock, &bye, 1, "its goodbye");
    if (bye != kBye) Die("unexpected byte %d from the target", bye);
    long received = -1;
    ReadAll(sock, &received, sizeof received, "its count of Sends");
    if (received != sent) Die("the target received %ld Sends of %ld", received, sent);

    const std::string provider = f.info->fabric_attr->prov_name ? f.info->fabric_attr->prov_name : "?";
    const std::string mr_mode = MrModeText(f.MrMode());
    f.Close();

    const double bytes = static_cast<double>(o.size);
    const double gbps = bytes * static_cast<double>(o.iters) / run.seconds / 1e9;
    std::vector<double> rates;
    for (double s : run.window_seconds) rates.push_back(bytes * o.window / s / 1e9);
    // Fewer than `window` operations: the run is its only sample.
    const double median = rates.empty() ? gbps : Median(rates);
    const double mmsgps = static_cast<double>(o.iters) / run.seconds / 1e6;
    const char *op = OpName(o.op);
    if (o.json) {
        std::printf("{\"tool\":\"fi_rma_bw\",\"provider\":%s,\"op\":\"%s\",\"size\":%zu,\"iters\":%ld,\"window\":%d,"
                    "\"gbps\":%.6g,\"gbps_median\":%.6g,\"mmsgps\":%.6g,\"windows\":%zu,\"seconds\":%.6g,"
                    "\"mr_mode\":%s}\n",
                    JsonString(provider).c_str(), op, o.size, o.iters, o.window, gbps, median, mmsgps, rates.size(),
                    run.seconds, JsonString(mr_mode).c_str());
    } else {
        std::printf("%-14s %-6s %10s %8s %6s %12s %12s %10s\n", "provider", "op", "bytes", "iters", "window",
                    "GB/s overall", "GB/s median", "Mmsg/s");
        std::printf("%-14s %-6s %10zu %8ld %6d %12.3f %12.3f %10.3f\n", provider.c_str(), op, o.size, o.iters, o.window,
                    gbps, median, mmsgps);
    }
    std::fflush(stdout);
    return 0;
}

// --- command line ----------------------------------------------------------

[[noreturn]] void Usage(int status) {
    std::fprintf(status ? stderr : stdout,
                 "usage: fi_rma_bw [--provider tcp;ofi_rxm] [--op write|read|send] [--size BYTES] [--iters N]\n"
                 "                 [--window 32] [--timeout 30] [--json]\n"
                 "libfabric RMA Write/Read bandwidth, or Send message rate, between two forked processes\n"
                 "on this host.\n"
                 "  --provider P   libfabric provider (default \"tcp;ofi_rxm\", falling back to \"tcp\")\n"
                 "  --op OP        write (fi_write), read (fi_read) or send (fi_send into posted\n"
                 "                 fi_recv; also reports messages per second); default write\n"
                 "  --size BYTES   bytes per operation (K, M suffixes); default 1M\n"
                 "  --iters N      timed operations, after N/10 warm-up ones; default 1000\n"
                 "  --window W     operations in flight; default 32\n"
                 "  --timeout S    whole run bound in seconds; default 30\n"
                 "  --json         one JSON object instead of the table\n"
                 "Exit status 0, 1 on a failure (the libfabric call and its error on stderr), 2 for bad usage.\n");
    std::exit(status);
}

long long ParseNumber(const char *s, const char *opt) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || end == s) {
        std::fprintf(stderr, "fi_rma_bw: %s: not a number: %s\n", opt, s);
        Usage(2);
    }
    if (*end == 'k' || *end == 'K') v <<= 10, ++end;
    else if (*end == 'm' || *end == 'M') v <<= 20, ++end;
    else if (*end == 'g' || *end == 'G') v <<= 30, ++end;
    if (*end || v <= 0) {
        std::fprintf(stderr, "fi_rma_bw: %s: want a positive number: %s\n", opt, s);
        Usage(2);
    }
    return v;
}

Options Parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "fi_rma_bw: %s needs a value\n", a.c_str());
                Usage(2);
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") Usage(0);
        else if (a == "--json") o.json = true;
        else if (a == "--provider" || a == "-p") o.provider = value(), o.provider_given = true;
        else if (a == "--op") {
            std::string op = value();
            if (op != "write" && op != "read" && op != "send") {
                std::fprintf(stderr, "fi_rma_bw: --op: write, read or send, not %s\n", op.c_str());
                Usage(2);
            }
            o.op = op == "read" ? Op::Read : op == "write" ? Op::Write : Op::Send;
        } else if (a == "--size") o.size = static_cast<size_t>(ParseNumber(value(), "--size"));
        else if (a == "--iters") o.iters = static_cast<long>(ParseNumber(value(), "--iters"));
        else if (a == "--window") o.window = static_cast<int>(std::min(ParseNumber(value(), "--window"), 4096LL));
        else if (a == "--timeout") o.timeout = static_cast<int>(std::min(ParseNumber(value(), "--timeout"), 86400LL));
        else {
            std::fprintf(stderr, "fi_rma_bw: unknown option %s\n", a.c_str());
            Usage(2);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = Parse(argc, argv);
    g_timeout = o.timeout;
    struct sigaction sa{};
    sa.sa_handler = OnAlarm;
    sigaction(SIGALRM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Die("socketpair: %s", std::strerror(errno));
    std::fflush(nullptr);
    const pid_t parent = getpid();
    // libfabric is opened only after the fork, separately in each process.
    const pid_t child = fork();
    if (child < 0) Die("fork: %s", std::strerror(errno));
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        close(sv[0]);
        alarm(static_cast<unsigned>(o.timeout) + 2);  // the initiator's alarm goes first and says why
        int rc = Target(sv[1], o);
        std::fflush(nullptr);
        _exit(rc);
    }
    g_child = child;
    close(sv[1]);
    alarm(static_cast<unsigned>(o.timeout));
    const int rc = Initiator(sv[0], o);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = -1;
    alarm(0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "fi_rma_bw: the target process %s %d\n",
                     WIFEXITED(status) ? "exited with" : "died of signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    return rc;
}
