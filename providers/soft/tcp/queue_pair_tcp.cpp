// Queue pair over TCP: attaching the iWARP stream and posting to it. The
// checks every transport shares (flags, SGE counts, sizes, states, local
// tokens) stay in queue_pair.cpp and queue_pair_rdma.cpp.
#include "memory_objects.h"
#include "queue_pair.h"
#include "srq.h"

namespace soft {

void QueuePair::AttachTcp(std::shared_ptr<Connection> conn, const iwarp::Negotiated &negotiated,
                          std::vector<uint8_t> after, bool hold) {
    TcpPath::Env env{engine_.get(), id_, context_, rcq_.get(), icq_.get(), srq_, idepth_};
    int fd = conn->tcp->fd;
    conn->tcp->abortive_close = true;
    RingQueue<PostedReceive> early;
    {
        std::lock_guard<QpLock> rx(rx_mu_);  // lock order: rx, then tx
        std::lock_guard<QpLock> tx(tx_mu_);
        conn_ = std::move(conn);
        tcp_ = std::make_unique<TcpPath>(env, fd, negotiated, std::move(after), hold, conn_->tcp->hold_ms);
        std::swap(early, receives_);  // posted before the connection: they go to the stream, in order
        early.ForEach([&](const PostedReceive &r) {
            tcp_->Receive(r, LocalSgesValid(r.sge, r.nsge, kRightLocalWrite, nullptr));
        });
    }
    state_.store(State::Attached, std::memory_order_release);
    tcp_->Progress(true);
}

TcpPath::Event QueuePair::TcpProgress() { return tcp_ ? tcp_->Progress(true, true) : TcpPath::Event::None; }

void QueuePair::TcpRelease() {
    if (tcp_) tcp_->Release();
}

bool QueuePair::TcpEstablished() { return tcp_ && tcp_->established(); }

void QueuePair::TcpShutdown() {
    if (tcp_) tcp_->Shutdown(1000);
}

HRESULT QueuePair::TcpSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags) {
    if (tcp_->initiator_count() >= idepth_) return ND_NO_MORE_ENTRIES;
    bool copy = (flags & ND_OP_FLAG_INLINE) != 0;
    if (!copy && !LocalSgesValid(sge, nsge, 0, nullptr)) {
        tcp_->Local(Nd2RequestTypeSend, ctx, flags, ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    tcp_->Send(ctx, sge, nsge, flags, copy);
    return ND_SUCCESS;
}

HRESULT QueuePair::TcpOneSided(bool write, void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr,
                               UINT32 rtoken, ULONG flags) {
    if (tcp_->initiator_count() >= idepth_) return ND_NO_MORE_ENTRIES;
    ND2_REQUEST_TYPE type = write ? Nd2RequestTypeWrite : Nd2RequestTypeRead;
    bool copy = write && (flags & ND_OP_FLAG_INLINE);
    if (!copy && !LocalSgesValid(sge, nsge, write ? 0 : (kRightLocalWrite | kRightReadSink), nullptr)) {
        tcp_->Local(type, ctx, flags, ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    uint32_t stag = FromWireToken(rtoken);  // ND tokens are in network order, like the STag on the wire
    if (write)
        tcp_->Write(ctx, sge, nsge, raddr, stag, flags, copy);
    else
        tcp_->Read(ctx, sge, nsge, total, raddr, stag, flags);
    return ND_SUCCESS;
}

HRESULT QueuePair::TcpReceive(const PostedReceive &r) {
    if (tcp_->receive_count() >= rdepth_) return ND_NO_MORE_ENTRIES;
    tcp_->Receive(r, LocalSgesValid(r.sge, r.nsge, kRightLocalWrite, nullptr));
    return ND_SUCCESS;
}

}  // namespace soft
