// Cross-memory attach baselines: process_vm_writev / process_vm_readv from
// the parent straight into / out of the child's memory, one copy in the
// kernel. The child only faults its buffer in and waits.
#include <sys/uio.h>

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

}  // namespace

Result CmaWriteBandwidth(const Options &o, uint64_t size) { return CmaBandwidth(o, size, true); }
Result CmaReadBandwidth(const Options &o, uint64_t size) { return CmaBandwidth(o, size, false); }

}  // namespace opennd::bench
