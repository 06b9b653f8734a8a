// Memory windows: this adapter's regions and windows for the kit's checks,
// then Bind and Invalidate on the data path (ShmPath, TcpPath), done at post
// time in order with the path's other requests.
#include "memory_objects.h"
#include "opennd/nd_extensions.h"
#include "queue_pair.h"
#include "soft_limits.h"

namespace soft {

MemoryRegion *QueuePair::FindRegion(IUnknown *u) {
    MemoryRegion *mr = MemoryRegion::Find(u);
    return mr && mr->engine() == engine_.get() ? mr : nullptr;  // this adapter's only
}

MemoryWindow *QueuePair::FindWindow(IUnknown *u) {
    MemoryWindow *mw = MemoryWindow::Find(u);
    return mw && mw->engine() == engine_.get() ? mw : nullptr;
}

HRESULT QueuePair::PostBind(void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer, SIZE_T size,
                            ULONG flags) {
    return BindAt(Nd2RequestTypeBind, ctx, mr, mw, buffer, size, reinterpret_cast<uint64_t>(buffer), flags);
}

// A window the peer addresses at `remote` (IOpenNdQueuePairExt).
HRESULT QueuePair::PostFastRegister(void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer, SIZE_T size,
                                    UINT64 remote, ULONG flags) {
    return BindAt(OPENND_REQUEST_TYPE_FAST_REGISTER, ctx, mr, mw, buffer, size, remote, flags);
}

HRESULT QueuePair::BindAt(ND2_REQUEST_TYPE type, void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer,
                          SIZE_T size, uint64_t remote, ULONG flags) {
    uint32_t rights = 0;
    if (flags & ND_OP_FLAG_ALLOW_READ) rights |= kRightRemoteRead;
    if (flags & ND_OP_FLAG_ALLOW_WRITE) rights |= kRightRemoteWrite;
    auto bind = [&] { return mw->Bind(mr, reinterpret_cast<uint64_t>(buffer), size, rights, id_, remote); };
    return OnPath([&](DataPath auto &p) { return p.PostLocal(type, ctx, flags, false, LocalOp::Of(bind)); });
}

HRESULT QueuePair::PostInvalidate(void *ctx, MemoryWindow *mw, ULONG flags) {
    // The window's region, if this was its last reference, goes after the
    // path's locks are let go (declared first): releasing a region runs the
    // Deregister barrier, which takes every queue pair's locks.
    opennd::kit::ComPtr<opennd::kit::MemoryRegion> unbound;
    auto invalidate = [&] { return mw->Invalidate(&unbound) ? ND_SUCCESS : ND_INVALID_DEVICE_REQUEST; };  // R107
    return OnPath([&](DataPath auto &p) {
        return p.PostLocal(Nd2RequestTypeInvalidate, ctx, flags, true, LocalOp::Of(invalidate));
    });
}

}  // namespace soft
