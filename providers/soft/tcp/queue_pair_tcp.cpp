// Queue pair over TCP: attaching the iWARP stream, and what the connector
// asks of it. Posting is TcpPath's (tcp_path_post.cpp).
#include "memory_objects.h"
#include "queue_pair.h"
#include "srq.h"

namespace soft {

void QueuePair::AttachTcp(std::shared_ptr<Connection> conn, const iwarp::Negotiated &negotiated,
                          std::vector<uint8_t> after, bool hold) {
    int fd = conn->tcp->fd;
    conn->tcp->abortive_close = true;
    {
        // Receives posted before the connection go to the stream, in order;
        // one posted while we hold the lock finds tcp_ set (ShmPath::PostReceive).
        std::lock_guard<QpLock> rx(shm_.rx_lock());
        conn_ = std::move(conn);
        tcp_ = std::make_unique<TcpPath>(Env(), fd, negotiated, std::move(after), hold, conn_->tcp->hold_ms);
        RingQueue<PostedReceive> early = shm_.TakeReceivesLocked();
        early.ForEach([&](const PostedReceive &r) {
            tcp_->Receive(r, engine_->mrs().LocalSgesValid(r.sge, r.nsge, kRightLocalWrite, nullptr));
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

}  // namespace soft
