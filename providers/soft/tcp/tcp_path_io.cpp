// TcpPath: the socket side. Bytes in go to the engine until the socket
// would block or the engine stalls (a Send with no receive posted: the rest
// waits in held_); framed bytes out go to the socket until it would block
// (the edge-triggered watch reports when it drains).
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "opennd/log.h"
#include "opennd/kit/spin_lock.h"
#include "queue_pair.h"
#include "soft_clock.h"
#include "soft_limits.h"
#include "srq.h"
#include "tcp_path.h"

namespace soft {

namespace {
constexpr size_t kPullBudget = 1024 * 1024;
constexpr size_t kReadBudget = 1024 * 1024;  // see ReadSocketLocked
constexpr uint64_t kBusyPollNs = 200 * 1000;
constexpr uint64_t kWatchNs = 5 * 1000;  // see AppPolling
constexpr uint64_t kTxRetryNs = 10 * 1000;  // see WriteSocketLocked
}  // namespace

TcpPath::Event TcpPath::Progress(bool from_engine, bool may_park) {
    if (!from_engine) {
        app_poll_ns_->store(NowNs(), std::memory_order_relaxed);
    } else if (may_park && !one_sided_last_.load(std::memory_order_relaxed) && AppPolling()) {
        env_.engine->Park(fd_, app_poll_ns_);  // back within the park time, to look again
        return closed_flag_.load(std::memory_order_acquire) ? Event::Closed : Event::None;
    }
    if (!mu_.try_lock()) {
        if (!from_engine) return Event::None;  // the holder is making progress; we poll again
        // Whoever holds the lock makes the pass for us as it lets go (Unlock).
        pass_wanted_.store(1, std::memory_order_seq_cst);
        if (!mu_.try_lock()) return closed_flag_.load(std::memory_order_acquire) ? Event::Closed : Event::None;
        pass_wanted_.store(0, std::memory_order_relaxed);  // it let go meanwhile: ours to make
    }
    if (from_engine) {
        tx_retry_ns_ = 0;  // it may say the socket drained
        rx_empty_ = false;  // or that bytes came
    }
    bool was_established = engine_.established();
    PumpLocked();
    Event e = closed_ ? Event::Closed
                      : (!was_established && engine_.established() ? Event::Established : Event::None);
    Unlock();
    return e;
}

// True if the application is polling this path now: it polled in the last
// kBusyPollNs and polls again within kWatchNs, so it will read the socket
// itself. One that polled and then stopped (to wait on memory a Write
// fills, to sleep, or preempted by this thread) does not, and the progress
// thread does the work at once. Watching costs this thread a few
// microseconds at most, once per park time while the application polls.
bool TcpPath::AppPolling() const {
    const uint64_t last = app_poll_ns_->load(std::memory_order_relaxed);
    const uint64_t now = NowNs();
    if (now - last >= kBusyPollNs) return false;
    for (const uint64_t until = now + kWatchNs; NowNs() < until;) {
        if (app_poll_ns_->load(std::memory_order_relaxed) != last) return true;
        opennd::kit::CpuRelax();
    }
    return false;
}

// Lets go of mu_; if another thread asked for a pass meanwhile (it found the
// lock taken), takes the lock back and makes it. The look at pass_wanted_
// is a read-modify-write (a full barrier): it cannot move before the
// unlock, so of the asker's store-then-try_lock and our unlock-then-look,
// one sees the other.
void TcpPath::Unlock() {
    std::vector<Unbound> let_go;  // destroyed last, with no lock held
    for (;;) {
        if (!unbound_.empty()) {
            std::move(unbound_.begin(), unbound_.end(), std::back_inserter(let_go));
            unbound_.clear();
        }
        mu_.unlock();
        if (pass_wanted_.fetch_add(0, std::memory_order_seq_cst) == 0) return;
        if (!mu_.try_lock()) return;  // its holder will look
        if (pass_wanted_.exchange(0, std::memory_order_acq_rel) != 0) {
            tx_retry_ns_ = 0;  // passes are asked for by the progress thread: the socket may have drained
            rx_empty_ = false;
            PumpLocked();
        }
    }
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

void TcpPath::TransmitLocked() {
    if (closed_ || eof_) return PumpLocked();
    ReleaseHoldLocked();
    WriteSocketLocked();
    CompleteLocked();  // with ORD 0, sent is done
    if (eof_) PumpLocked();  // the send found the connection broken
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
                if (now - stalled_since_ms_ > kSendTimeoutMs) {
                    if (hangup_ms_ != 0)
                        eof_ = true;  // and the peer is gone: the stream ends, all flushed
                    else
                        engine_.FailStalled();
                }
            }
        } else {
            stalled_since_ms_ = 0;
        }
        WriteSocketLocked();
        CheckSilenceLocked();
        CompleteLocked();
        if (!again) break;
    }
    // Our side ended the stream (a malformed segment, a violation): the
    // peer, told by our Terminate, normally closes at once and we read on
    // until it does. One that goes on sending, or never closes, must not
    // hold the connection (and an Accept waiting for its RTR) open: after
    // the TCP timeout our side is shut down.
    if (engine_.failed() && !eof_ && !closed_) {
        const uint64_t now = NowMs();
        if (failed_since_ms_ == 0) {
            failed_since_ms_ = now;
            env_.engine->AddTimer();  // passes keep coming to see the time out
        } else if (now - failed_since_ms_ > silence_limit_ms_) {
            OPENND_LOG(Warn, "ndsoft: the peer has not closed the stream %u ms after it ended: shutting it down",
                            silence_limit_ms_);
            shutdown(fd_, SHUT_RDWR);  // the watch sees it: the connector reports the disconnect
            eof_ = true;
        }
    }
    if (eof_ && !closed_) {
        closed_ = true;
        // Closed in order, and its TCP acknowledged all we sent: what only
        // waited for a confirming Read was taken (a peer that disconnects
        // as soon as our last Send arrives never answers the Read).
        int unacked = -1;
        if (peer_fin_ && !TxPendingLocked() && ioctl(fd_, TIOCOUTQ, &unacked) == 0 && unacked == 0)
            engine_.ConfirmTaken();
        engine_.Abort(false);  // the peer is gone: everything else completes ND_CANCELED
        CompleteLocked();
    }
    if (closed_ && failed_since_ms_ != 0) {
        failed_since_ms_ = 0;
        env_.engine->RemoveTimer();
    }
    if (closed_ && hangup_ms_ != 0) {
        hangup_ms_ = 0;
        env_.engine->RemoveTimer();
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

// With CRC off the engine may name where the next bytes go (the payload of
// a long Write or Read Response): the socket copies them straight there, and
// in the same call the segment's last byte, its trailer and the next header
// into rx_buf_ (on this kind of VM a system call costs ~1 us: one per FPDU,
// not two).
void TcpPath::ReadSocketLocked() {
    constexpr size_t kMaxIov = 16;
    // Found empty, and our own sending is held up too (a stream of Writes
    // or Sends going out): polls look again when they retry the send. The
    // progress thread's readable event still reads at once.
    if (rx_empty_ && tx_retry_ns_ != 0 && TxPendingLocked() && NowNs() < tx_retry_ns_) return;
    // A peer that keeps the socket full must not keep this thread (the
    // progress thread serves every connection of the adapter) or the
    // stream's lock (posting waits for it): past kReadBudget the rest waits
    // for the next pass, which the progress thread is asked to make.
    size_t taken = 0;
    for (;;) {
        if (taken >= kReadBudget) {
            env_.engine->Redispatch(fd_);
            return;
        }
        iwarp::MutableBuffer direct[kMaxIov];
        iovec iov[kMaxIov + 1];
        const size_t n_direct = engine_.DirectBuffers(direct, kMaxIov);
        size_t in_place = 0, n_iov = 0;
        for (; n_iov < n_direct; ++n_iov) {
            iov[n_iov] = iovec{direct[n_iov].data, direct[n_iov].length};
            in_place += direct[n_iov].length;
        }
        const size_t tail = n_direct > 0 ? engine_.ReadHintAfter(in_place, rx_buf_.size())
                                         : engine_.ReadHint(rx_buf_.size());
        if (tail > 0) iov[n_iov++] = iovec{rx_buf_.data(), tail};
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = n_iov;
        ssize_t n = recvmsg(fd_, &m, MSG_DONTWAIT);
        if (n == 0) {
            eof_ = peer_fin_ = true;
            return;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) eof_ = true;  // reset, timed out: the same to us
            rx_empty_ = true;
            return;
        }
        rx_empty_ = false;
        if (silent_since_ms_ != 0) silent_since_ms_ = NowMs();  // it answers
        const auto got = static_cast<size_t>(n);
        taken += got;
        if (in_place > 0) engine_.DirectPlaced(std::min(got, in_place));
        if (got > in_place) {
            auto rest = std::span<const uint8_t>(rx_buf_.data(), got - in_place);
            auto r = engine_.Receive(rest);  // after a failure it discards (we still read, to see EOF)
            if (r.status == iwarp::RxStatus::Stalled) {
                held_.assign(rest.begin() + static_cast<ptrdiff_t>(r.consumed), rest.end());
                held_at_ = 0;
                return;
            }
        }
        if (got < in_place + tail) return;  // drained (the next edge says when to look again)
    }
}

