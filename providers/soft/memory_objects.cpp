#include "memory_objects.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "soft_limits.h"
#include "opennd/kit/registry.h"

namespace soft {
namespace kit = opennd::kit;
namespace {

using MrRegistry = kit::Registry<MemoryRegion, IND2MemoryRegion>;
using MwRegistry = kit::Registry<MemoryWindow, IND2MemoryWindow>;

// True if every page of [p, p+len) is mapped in this process.
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

// True if every byte of [p, p+len) lies in mappings this process may write.
// A region with write rights on memory that is not writable would have a
// peer's Write fault us; a NIC's registration refuses it too.
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

}  // namespace

MemoryRegion::MemoryRegion(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file)
    : adapter_(adapter, true), engine_(std::move(engine)), requests_(file) {
    MrRegistry::Add(this);
}

MemoryRegion::~MemoryRegion() {
    MrRegistry::Remove(this);
    if (!token_) return;
    // Released without Deregister (R076): the same barrier, since the
    // application may free the memory as soon as Release returns. (Never
    // under a provider lock: see MemoryWindow::Invalidate.)
    engine_->mrs().Remove(token_);
    engine_->QuiescePlacements();
}

MemoryRegion *MemoryRegion::Find(IUnknown *u) { return MrRegistry::Find(u, IID_IND2MemoryRegion); }

bool MemoryRegion::Current(MrView *view, uint32_t *token) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!token_) return false;
    *view = view_;
    if (token) *token = token_;
    return true;
}

bool MemoryRegion::ReserveWindow(uint64_t address, uint64_t length, bool write) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!token_ || !view_.Covers(address, length)) return false;   // R104
    if (write && !(view_.rights & kRightLocalWrite)) return false;  // R105
    windows_.fetch_add(1);
    return true;
}

HRESULT MemoryRegion::Register(const VOID *buffer, SIZE_T size, ULONG flags, OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_4;
    if (size > kMaxRegistrationSize) return ND_INVALID_PARAMETER;
    if (size == 0) return buffer ? ND_INVALID_BUFFER_SIZE : ND_INVALID_PARAMETER;  // COMPAT
    if (!buffer || !Mapped(buffer, size)) return ND_ACCESS_VIOLATION;
    const bool write = (flags & (ND_MR_FLAG_ALLOW_LOCAL_WRITE | 0x4)) != 0;  // D04: REMOTE_WRITE is 0x5
    if (write && !Writable(buffer, size)) return ND_ACCESS_VIOLATION;
    std::lock_guard<std::mutex> lock(mu_);
    if (token_) return ND_INVALID_DEVICE_STATE;  // one buffer per region (R070)
    MrView v;
    v.address = reinterpret_cast<uint64_t>(buffer);
    v.length = size;
    if (flags & ND_MR_FLAG_ALLOW_LOCAL_WRITE) v.rights |= kRightLocalWrite;
    if (flags & ND_MR_FLAG_ALLOW_REMOTE_READ) v.rights |= kRightRemoteRead;
    if (flags & 0x4) v.rights |= kRightRemoteWrite | kRightLocalWrite;  // D04: REMOTE_WRITE is 0x5
    if (flags & ND_MR_FLAG_RDMA_READ_SINK) v.rights |= kRightReadSink;
    uint32_t token = engine_->mrs().Add(v);
    if (!token) return ND_INSUFFICIENT_RESOURCES;
    token_ = token;
    view_ = v;
    // Done now, reported as pending: what ND applications expect (COMPAT).
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT MemoryRegion::Deregister(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!token_) return ND_INVALID_DEVICE_STATE;
        if (windows_.load() > 0) return ND_DEVICE_BUSY;
        engine_->mrs().Remove(token_);
        token_ = 0;
        view_ = MrView{};
    }
    // As a NIC finishes its DMA before deregistration completes: a placement
    // that checked the old entry is over before the application may free
    // the memory. Outside mu_ (a poster holding a queue pair's lock may ask
    // this region for its view).
    engine_->QuiescePlacements();
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

UINT32 MemoryRegion::GetLocalToken() { return token_.load(std::memory_order_acquire); }

UINT32 MemoryRegion::GetRemoteToken() { return ToWireToken(token_.load(std::memory_order_acquire)); }

MemoryWindow::MemoryWindow(IND2Adapter *adapter, std::shared_ptr<Engine> engine)
    : adapter_(adapter, true), engine_(std::move(engine)) {
    MwRegistry::Add(this);
}

MemoryWindow::~MemoryWindow() {
    MwRegistry::Remove(this);
    Invalidate();
}

MemoryWindow *MemoryWindow::Find(IUnknown *u) { return MwRegistry::Find(u, IID_IND2MemoryWindow); }

HRESULT MemoryWindow::Bind(MemoryRegion *mr, uint64_t address, uint64_t length, uint32_t rights, uint64_t qp_id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (token_) return ND_INVALID_DEVICE_REQUEST;
    // The region may have been deregistered since the poster checked it.
    if (!mr->ReserveWindow(address, length, rights & kRightRemoteWrite)) return ND_ACCESS_VIOLATION;
    MrView v;
    v.rights = rights | kIsWindow;
    v.address = address;
    v.length = length;
    v.qp_id = qp_id;
    uint32_t token = engine_->mrs().Add(v);
    if (!token) {
        mr->WindowUnbound();
        return ND_INSUFFICIENT_RESOURCES;
    }
    token_ = token;
    mr_ = kit::ComPtr<MemoryRegion>(mr, true);
    return ND_SUCCESS;
}

bool MemoryWindow::Invalidate(kit::ComPtr<MemoryRegion> *region) {
    kit::ComPtr<MemoryRegion> mr;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!token_) return false;
        engine_->mrs().Remove(token_);
        token_ = 0;
        mr_->WindowUnbound();
        mr = std::move(mr_);
    }
    if (region) *region = std::move(mr);
    return true;  // else dropped here, outside mu_
}

UINT32 MemoryWindow::GetRemoteToken() {
    std::lock_guard<std::mutex> lock(mu_);
    return ToWireToken(token_);
}

}  // namespace soft
