// Posting (queue_pair.h): the kit has checked each request; here it takes
// its shadow-ring slots and goes to the device as one or more work
// requests, with ND's flags as verbs' send flags.
#include <arpa/inet.h>

#include <cstring>

#include "opennd/log.h"

#include "queue_pair.h"

namespace opennd::verbs {
namespace {

uint64_t WrId(uint64_t generation, bool receive, uint64_t seq) {
    return (generation << 48) | (receive ? kReceiveBit : 0) | (seq & kSeqMask);
}

unsigned SendFlags(ULONG flags) {
    unsigned f = 0;
    if (!(flags & ND_OP_FLAG_SILENT_SUCCESS)) f |= IBV_SEND_SIGNALED;
    if (flags & ND_OP_FLAG_READ_FENCE) f |= IBV_SEND_FENCE;
    if (flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) f |= IBV_SEND_SOLICITED;
    if (flags & ND_OP_FLAG_INLINE) f |= IBV_SEND_INLINE;
    return f;
}

// The key a failed request's status is told by (Complete).
uint32_t FirstKey(const ND2_SGE *sge, ULONG nsge) { return nsge ? sge[0].MemoryRegionToken : 0; }

ibv_sge *AsIbv(const ND2_SGE *sge) { return reinterpret_cast<ibv_sge *>(const_cast<ND2_SGE *>(sge)); }

}  // namespace

// An inline request may have more SGEs than the device takes (ND sets no
// limit): its bytes are copied into one, which the device copies again.
// Out of line, so the posting paths keep a small frame.
__attribute__((noinline, cold)) ibv_sge *QueuePair::Gather(const ND2_SGE *sge, ULONG nsge, uint64_t total) {
    if (!bounce_) bounce_ = std::make_unique<uint8_t[]>(inline_size_);  // the kit holds `total` to it
    uint8_t *p = bounce_.get();
    for (ULONG i = 0; i < nsge; ++i) {
        std::memcpy(p, sge[i].Buffer, sge[i].BufferLength);
        p += sge[i].BufferLength;
    }
    bounce_sge_ = {reinterpret_cast<uint64_t>(bounce_.get()), static_cast<uint32_t>(total), 0};
    return &bounce_sge_;
}

HRESULT QueuePair::Cancelled(CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type) {
    ND2_RESULT r{ND_CANCELED, 0, context_, ctx, type};
    cq->PushSoftware(r);
    return ND_SUCCESS;
}

HRESULT QueuePair::PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total) {
    std::lock_guard<kit::SpinLock> lock(send_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed) return Cancelled(icq_.get(), ctx, Nd2RequestTypeSend);
    if (!SendRoom()) return ND_NO_MORE_ENTRIES;
    ibv_send_wr &wr = send_wr_;
    wr.sg_list = AsIbv(sge);
    wr.num_sge = static_cast<int>(nsge);
    if ((flags & ND_OP_FLAG_INLINE) && nsge > max_send_sge_) {
        wr.sg_list = Gather(sge, nsge, total);
        wr.num_sge = 1;
    }
    const bool signaled = !(flags & ND_OP_FLAG_SILENT_SUCCESS);
    const uint64_t seq = sq_.Push(
        {ctx, 0, static_cast<ULONG>(total), Nd2RequestTypeSend, signaled, true, 0, FirstKey(sge, nsge), false});
    wr.wr_id = WrId(generation_, false, seq);
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = SendFlags(flags) | Signal(signaled) | Order(false, seq);
    return SendWr(wr, ctx, Nd2RequestTypeSend);
}

// A post that did not return 0 (Posted).
HRESULT QueuePair::PostFailed(int rc, const void *bad, ShadowRing &ring, CompletionQueue *cq, void *ctx,
                              ND2_REQUEST_TYPE type) {
    if (!bad) {
        // Taken, then not announced: siw's user library queues the request
        // and then rings its doorbell, a system call that can fail, and the
        // kernel leaves what it refused at the head of the send queue, where
        // nothing starts it again. The queue pair fails, so it and every
        // request behind it complete (flushed): none is lost or stuck.
        OPENND_LOG(Warn, "ndverbs: qp %u: the device took a request but refused to start it (%d): the queue pair fails",
                   qp_->qp_num, rc);
        FailLocked();
    } else {
        OPENND_LOG(Debug, "ndverbs: qp %u: the device refuses a work request (%d)", qp_->qp_num, rc);
        ring.Unpush(1);
        // The device refused it. Full is ruled out by the ring, so it is
        // most likely a queue pair the device already moved to ERR (siw,
        // when the peer's Terminate comes) before its async event reached
        // us: the request completes ND_CANCELED, as after any failure.
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        if (state_.load() != kFailed && ibv_query_qp(qp_, &attr, IBV_QP_STATE, &init) == 0 &&
            attr.qp_state == IBV_QPS_ERR)
            state_.store(kFailed, std::memory_order_release);
        return state_.load() == kFailed ? Cancelled(cq, ctx, type) : ND_NO_MORE_ENTRIES;
    }
    ring.EndRequest();
    return ND_SUCCESS;
}

