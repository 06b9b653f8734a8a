// TcpPath: the socket side. Bytes in go to the engine until the socket
// would block or the engine stalls (a Send with no receive posted: the rest
// waits in held_); framed bytes out go to the socket until it would block
// (the edge-triggered watch reports when it drains).
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core_log.h"
#include "queue_pair.h"
#include "soft_limits.h"
#include "srq.h"
#include "tcp_path.h"

namespace soft {

uint64_t NowMs();

namespace {
constexpr size_t kPullBudget = 256 * 1024;
}

namespace {
uint64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec);
}
// An application that polled this recently is polling: the progress thread
// leaves the socket to it rather than fight it for the lock (2 cores).
constexpr uint64_t kBusyPollNs = 200 * 1000;
}  // namespace

TcpPath::Event TcpPath::Progress(bool wait) {
    uint64_t now = NowNs();
    if (!wait) app_poll_ns_.store(now, std::memory_order_relaxed);
    else if (now - app_poll_ns_.load(std::memory_order_relaxed) < kBusyPollNs) wait = false;
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    if (wait)
        lock.lock();
    else if (!lock.try_lock())
        return closed_flag_.load(std::memory_order_acquire) ? Event::Closed : Event::None;  // someone else is at it
    bool was_established = engine_.established();
    PumpLocked();
    if (closed_) return Event::Closed;
    return !was_established && engine_.established() ? Event::Established : Event::None;
}

void TcpPath::ReleaseHoldLocked() {
    if (hold_ || engine_.failed()) return;  // CompleteConnect not yet
    if (hold_until_ms_) {
        if (NowMs() < hold_until_ms_) return;
        hold_until_ms_ = 0;
        env_.engine->RemoveTimer();
    }
    if (engine_.transmit_held()) engine_.HoldTransmit(false);
}

void TcpPath::PumpLocked() {
    bool was_established = engine_.established(), was_closed = closed_;
    PumpStreamLocked();
    if (closed_) closed_flag_.store(true, std::memory_order_release);  // before the redispatch reads it
    // The connector learns of these through the socket's watch; if this
    // thread consumed the edge (the application polling), hand it on.
    if ((!was_established && engine_.established()) || (!was_closed && closed_)) env_.engine->Redispatch(fd_);
}

void TcpPath::PumpStreamLocked() {
    ReleaseHoldLocked();
    for (int round = 0; round < 64; ++round) {
        FeedHeldLocked();
        if (!engine_.stalled() && !eof_)
            ReadSocketLocked();
        else if (!eof_)
            CheckHangupLocked();  // not reading: a peer that died must still be noticed
        bool again = false;
        if (engine_.stalled()) {
            if (env_.srq) {
                again = PostSrqReceiveLocked();  // none: the Send waits for one (R048)
            } else {
                // COMPAT: a Send nobody receives fails at its sender
                // (ND_IO_TIMEOUT) after a few seconds and the connection ends.
                uint64_t now = NowMs();
                if (stalled_since_ms_ == 0) stalled_since_ms_ = now;
                if (now - stalled_since_ms_ > kSendTimeoutMs) engine_.FailStalled();
            }
        } else {
            stalled_since_ms_ = 0;
        }
        WriteSocketLocked();
        CheckSilenceLocked();
        CompleteLocked();
        if (!again) break;
    }
    if (eof_ && !closed_) {
        closed_ = true;
        engine_.Abort(false);  // the peer is gone: everything completes ND_CANCELED
        CompleteLocked();
    }
}

void TcpPath::FeedHeldLocked() {
    if (engine_.stalled() && engine_.Resume() == iwarp::RxStatus::Stalled) return;
    while (held_at_ < held_.size() && !engine_.failed()) {
        auto r = engine_.Receive(std::span<const uint8_t>(held_).subspan(held_at_));
        held_at_ += r.consumed;
        if (r.status != iwarp::RxStatus::Ok) break;
    }
    if (held_at_ >= held_.size() || engine_.failed()) {
        held_.clear();
        held_at_ = 0;
    }
}

