// One-sided requests and memory windows: the queue pair's checks, then the
// data path's posting (ShmPath, TcpPath). Bind and Invalidate are done at
// post time, in order with the path's other requests.
#include "memory_objects.h"
#include "queue_pair.h"
#include "soft_limits.h"

namespace soft {

HRESULT QueuePair::Read(VOID *ctx, const ND2_SGE sge[], ULONG nsge, UINT64 raddr, UINT32 rtoken, ULONG flags) {
    uint64_t total = 0;
    HRESULT hr = opennd::kit::CheckOneSided(limits_, false, sge, nsge, flags, MayPost(), &total);
    if (FAILED(hr)) return hr;
    return OnPath([&](DataPath auto &p) { return p.PostRead(ctx, sge, nsge, total, raddr, rtoken, flags); });
}

HRESULT QueuePair::Write(VOID *ctx, const ND2_SGE sge[], ULONG nsge, UINT64 raddr, UINT32 rtoken, ULONG flags) {
    uint64_t total = 0;
    HRESULT hr = opennd::kit::CheckOneSided(limits_, true, sge, nsge, flags, MayPost(), &total);
    if (FAILED(hr)) return hr;
    return OnPath([&](DataPath auto &p) { return p.PostWrite(ctx, sge, nsge, total, raddr, rtoken, flags); });
}

HRESULT QueuePair::Bind(VOID *ctx, IUnknown *mr_unknown, IUnknown *mw_unknown, const VOID *buffer, SIZE_T size,
                        ULONG flags) {
    if (flags & ~opennd::kit::kBindFlags) return ND_INVALID_PARAMETER_6;
    MemoryRegion *mr = MemoryRegion::Find(mr_unknown);
    if (!mr || mr->engine() != engine_.get()) return ND_INVALID_PARAMETER_2;
    MemoryWindow *mw = MemoryWindow::Find(mw_unknown);
    if (!mw || mw->engine() != engine_.get()) return ND_INVALID_PARAMETER_3;
    if (!MayPost()) return ND_CONNECTION_INVALID;
    opennd::kit::Registration region;
    if (!mr->Current(&region)) return ND_ACCESS_VIOLATION;
    if (!region.Covers(reinterpret_cast<uint64_t>(buffer), size)) return ND_ACCESS_VIOLATION;  // R104
    if ((flags & ND_OP_FLAG_ALLOW_WRITE) && !region.LocalWrite()) return ND_ACCESS_VIOLATION;  // R105
    uint32_t rights = 0;
    if (flags & ND_OP_FLAG_ALLOW_READ) rights |= kRightRemoteRead;
    if (flags & ND_OP_FLAG_ALLOW_WRITE) rights |= kRightRemoteWrite;
    auto bind = [&] { return mw->Bind(mr, reinterpret_cast<uint64_t>(buffer), size, rights, id_); };
    return OnPath(
        [&](DataPath auto &p) { return p.PostLocal(Nd2RequestTypeBind, ctx, flags, false, LocalOp::Of(bind)); });
}

HRESULT QueuePair::Invalidate(VOID *ctx, IUnknown *mw_unknown, ULONG flags) {
    if (flags & ~opennd::kit::kInvalidateFlags) return ND_INVALID_PARAMETER_3;
    MemoryWindow *mw = MemoryWindow::Find(mw_unknown);
    if (!mw || mw->engine() != engine_.get()) return ND_INVALID_PARAMETER_2;
    if (!MayPost()) return ND_CONNECTION_INVALID;
    // The window's region, if this was its last reference, goes after the
    // path's locks are let go (declared first): releasing a region runs the
    // Deregister barrier, which takes every queue pair's locks.
    opennd::kit::ComPtr<MemoryRegion> unbound;
    auto invalidate = [&] { return mw->Invalidate(&unbound) ? ND_SUCCESS : ND_INVALID_DEVICE_REQUEST; };  // R107
    return OnPath([&](DataPath auto &p) {
        return p.PostLocal(Nd2RequestTypeInvalidate, ctx, flags, true, LocalOp::Of(invalidate));
    });
}

}  // namespace soft