HRESULT QueuePair::PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) {
    std::lock_guard<kit::SpinLock> lock(recv_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed) return Cancelled(rcq_.get(), ctx, Nd2RequestTypeReceive);
    if (!rq_.Room(1)) return ND_NO_MORE_ENTRIES;
    ibv_recv_wr wr{};
    wr.sg_list = AsIbv(sge);
    wr.num_sge = static_cast<int>(nsge);
    ibv_sge empty{0, 0, 0};
    if (nsge == 0) {  // a zero-byte receive (Windows behaviour); siw refuses one with no SGE
        wr.sg_list = &empty;
        wr.num_sge = 1;
    }
    wr.wr_id = WrId(generation_, true,
                    rq_.Push({ctx, 0, 0, Nd2RequestTypeReceive, true, true, 0, FirstKey(sge, nsge), false}));
    ibv_recv_wr *bad = nullptr;
    const int rc = ibv_post_recv(qp_, &wr, &bad);
    return Posted(rc, bad, rq_, rcq_.get(), ctx, Nd2RequestTypeReceive);
}

HRESULT QueuePair::PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                            ULONG flags) {
    return PostOneSided(IBV_WR_RDMA_READ, ctx, sge, nsge, total, raddr, rtoken, flags);
}

HRESULT QueuePair::PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr,
                             UINT32 rtoken, ULONG flags) {
    return PostOneSided(IBV_WR_RDMA_WRITE, ctx, sge, nsge, total, raddr, rtoken, flags);
}

// One work request: the kit has held a Read to MaxReadSge SGEs and a
// Write to the initiator's (an inline one with more is copied into one),
// and the transfer to MaxTransferLength, the port's max_msg_sz.
HRESULT QueuePair::PostOneSided(ibv_wr_opcode op, void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total,
                                UINT64 raddr, UINT32 rtoken, ULONG flags) {
    const ND2_REQUEST_TYPE type = op == IBV_WR_RDMA_READ ? Nd2RequestTypeRead : Nd2RequestTypeWrite;
    std::lock_guard<kit::SpinLock> lock(send_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed) return Cancelled(icq_.get(), ctx, type);
    if (!SendRoom()) return ND_NO_MORE_ENTRIES;
    ibv_send_wr &wr = send_wr_;
    wr.sg_list = nsge ? AsIbv(sge) : nullptr;
    wr.num_sge = static_cast<int>(nsge);
    if ((flags & ND_OP_FLAG_INLINE) && nsge > max_send_sge_) {
        wr.sg_list = Gather(sge, nsge, total);
        wr.num_sge = 1;
    }
    const bool signaled = !(flags & ND_OP_FLAG_SILENT_SUCCESS);
    const uint64_t seq = sq_.Push({ctx, 0, static_cast<ULONG>(total), static_cast<uint8_t>(type), signaled, true, 0,
                                   FirstKey(sge, nsge), false});
    wr.wr_id = WrId(generation_, false, seq);
    wr.opcode = op;
    wr.send_flags = SendFlags(flags) | Signal(signaled) | Order(op == IBV_WR_RDMA_READ, seq);
    // A Read after a Read needs no fence where Reads complete in order (siw)
    if (op == IBV_WR_RDMA_READ && !fenced_reads_) wr.send_flags &= ~IBV_SEND_FENCE;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = ntohl(rtoken);  // tokens travel in network byte order (R077)
    return SendWr(wr, ctx, type);
}

// A Bind or Invalidate that took effect (or failed) here: a zero-byte
// Write keeps its completion in the send queue's order.
HRESULT QueuePair::PostMarker(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status) {
    ibv_send_wr wr{};
    const bool signaled = !(flags & ND_OP_FLAG_SILENT_SUCCESS) || FAILED(status);
    const uint64_t seq = sq_.Push({ctx, 0, 0, static_cast<uint8_t>(type), signaled, true, status, 0, true});
    wr.wr_id = WrId(generation_, false, seq);
    wr.opcode = IBV_WR_RDMA_WRITE;  // no SGE, remote address and key 0
    wr.send_flags = Signal(signaled) | ((flags & ND_OP_FLAG_READ_FENCE) ? IBV_SEND_FENCE : 0) | Order(false, seq);
    return SendWr(wr, ctx, type);
}

