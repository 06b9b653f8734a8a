// Cross-memory attach baselines: process_vm_writev / process_vm_readv from
// the parent straight into / out of the child's memory, one copy in the
// kernel. The child only faults its buffer in and waits, except in the
// Write ping-pong, where it writes back into the parent the same way: the
// floor for any RDMA Write on one host that costs one system call (and so
// for ndperf write_lat over ndsoft's shared-memory path), as one
// process_vm_readv is for a Read.
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "baselines.h"
#include "process.h"

namespace opennd::bench {

namespace {

std::string CmaError(const char *call, int err) {
    std::string e = std::string(call) + " failed: " + std::strerror(err);
    if (err == EPERM)
        return e + " (EPERM). The kernel requires ptrace-attach rights over the child: check "
                   "kernel.yama.ptrace_scope (3 forbids it even for a parent), the seccomp profile of "
                   "this container, or grant CAP_SYS_PTRACE.";
    if (err == ENOSYS)
        return e + " (ENOSYS): the kernel lacks CONFIG_CROSS_MEMORY_ATTACH or a seccomp filter blocks it.";
    return e;
}

Result CmaBandwidth(const Options &o, uint64_t size, bool write) {
    const char *call = write ? "process_vm_writev" : "process_vm_readv";
    Mapping local(size, false);
    std::memset(local.data(), 0x5a, size);
    // Same address in the child after fork; only the child touches it, so
    // its pages are the child's own.
    Mapping remote(size, false);

    Child child(
        [&](ChildSide &side) {
            std::memset(remote.data(), 0xa5, size);
            side.Ready();
            side.WaitStop();
            if (write && (static_cast<unsigned char>(remote.data()[0]) != 0x5a ||
                          static_cast<unsigned char>(remote.data()[size - 1]) != 0x5a))
                throw std::runtime_error("process_vm_writev returned success but the child's buffer did not change");
        },
        ChildGuardSeconds(o));
    child.WaitReady(10);

    auto transfer = [&] {
        std::size_t done = 0;
        while (done < size) {
            iovec l{local.data() + done, size - done}, r{remote.data() + done, size - done};
            ssize_t n = write ? process_vm_writev(child.pid(), &l, 1, &r, 1, 0)
                              : process_vm_readv(child.pid(), &l, 1, &r, 1, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw std::runtime_error(CmaError(call, errno));
            if (n == 0) throw std::runtime_error(std::string(call) + " made no progress");
            done += static_cast<std::size_t>(n);
        }
    };
    Measurement m = Measure(BandwidthConfig(o, size), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) transfer();
    });
    if (!write && (static_cast<unsigned char>(local.data()[0]) != 0xa5 ||
                   static_cast<unsigned char>(local.data()[size - 1]) != 0xa5))
        throw std::runtime_error("process_vm_readv returned success but the data did not arrive");
    child.Finish(2);

    Result r(write ? "cma-write-bw" : "cma-read-bw", "cma", call, size);
    SetBandwidthSamples(r, m, static_cast<double>(size));
    return r;
}

// The whole of [from, +size) into `pid` at `to`, as ND's Write lands: the
// sequence number is in the message's last 8 bytes (aligned), which the
// receiver spins on.
void CmaWrite(pid_t pid, char *from, char *to, uint64_t size) {
    iovec l{from, size}, r{to, size};
    for (;;) {
        ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);
        if (n == static_cast<ssize_t>(size)) return;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(CmaError("process_vm_writev", errno));
        throw std::runtime_error("process_vm_writev stopped short");
    }
}

constexpr uint64_t kStopSeq = ~0ull;
uint64_t *SeqOf(char *msg, uint64_t size) { return reinterpret_cast<uint64_t *>(msg + ((size - 8) & ~uint64_t(7))); }
uint64_t LoadSeq(char *msg, uint64_t size) {
    return std::atomic_ref<uint64_t>(*SeqOf(msg, size)).load(std::memory_order_acquire);
}

}  // namespace

Result CmaWriteBandwidth(const Options &o, uint64_t size) { return CmaBandwidth(o, size, true); }
Result CmaReadBandwidth(const Options &o, uint64_t size) { return CmaBandwidth(o, size, false); }

Result CmaWritePingPong(const Options &o, uint64_t size) {
    if (size < 8) throw std::runtime_error("cma-write-pingpong needs messages of 8 bytes or more");
    // Private after fork: each process's inbox is its own, at one address.
    Mapping inbox(size, false), outbox(size, false);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);  // Yama (ptrace_scope 1): let the child write back; else a no-op
    const pid_t parent = getpid();
    Child child(
        [&](ChildSide &side) {
            std::memset(inbox.data(), 0, size);
            side.Ready();
            for (uint64_t expect = 1;; ++expect) {
                uint64_t v;
                for (uint32_t spins = 0; (v = LoadSeq(inbox.data(), size)) != expect && v != kStopSeq; ++spins)
                    if ((spins & 1023) == 0 && side.deadline().Expired())
                        throw std::runtime_error("no Write from the parent before the child's guard expired");
                if (v == kStopSeq) return;
                *SeqOf(outbox.data(), size) = v;
                CmaWrite(parent, outbox.data(), inbox.data(), size);
            }
        },
        ChildGuardSeconds(o));
    child.WaitReady(10);

    Deadline hard(ReplyGuardSeconds(o));
    uint64_t seq = 0;
    Measurement m = Measure(LatencyConfig(o), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            *SeqOf(outbox.data(), size) = ++seq;
            CmaWrite(child.pid(), outbox.data(), inbox.data(), size);
            for (uint32_t spins = 0; LoadSeq(inbox.data(), size) != seq; ++spins)
                if ((spins & 1023) == 0 && hard.Expired())
                    throw std::runtime_error("the child stopped answering (reply guard expired)");
        }
    });
    *SeqOf(outbox.data(), size) = kStopSeq;
    CmaWrite(child.pid(), outbox.data(), inbox.data(), size);
    child.Finish(2);

    Result r("cma-write-pingpong", "cma", "half round trip of process_vm_writev each way", size);
    SetLatencySamples(r, m, 0.5);
    return r;
}

Result CmaReadLatency(const Options &o, uint64_t size) {
    Mapping local(size, false), remote(size, false);
    Child child(
        [&](ChildSide &side) {
            std::memset(remote.data(), 0xa5, size);
            side.Ready();
            side.WaitStop();
        },
        ChildGuardSeconds(o));
    child.WaitReady(10);
    Measurement m = Measure(LatencyConfig(o), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            iovec l{local.data(), size}, r{remote.data(), size};
            ssize_t got = process_vm_readv(child.pid(), &l, 1, &r, 1, 0);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) throw std::runtime_error(CmaError("process_vm_readv", errno));
            if (got != static_cast<ssize_t>(size)) throw std::runtime_error("process_vm_readv stopped short");
        }
    });
    if (static_cast<unsigned char>(local.data()[size - 1]) != 0xa5)
        throw std::runtime_error("process_vm_readv returned success but the data did not arrive");
    child.Finish(2);

    Result r("cma-read-lat", "cma", "one process_vm_readv", size);
    SetLatencySamples(r, m, 1.0);
    return r;
}

}  // namespace opennd::bench
