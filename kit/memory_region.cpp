// The memory region's shell (memory_region.h) and the checks of the memory
// a region names.
#include "opennd/kit/memory_region.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

namespace opennd::kit {
namespace {

// PROCMAP_QUERY (Linux 6.11, <linux/fs.h>): one mapping of /proc/self/maps
// by address, without reading the text of them all. Declared here: the
// ABI is fixed, Debian 12's headers predate it.
struct ProcmapQuery {
    uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = 0xC0686611ul;  // _IOWR('f', 17, struct procmap_query)
constexpr uint64_t kProcmapWritable = 0x02;

// The same from the text, where the kernel has no PROCMAP_QUERY (before
// 6.11: about 25 us a call, against 2 us).
bool WritableFromText(int fd, uintptr_t at, uintptr_t end) {
    std::string text;
    char buf[8192];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    for (size_t line = 0; line < text.size() && at < end;) {  // in address order
        size_t next = text.find('\n', line);
        if (next == std::string::npos) next = text.size();
        unsigned long lo = 0, hi = 0;
        char perms[5] = {};
        if (std::sscanf(text.c_str() + line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= at && at < hi) {
            if (perms[1] != 'w') return false;
            at = hi;  // the next mapping must go on from here
        }
        line = next + 1;
    }
    return at >= end;
}

}  // namespace

bool CopyFromApplication(void *dst, const void *src, size_t len) {
    if (len == 0) return true;
    if (!src) return false;
    // Read through the kernel, which reports an unreadable buffer as
    // EFAULT instead of faulting this process.
    iovec local{dst, len}, remote{const_cast<void *>(src), len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

bool Mapped(const void *p, size_t len) {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    uintptr_t start = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    uintptr_t end = reinterpret_cast<uintptr_t>(p) + len;
    if (end < reinterpret_cast<uintptr_t>(p)) return false;  // wraps
    std::vector<unsigned char> vec(16384);
    for (uintptr_t at = start; at < end;) {
        size_t chunk = std::min<size_t>(end - at, vec.size() * page);
        if (mincore(reinterpret_cast<void *>(at), chunk, vec.data()) != 0) return false;
        at += chunk;
    }
    return true;
}

bool Writable(const void *p, size_t len) {
    uintptr_t at = reinterpret_cast<uintptr_t>(p);
    const uintptr_t end = at + len;
    // One descriptor kept for the queries (opening it costs more than they
    // do); a fork's child, whose descriptor names its parent, opens its own.
    static std::mutex mu;
    static int maps = -1;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mu);
    if (owner != getpid()) {
        if (maps >= 0) close(maps);
        maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        owner = getpid();
    }
    if (maps < 0) return true;  // no /proc (a bare container): unchecked, as before, rather than no region at all
    while (at < end) {
        ProcmapQuery q{};
        q.size = sizeof q;
        q.query_addr = at;
        if (ioctl(maps, kProcmapQuery, &q) != 0) {
            if (errno == ENOENT) return false;  // nothing mapped there
            int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
            if (fd < 0) return true;  // as above
            bool ok = WritableFromText(fd, at, end);
            close(fd);
            return ok;
        }
        if (!(q.vma_flags & kProcmapWritable) || q.vma_start > at) return false;
        at = q.vma_end;
    }
    return true;
}


bool MemoryRegion::Current(Registration *r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!registered_) return false;
    *r = registration_;
    return true;
}

bool MemoryRegion::ReserveWindow(uint64_t address, uint64_t length, bool write) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!registered_ || !registration_.Covers(address, length)) return false;  // R104
    if (write && !registration_.LocalWrite()) return false;                     // R105
    windows_.fetch_add(1, std::memory_order_acq_rel);
    return true;
}

HRESULT MemoryRegion::Register(const VOID *buffer, SIZE_T size, ULONG flags, OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_4;
    if (size > max_size_) return ND_INVALID_PARAMETER;
    if (size == 0) return buffer ? ND_INVALID_BUFFER_SIZE : ND_INVALID_PARAMETER;  // COMPAT
    if (!buffer || !Mapped(buffer, size)) return ND_ACCESS_VIOLATION;
    Registration r;
    r.address = reinterpret_cast<uint64_t>(buffer);
    r.length = size;
    r.flags = flags;
    if (r.LocalWrite() && !Writable(buffer, size)) return ND_ACCESS_VIOLATION;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (registered_) return ND_INVALID_DEVICE_STATE;  // one buffer per region (R070)
        HRESULT hr = DoRegister(r);
        if (FAILED(hr)) return hr;
        registered_ = true;
        registration_ = r;
    }
    if (CompletesInline(r)) return ND_SUCCESS;
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT MemoryRegion::Deregister(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!registered_) return ND_INVALID_DEVICE_STATE;
        if (windows_.load(std::memory_order_acquire) > 0) return ND_DEVICE_BUSY;
        DoDeregister();
        registered_ = false;
        registration_ = Registration{};
    }
    // As a NIC finishes its DMA before deregistration completes. Outside
    // the lock (a poster holding a queue pair's lock may ask for Current).
    AfterDeregister();
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

}  // namespace opennd::kit