HRESULT QueuePair::PostBind(void *ctx, Region *region, Window *window, const void *buffer, SIZE_T size, ULONG flags) {
    const uint64_t address = reinterpret_cast<uint64_t>(buffer);
    std::lock_guard<kit::SpinLock> lock(send_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed) return Cancelled(icq_.get(), ctx, Nd2RequestTypeBind);
    if (!SendRoom()) return ND_NO_MORE_ENTRIES;
    ibv_mw *mw = window->mw();
    uint32_t key = 0;
    const HRESULT hr = window->BindTo(region, address, size, (flags & ND_OP_FLAG_ALLOW_WRITE) != 0, [&] {
        if (!mw) return window->Register(address, size, flags, address);
        key = window->NextKey();  // the token, before the bind completes (R081)
        return ND_SUCCESS;
    });
    if (!mw || FAILED(hr)) return PostMarker(Nd2RequestTypeBind, ctx, flags, hr);
    ibv_send_wr wr{};
    const bool signaled = !(flags & ND_OP_FLAG_SILENT_SUCCESS);
    const uint64_t seq = sq_.Push({ctx, 0, 0, Nd2RequestTypeBind, signaled, true, 0, 0, false});
    wr.wr_id = WrId(generation_, false, seq);
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = Signal(signaled) | ((flags & ND_OP_FLAG_READ_FENCE) ? IBV_SEND_FENCE : 0) | Order(false, seq);
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = key;
    wr.bind_mw.bind_info.mr = region->mr();
    wr.bind_mw.bind_info.addr = address;
    wr.bind_mw.bind_info.length = size;
    wr.bind_mw.bind_info.mw_access_flags = ((flags & ND_OP_FLAG_ALLOW_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
                                           ((flags & ND_OP_FLAG_ALLOW_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0);
    const HRESULT posted = SendWr(wr, ctx, Nd2RequestTypeBind);
    if (posted == ND_NO_MORE_ENTRIES) window->UnbindWith([] {});  // not bound after all
    return posted;
}

// A fast registration (IOpenNdQueuePairExt) is a registration at the
// peer's address (ibv_reg_mr_iova) for any window, as an emulated Bind is:
// the device translates, and a device window cannot be bound elsewhere.
HRESULT QueuePair::PostFastRegister(void *ctx, Region *region, Window *window, const void *buffer, SIZE_T size,
                                    UINT64 remote, ULONG flags) {
    const uint64_t address = reinterpret_cast<uint64_t>(buffer);
    if (remote != address && !device_->caps().relocatable_regions) return ND_NOT_SUPPORTED;
    std::lock_guard<kit::SpinLock> lock(send_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed)
        return Cancelled(icq_.get(), ctx, OPENND_REQUEST_TYPE_FAST_REGISTER);
    if (!SendRoom()) return ND_NO_MORE_ENTRIES;
    const HRESULT hr = window->BindTo(region, address, size, (flags & ND_OP_FLAG_ALLOW_WRITE) != 0,
                                      [&] { return window->Register(address, size, flags, remote); });
    return PostMarker(OPENND_REQUEST_TYPE_FAST_REGISTER, ctx, flags, hr);
}

HRESULT QueuePair::PostInvalidate(void *ctx, Window *window, ULONG flags) {
    kit::ComPtr<kit::MemoryRegion> unbound;  // dropped after the lock
    std::lock_guard<kit::SpinLock> lock(send_mu_);
    if (state_.load(std::memory_order_acquire) == kFailed) return Cancelled(icq_.get(), ctx, Nd2RequestTypeInvalidate);
    if (!SendRoom()) return ND_NO_MORE_ENTRIES;
    const bool by_device = window->mw() && !window->registered();
    const bool was_bound = window->UnbindWith([&] { window->Drop(); }, &unbound);
    if (!by_device || !was_bound)
        return PostMarker(Nd2RequestTypeInvalidate, ctx, flags, was_bound ? ND_SUCCESS : ND_INVALID_DEVICE_REQUEST);  // R107
    ibv_send_wr wr{};
    const bool signaled = !(flags & ND_OP_FLAG_SILENT_SUCCESS);
    const uint64_t seq = sq_.Push({ctx, 0, 0, Nd2RequestTypeInvalidate, signaled, true, 0, 0, false});
    wr.wr_id = WrId(generation_, false, seq);
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = Signal(signaled) | ((flags & ND_OP_FLAG_READ_FENCE) ? IBV_SEND_FENCE : 0) | Order(false, seq);
    wr.invalidate_rkey = window->key();
    return SendWr(wr, ctx, Nd2RequestTypeInvalidate);
}

}  // namespace opennd::verbs
