// Posting on the TCP path (DataPath, data_path.h): the queue's room, then the
// local SGEs (a request that fails them completes ND_ACCESS_VIOLATION, in
// order with the stream's requests); the queue pair has checked the rest.
#include "memory_objects.h"
#include "progress_engine.h"
#include "tcp_path.h"

namespace soft {

HRESULT TcpPath::PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t) {
    return SendChecked(ctx, sge, nsge, flags, std::nullopt);
}

HRESULT TcpPath::PostSendInvalidate(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t,
                                    UINT32 token) {
    return SendChecked(ctx, sge, nsge, flags, FromWireToken(token));
}

HRESULT TcpPath::SendChecked(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags,
                             std::optional<uint32_t> invalidate) {
    if (initiator_count() >= env_.initiator_depth) return ND_NO_MORE_ENTRIES;
    const bool copy = (flags & ND_OP_FLAG_INLINE) != 0;
    if (!copy && !env_.engine->mrs().LocalSgesValid(sge, nsge, 0, nullptr)) {
        Local(Nd2RequestTypeSend, ctx, flags, ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    Send(ctx, sge, nsge, flags, copy, invalidate);
    return ND_SUCCESS;
}

HRESULT TcpPath::PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                          ULONG flags) {
    if (initiator_count() >= env_.initiator_depth) return ND_NO_MORE_ENTRIES;
    if (!env_.engine->mrs().LocalSgesValid(sge, nsge, kRightLocalWrite | kRightReadSink, nullptr)) {
        Local(Nd2RequestTypeRead, ctx, flags, ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    Read(ctx, sge, nsge, total, raddr, FromWireToken(rtoken), flags);  // ND tokens are in network order, like STags
    return ND_SUCCESS;
}

HRESULT TcpPath::PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t, UINT64 raddr, UINT32 rtoken,
                           ULONG flags) {
    if (initiator_count() >= env_.initiator_depth) return ND_NO_MORE_ENTRIES;
    const bool copy = (flags & ND_OP_FLAG_INLINE) != 0;
    if (!copy && !env_.engine->mrs().LocalSgesValid(sge, nsge, 0, nullptr)) {
        Local(Nd2RequestTypeWrite, ctx, flags, ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    Write(ctx, sge, nsge, raddr, FromWireToken(rtoken), flags, copy);
    return ND_SUCCESS;
}

HRESULT TcpPath::PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) {
    if (receive_count() >= env_.receive_depth) return ND_NO_MORE_ENTRIES;
    PostedReceive r;
    r.Assign(ctx, sge, nsge);
    Receive(r, env_.engine->mrs().LocalSgesValid(r.sge, r.nsge, kRightLocalWrite, nullptr));
    return ND_SUCCESS;
}

// An Invalidate's transfers under way end before it completes (R106): the
// stream's placements are passed (each piece is checked under its lock).
HRESULT TcpPath::PostLocal(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool invalidate, LocalOp op) {
    if (initiator_count() >= env_.initiator_depth) return ND_NO_MORE_ENTRIES;
    const bool connected = env_.state->load(std::memory_order_acquire) == QpState::Connected;
    const HRESULT status = connected ? op() : ND_CANCELED;
    if (invalidate && status == ND_SUCCESS) Quiesce();
    Local(type, ctx, flags, status);  // in order with the stream's requests
    return ND_SUCCESS;
}

}  // namespace soft
