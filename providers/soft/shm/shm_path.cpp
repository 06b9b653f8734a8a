// The shared-memory path: attaching to the channel, posting Sends and
// Receives, wake-up flags, the end of a connection and Deregister's barrier.
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "cm_socket.h"
#include "memory_objects.h"
#include "opennd/log.h"
#include "progress_engine.h"
#include "queue_pair.h"
#include "shm_path_inline.h"
#include "soft_clock.h"
#include "soft_limits.h"

namespace soft {

void ShmPath::Attach(Connection *conn) {
    std::lock_guard<QpLock> rx(rx_mu_);  // lock order: rx, then tx
    std::lock_guard<QpLock> tx(tx_mu_);
    conn_ = conn;
    terminate_sent_.store(false);
    producer_ = RingProducer(conn->channel.get(), conn->side);
    consumer_ = RingConsumer(conn->channel.get(), 1 - conn->side);
}

void ShmPath::Close() {
    {
        std::lock_guard<QpLock> tx(tx_mu_);
        FailLocked(ND_CANCELED);
        state_.store(State::Closed);  // (a failure that raced with the queue pair's store left Error)
    }
    FlushReceives();
}

void ShmPath::Fail() {
    {
        std::lock_guard<QpLock> tx(tx_mu_);
        FailLocked(ND_CANCELED);
    }
    FlushReceives();
    TerminatePeer(ND_CANCELED);
}

void ShmPath::TerminatePeer(HRESULT why) {
    if (!conn_) return;
    // Once per connection: a peer that sends Terminate after Terminate and
    // never reads must not fill our socket with answers.
    if (terminate_sent_.exchange(true)) return;
    CmMessage m = NewCmMessage(CmType::Terminate);
    m.status = why;
    CmSend(conn_->cm_fd, m);
}

void ShmPath::PushOpLocked(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status) {
    AddOpLocked(type, ctx, flags, true, status, 0);
    if (FAILED(status) && state() == State::Connected) FailLocked(status);
}

HRESULT ShmPath::PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) {
    {
        std::lock_guard<QpLock> lock(rx_mu_);
        // The connection went to TCP while we waited for the lock (AttachTcp
        // took the early receives under it): this one goes there too.
        if (qp_.OverTcpLocked()) return qp_.PostTcpReceive(ctx, sge, nsge);
        if (receives_.size() >= rdepth_) return ND_NO_MORE_ENTRIES;
        State s = state();
        if (s == State::Error || s == State::Closed) {
            PostedReceive r;
            r.Assign(ctx, sge, nsge);
            CompleteReceive(r, ND_CANCELED, 0, false);
            return ND_SUCCESS;
        }
        receives_.emplace_back().Assign(ctx, sge, nsge);  // filled where it is queued
    }
    ProgressReceive();  // a Send may be waiting for it
    return ND_SUCCESS;
}

bool ShmPath::LocalSgesValid(const ND2_SGE *sge, ULONG nsge, uint32_t need_rights, uint64_t *total, MrMemo *memo) {
    return engine_->mrs().LocalSgesValid(sge, nsge, need_rights, total, memo);
}

bool ShmPath::OwnRangeValid(uint32_t wire_token, uint64_t address, uint64_t length, uint32_t need,
                            uint64_t *where) {
    return engine_->mrs().CheckRemote(FromWireToken(wire_token), address, length, need, id_, where) ==
           RemoteCheck::Ok;
}

void ShmPath::WantWakeups(bool on) {
    engine_wakeups_.store(on, std::memory_order_relaxed);
    std::lock_guard<QpLock> tx(tx_mu_);
    SetWakeFlagLocked();
}

// The peer wakes our progress thread (after it publishes, or consumes what
// we published) while the flag is up: when a Notify waits (the engine is
// armed), and while this QP has work only the progress thread will do if
// the application makes no call: requests waiting for ring space (a large
// Write on the copy path, the application spinning on memory for the
// answer) or Read Responses still to send. Raising it for those kicks the
// progress thread once: the peer may have made room before it saw the flag.
void ShmPath::SetWakeFlagLocked() {
    if (!conn_ || !conn_->channel) return;
    const bool waiting = !backlog_.empty() || responding_.load(std::memory_order_relaxed);
    const uint32_t want = engine_wakeups_.load(std::memory_order_relaxed) || waiting ? 1 : 0;
    std::atomic<uint32_t> &flag = conn_->channel->header()->wake_wanted[conn_->side];
    if (flag.load(std::memory_order_relaxed) == want) return;
    flag.store(want, std::memory_order_seq_cst);
    if (want && waiting) engine_->Kick();
}

void ShmPath::Quiesce(uint64_t until_ms) {
    // Our own placements run under rx_mu_ (receives, Read Responses through
    // the ring) or tx_mu_ (a Read copied in at post time); one at a time.
    // (Never run under a queue pair's lock: a region's last reference is
    // dropped outside them, see MemoryWindow::Invalidate.)
    { std::lock_guard<QpLock> lock(rx_mu_); }
    { std::lock_guard<QpLock> lock(tx_mu_); }
    if (conn_ && conn_->channel) DrainPeerCopies(until_ms);
}

void ShmPath::Leave() {
    if (!conn_ || !conn_->channel) return;
    conn_->channel->header()->closed[conn_->side].store(1, std::memory_order_seq_cst);
    DrainPeerCopies(NowMs() + kQuiesceLimitMs);
}

// The peer's cross-memory copies into our memory: bounded, in case the peer
// is stopped between its check and its copy, or holds the counter up on
// purpose. Past the bound the connection ends: `closed` tells the peer (it
// checks it after announcing a copy), and no barrier waits for it again, so
// a peer cannot make every Deregister take kQuiesceLimitMs. A peer that
// said it cannot reach us (no kCmFlagCanAccessPeer) copies nothing into
// us: its counter is not waited for.
void ShmPath::DrainPeerCopies(uint64_t until) {
    if (peer_stalled_.load(std::memory_order_acquire) || !conn_->peer_can_access_us) return;
    ChannelHeader *h = conn_->channel->header();
    std::atomic<uint32_t> &busy = h->remote_access[1 - conn_->side];
    // First a read-modify-write (see RemoteAccess: it orders our table change
    // before the peer's check), then plain loads until the copies drain.
    for (uint32_t n = busy.fetch_add(0, std::memory_order_seq_cst); n != 0; n = busy.load(std::memory_order_acquire)) {
        if (conn_->peer_pid > 0 && kill(conn_->peer_pid, 0) != 0 && errno == ESRCH) return;  // gone: copies nothing
        if (NowMs() > until) {
            OPENND_LOG(Warn, "ndsoft: the peer (process %d) is still copying into our memory past the barrier's %u ms; "
                            "ending the connection", conn_->peer_pid, kQuiesceLimitMs);
            h->closed[conn_->side].store(1, std::memory_order_seq_cst);
            peer_stalled_.store(true, std::memory_order_release);
            engine_->MarkStalledPeer(conn_->peer_pid);  // and it is not waited for again on a new one
            engine_->Kick();  // its pass ends the connection (Progress)
            return;
        }
        std::this_thread::yield();
    }
}

}  // namespace soft