// A peer whose kernel still acknowledges but whose provider no longer
// answers (a stopped process, a wedged host): our fence Reads go
// unanswered. After the TCP timeout with requests waiting for the peer and
// not a byte from it, the connection is over (ND_CANCELED, bounded).
void TcpPath::CheckSilenceLocked() {
    // A peer that keeps sending but stops reading (its window stays shut)
    // answers, so silence alone never ends it: neither does keepalive. The
    // kernel's TCP_USER_TIMEOUT covers a zero window on recent kernels; this
    // does not depend on that. (It also ends a peer that stops reading
    // because its engine waits on an empty SRQ for longer than the timeout,
    // as that kernel timeout would.)
    auto blocked_too_long = [&] {
        return tx_blocked_since_ms_ != 0 && TxPendingLocked() && !engine_.failed() && !eof_ &&
               NowMs() - tx_blocked_since_ms_ > silence_limit_ms_;
    };
    if (blocked_too_long()) {
        tx_retry_ns_ = 0;  // one more try first: a socket that has just drained is not given up
        WriteSocketLocked();
        if (blocked_too_long()) {
            OPENND_LOG(Warn, "ndsoft: the peer has read nothing for %u ms: ending the connection", silence_limit_ms_);
            return GiveUpLocked();
        }
    }
    bool waiting = engine_.unconfirmed() > 0 || engine_.outstanding_reads() > 0 || TxPendingLocked();
    if (!waiting || engine_.failed() || eof_) {
        silent_since_ms_ = 0;
        return;
    }
    uint64_t now = NowMs();
    if (silent_since_ms_ == 0) silent_since_ms_ = now;
    if (now - silent_since_ms_ > silence_limit_ms_) {
        OPENND_LOG(Warn, "ndsoft: the peer has not answered for %u ms: ending the connection", silence_limit_ms_);
        GiveUpLocked();
    }
}

