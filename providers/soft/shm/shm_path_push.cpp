// A large Send copied from both ends (wire.h, PushRequest): the receiver
// pulls the first part with process_vm_readv while the sender, asked
// through the channel, writes the rest with process_vm_writev. One core
// copies about 12 GB/s here; two copying halves at once, about 25. The
// receiver asks only when each side can reach the other by cross-memory
// attach, and takes the rest itself whenever the sender has not started.
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "cma_move.h"
#include "opennd/log.h"
#include "queue_pair.h"
#include "soft_clock.h"
#include "soft_limits.h"
#include "opennd/params.h"

namespace soft {

namespace {

// OPENND_SOFT_PUSH=0: receivers never ask (one pull per Send, for comparison).
bool PushEnabled() {
    static const bool on = [] {
        const char *s = opennd::ParamText("OPENND_SOFT_PUSH");
        return !(s && s[0] == '0');
    }();
    return on;
}

// OPENND_SOFT_PUSH_DELAY_US (tests): a sender that takes a request waits
// this long before it copies, as a descheduled one would.
int PushDelayUs() {
    static const int us = [] {
        return static_cast<int>(std::clamp(opennd::ParamLong("OPENND_SOFT_PUSH_DELAY_US", 0), 0L, 1000000L));
    }();
    return us;
}

bool Pull(pid_t pid, const iovec *local, int nl, const iovec *remote, int nr, uint64_t from, uint64_t to) {
    iovec l[kMaxPushIov], r[64];
    int a = SliceIov(local, nl, from, to, l), b = SliceIov(remote, nr, from, to, r);
    return MoveAll(pid, l, a, r, b, false) == 0;
}

}  // namespace

bool ShmPath::PullSend(const iovec *local, int nl, const iovec *remote, int nr, uint64_t length, uint64_t pos) {
    const pid_t pid = conn_->peer_pid;
    // The sender writes into us: it must be able to reach us, as we it.
    const bool ask = length >= kPushMin && PushEnabled() && conn_->can_access_peer && conn_->peer_can_access_us &&
                     nl <= int(kMaxPushIov) && !peer_stalled_.load(std::memory_order_relaxed);
    if (!ask) return Pull(pid, local, nl, remote, nr, 0, length);
    const uint64_t first = (length / 2) & ~uint64_t(4095);
    PushRequest &req = conn_->channel->header()->push[conn_->side];
    iovec rest[kMaxPushIov];
    int n = SliceIov(local, nl, first, length, rest);
    for (int i = 0; i < n; ++i) req.iov[i] = PushIov{reinterpret_cast<uint64_t>(rest[i].iov_base), rest[i].iov_len};
    req.niov = static_cast<uint32_t>(n);
    req.send_pos = pos;
    req.offset = first;
    req.length = length - first;
    req.state.store(kPushPending, std::memory_order_release);  // the fields before it
    bool ok = Pull(pid, local, nl, remote, nr, 0, first);
    uint32_t seen = kPushPending;
    if (req.state.compare_exchange_strong(seen, kPushCancelled, std::memory_order_acq_rel))
        return Pull(pid, local, nl, remote, nr, first, length) && ok;  // the sender never started
    // Claimed: the sender is copying now. Bounded, as DrainPeerCopies: a
    // sender stopped mid-copy ends the connection.
    const uint64_t until = NowMs() + kQuiesceLimitMs;
    while ((seen = req.state.load(std::memory_order_acquire)) == kPushClaimed) {
        if (kill(pid, 0) != 0 && errno == ESRCH) return false;
        if (NowMs() > until) {
            OPENND_LOG(Warn, "ndsoft: the peer (process %d) did not finish the part of a Send it took on in %u ms; ending the "
                            "connection", pid, kQuiesceLimitMs);
            conn_->channel->header()->closed[conn_->side].store(1, std::memory_order_seq_cst);
            peer_stalled_.store(true, std::memory_order_release);
            engine_->MarkStalledPeer(pid);
            engine_->Kick();
            return false;
        }
        std::this_thread::yield();
    }
    if (seen == kPushDone) return ok;
    return Pull(pid, local, nl, remote, nr, first, length) && ok;  // it could not: the rest is ours
}

void ShmPath::ServePushRequest() {
    State s = state();
    if (s != State::Attached && s != State::Connected) return;
    // conn_ is set before the state leaves Idle (release/acquire on state_).
    if (!conn_->channel) return;
    PushRequest &req = conn_->channel->header()->push[1 - conn_->side];
    if (req.state.load(std::memory_order_relaxed) != kPushPending) return;  // the common case: one load
    uint32_t seen = kPushPending;
    if (!req.state.compare_exchange_strong(seen, kPushClaimed, std::memory_order_acq_rel)) return;
    // Read once: the peer can rewrite the request at any time.
    const uint64_t pos = req.send_pos, offset = req.offset, length = req.length;
    const uint32_t niov = req.niov;
    PushIov want[kMaxPushIov];
    if (niov <= kMaxPushIov) CopyOnce(want, req.iov, niov * sizeof(PushIov));
    if (int us = PushDelayUs()) std::this_thread::sleep_for(std::chrono::microseconds(us));
    uint32_t result = kPushFailed;
    {
        // Held through the copy: the Send cannot complete (a flush) and free
        // its buffers for reuse while we read them.
        std::lock_guard<QpLock> lock(tx_mu_);
        Op *op = nullptr;
        for (Op &o : ops_)
            if (o.type == Nd2RequestTypeSend && o.in_ring && !o.done && o.pos == pos && !o.sink.empty()) {
                op = &o;
                break;
            }
        uint64_t total = 0, asked = 0;
        if (op)
            for (const ND2_SGE &g : op->sink) total += g.BufferLength;
        bool sane = op && state() == State::Connected && niov >= 1 && niov <= kMaxPushIov && length > 0 &&
                    offset < total && length <= total - offset;
        iovec dst[kMaxPushIov];
        for (uint32_t i = 0; sane && i < niov; ++i) {
            sane = want[i].length > 0 && want[i].length <= length;
            asked += want[i].length;
            dst[i] = iovec{reinterpret_cast<void *>(want[i].address), static_cast<size_t>(want[i].length)};
        }
        if (sane && asked == length) {
            iovec whole[kMaxPushIov * 4], src[kMaxPushIov * 4];
            int n = 0;
            for (const ND2_SGE &g : op->sink)
                if (g.BufferLength && n < int(kMaxPushIov * 4)) whole[n++] = iovec{g.Buffer, g.BufferLength};
            int k = SliceIov(whole, n, offset, offset + length, src);
            if (MoveAll(conn_->peer_pid, src, k, dst, static_cast<int>(niov), true) == 0) result = kPushDone;
            // One copy per Send: a receiver asking again and again for the
            // same one would have us copy it until it timed out.
            op->sink.clear();
        }
    }
    req.state.store(result, std::memory_order_release);
}

}  // namespace soft