void TcpPath::ReadSocketLocked() {
    for (;;) {
        ssize_t n = recv(fd_, rx_buf_.data(), rx_buf_.size(), MSG_DONTWAIT);
        if (n == 0) {
            eof_ = true;
            return;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) eof_ = true;  // reset, timed out: the same to us
            return;
        }
        if (silent_since_ms_ != 0) silent_since_ms_ = NowMs();  // it answers
        auto got = std::span<const uint8_t>(rx_buf_.data(), static_cast<size_t>(n));
        auto r = engine_.Receive(got);  // after a failure it discards (we still read, to see EOF)
        if (r.status == iwarp::RxStatus::Stalled) {
            held_.assign(got.begin() + static_cast<ptrdiff_t>(r.consumed), got.end());
            held_at_ = 0;
            return;
        }
        if (static_cast<size_t>(n) < rx_buf_.size()) return;  // drained (the next edge says when to look again)
    }
}

// A peer whose kernel still acknowledges but whose provider no longer
// answers (a stopped process, a wedged host): our fence Reads go
// unanswered. After the TCP timeout with requests waiting for the peer and
// not a byte from it, the connection is over (ND_CANCELED, bounded).
void TcpPath::CheckSilenceLocked() {
    bool waiting = engine_.unconfirmed() > 0 || engine_.outstanding_reads() > 0 || out_at_ < out_.size();
    if (!waiting || engine_.failed() || eof_) {
        silent_since_ms_ = 0;
        return;
    }
    uint64_t now = NowMs();
    if (silent_since_ms_ == 0) silent_since_ms_ = now;
    if (now - silent_since_ms_ > TcpTimeoutMs()) {
        OPENND_SOFT_LOG("the peer has not answered for %u ms: ending the connection", TcpTimeoutMs());
        engine_.Abort(true);
        eof_ = true;
        shutdown(fd_, SHUT_RDWR);  // the watch sees it: the connector reports the disconnect
    }
}

void TcpPath::CheckHangupLocked() {
    pollfd p{fd_, POLLRDHUP, 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) eof_ = true;
}

void TcpPath::WriteSocketLocked() {
    for (;;) {
        if (out_at_ >= out_.size()) {
            out_.clear();
            out_at_ = 0;
            if (!engine_.WantsToSend() || engine_.Pull(&out_, kPullBudget) == 0) return;
        }
        ssize_t n = send(fd_, out_.data() + out_at_, out_.size() - out_at_, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                eof_ = true;  // the connection broke
                out_.clear();
                out_at_ = 0;
            }
            return;
        }
        out_at_ += static_cast<size_t>(n);
    }
}

bool TcpPath::PostSrqReceiveLocked() {
    PostedReceive r;
    if (!env_.srq->Take(&r)) return false;
    std::vector<iwarp::MutableBuffer> sgl;
    for (uint32_t i = 0; i < r.nsge; ++i)
        sgl.push_back({static_cast<uint8_t *>(r.sge[i].Buffer), r.sge[i].BufferLength});
    if (!engine_.PostReceive(next_id_++, sgl)) {
        ND2_RESULT res{ND_CANCELED, 0, env_.qp_context, r.context, Nd2RequestTypeReceive};
        env_.rcq->Push(res);
        return false;
    }
    recvs_.push_back({r.context, true});
    return true;
}

void TcpPath::Release() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    PumpLocked();  // releases the engine, unless the siw window is still open
}

bool TcpPath::established() {
    std::lock_guard<std::mutex> lock(mu_);
    return engine_.established();
}

bool TcpPath::closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
}

void TcpPath::Abort(bool terminate) {
    std::lock_guard<std::mutex> lock(mu_);
    FailLocked(terminate && !closed_);
}

void TcpPath::Shutdown(int timeout_ms) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t until = NowMs() + static_cast<uint64_t>(timeout_ms);
    WriteSocketLocked();
    while (!eof_ && out_at_ < out_.size() && NowMs() < until) {
        pollfd p{fd_, POLLOUT, 0};
        poll(&p, 1, 50);
        WriteSocketLocked();
    }
    shutdown(fd_, SHUT_WR);
}

}  // namespace soft