// Everything outstanding completes ND_CANCELED and the stream is shut; the
// watch sees it, and the connector reports the disconnect.
void TcpPath::GiveUpLocked() {
    engine_.Abort(true);
    eof_ = true;
    shutdown(fd_, SHUT_RDWR);
}

// Not reading (a Send of the peer's waits for a receive): a peer that died
// must still be noticed. But a peer that ended the stream after that Send
// may have seen it complete (it went out whole): its bytes, and any after
// it, are delivered into the receives posted here, and only then is the end
// read (COMPAT: nothing the sender saw complete is flushed). Bounded as a
// Send nobody receives is, an SRQ's too: the peer is not coming back.
void TcpPath::CheckHangupLocked() {
    if (hangup_ms_ == 0) {
        pollfd p{fd_, POLLRDHUP, 0};
        if (poll(&p, 1, 0) != 1 || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return;
        hangup_ms_ = NowMs();
        env_.engine->AddTimer();  // passes keep coming to see the time out
    }
    if (NowMs() - hangup_ms_ > kSendTimeoutMs) eof_ = true;
}

void TcpPath::WriteSocketLocked() {
    constexpr size_t kMaxIov = 64;
    // A full socket drains at a few GB/s: an application polling in a loop
    // need not ask it again every pass (each refusal is a system call that
    // also contends for the socket with the peer's acknowledgements).
    if (tx_retry_ns_ != 0 && TxPendingLocked() && NowNs() < tx_retry_ns_) return;
    tx_retry_ns_ = 0;
    for (;;) {
        if (!TxPendingLocked()) {
            own_.clear();
            tx_.clear();
            tx_at_ = tx_off_ = 0;
            if (!engine_.WantsToSend() || engine_.PullGather(&own_, &tx_, kPullBudget) == 0) return;
        }
        iovec iov[kMaxIov];
        size_t n_iov = 0;
        for (size_t i = tx_at_; i < tx_.size() && n_iov < kMaxIov; ++i) {
            const iwarp::Engine::TxPiece &p = tx_[i];
            const uint8_t *base = p.data ? p.data : own_.data() + p.offset;
            size_t skip = i == tx_at_ ? tx_off_ : 0;
            iov[n_iov++] = iovec{const_cast<uint8_t *>(base + skip), p.length - skip};
        }
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = n_iov;
        ssize_t n = sendmsg(fd_, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                tx_retry_ns_ = NowNs() + kTxRetryNs;
                if (tx_blocked_since_ms_ == 0) tx_blocked_since_ms_ = NowMs();  // see CheckSilenceLocked
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                eof_ = true;  // the connection broke
                own_.clear();
                tx_.clear();
                tx_at_ = tx_off_ = 0;
            }
            return;
        }
        tx_blocked_since_ms_ = 0;  // the peer reads
        size_t offered = 0;
        for (size_t i = 0; i < n_iov; ++i) offered += iov[i].iov_len;
        // Taken in part: the socket is full, and asking again now would only
        // be refused.
        if (static_cast<size_t>(n) < offered) tx_retry_ns_ = NowNs() + kTxRetryNs;
        for (auto left = static_cast<size_t>(n); left > 0;) {  // advance past n bytes
            size_t k = std::min(left, tx_[tx_at_].length - tx_off_);
            left -= k;
            tx_off_ += k;
            if (tx_off_ == tx_[tx_at_].length) {
                ++tx_at_;
                tx_off_ = 0;
            }
        }
        if (tx_retry_ns_ != 0) return;  // (a short send arms the writability edge as EAGAIN does)
    }
}

void TcpPath::OwnPendingLocked() {
    for (size_t i = tx_at_; i < tx_.size(); ++i) {
        iwarp::Engine::TxPiece &p = tx_[i];
        if (!p.data) continue;
        size_t at = own_.size();
        own_.insert(own_.end(), p.data, p.data + p.length);
        p = {at, nullptr, p.length};
    }
}

bool TcpPath::PostSrqReceiveLocked() {
    PostedReceive r;
    if (!env_.srq->Take(&r)) return false;
    // Checked as the QP's own receives are at post time (a zero-byte Send
    // into unregistered buffers fails ND_ACCESS_VIOLATION like any other).
    return PostReceiveLocked(r, env_.engine->mrs().LocalSgesValid(r.sge, r.nsge, kRightLocalWrite));
}

void TcpPath::Release() {
    Hold hold(*this);
    hold_ = false;
    PumpLocked();  // releases the engine, unless the siw window is still open
}

bool TcpPath::established() {
    Hold hold(*this);
    return engine_.established();
}

bool TcpPath::closed() {
    Hold hold(*this);
    return closed_;
}

void TcpPath::Abort(bool terminate) {
    Hold hold(*this);
    if (!terminate) {
        // The queue pair is closing: nothing more goes out, so what is
        // unsent is dropped, not copied. (A Read source it names may be gone
        // already: a closing queue pair has left the Deregister barrier's list.)
        own_.clear();
        tx_.clear();
        tx_at_ = tx_off_ = 0;
    }
    FailLocked(terminate && !closed_);
}

void TcpPath::Shutdown(int timeout_ms) {
    Hold hold(*this);
    uint64_t until = NowMs() + static_cast<uint64_t>(timeout_ms);
    // Silent operations still unconfirmed are confirmed first (bounded), so
    // a disconnect does not flush what the peer took.
    if (engine_.unconfirmed() > 0) engine_.RequestConfirmation();
    PumpLocked();
    while (!eof_ && !closed_ && (TxPendingLocked() || engine_.unconfirmed() > 0) && NowMs() < until) {
        pollfd p{fd_, static_cast<short>(POLLIN | (TxPendingLocked() ? POLLOUT : 0)), 0};
        poll(&p, 1, 50);
        PumpLocked();
    }
    EndsSoon(fd_);  // the TIME_WAIT this may leave does not hold the port
    shutdown(fd_, SHUT_WR);
}

}  // namespace soft
