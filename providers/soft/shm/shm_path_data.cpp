// The shared-memory path: Sends through the channel ring, their completions,
// the receive side, and failure handling.
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <utility>

#include "opennd/log.h"
#include "soft_clock.h"
#include "soft_limits.h"
#include "queue_pair.h"
#include "shm_path_inline.h"
#include "srq.h"

namespace soft {

// ---------------------------------------------------------------- sending

// Sends the peer has consumed complete with the status it wrote.
HRESULT ShmPath::ReapConsumedLocked() {
    if (!conn_ || !conn_->channel) return ND_SUCCESS;  // nothing in a ring (TCP: TcpPath)
    uint64_t consumed = producer_.ConsumedUpTo();
    // The peer writes that position: one outside what we reaped and what we
    // published is a lie (believed, it would free slots still unread, or
    // hold the ring full for ever). Nothing more is read from the ring.
    if (consumed < producer_.reaped() || consumed > producer_.head()) return ND_REMOTE_ERROR;
    HRESULT failed = ND_SUCCESS;
    for (Op &op : ops_) {
        if (!op.in_ring || op.done) continue;
        if (op.pos >= consumed) break;
        HRESULT status = StatusFromPeer(producer_.At(op.pos)->status.load(std::memory_order_relaxed));
        if (op.awaiting_data && SUCCEEDED(status)) {  // a Read request taken: its data follows
            op.in_ring = false;
            op.posted_ms = kNotStamped;  // its answer's time starts (ReapLocked)
            continue;
        }
        op.status = status;
        op.done = true;
        if (FAILED(op.status) && SUCCEEDED(failed)) failed = op.status;
    }
    // Write fragments taken since the last reap: a refusal (the target ends
    // the connection at it, before the last) is remembered before the slot
    // is reused. A bounded walk over our own messages (each header read
    // once; one the peer scribbled only ends it early); one comparison when
    // no fragment is out.
    for (uint64_t at = producer_.reaped(); at < consumed && at < fragments_end_ && SUCCEEDED(fragment_refused_);) {
        MsgHeader *m = producer_.At(at);
        const HRESULT st = StatusFromPeer(m->status.load(std::memory_order_relaxed));
        // (The enum through its integer type: Clang's builtin takes integers only.)
        const auto type = static_cast<MsgType>(
            __atomic_load_n(reinterpret_cast<std::underlying_type_t<MsgType> *>(&m->type), __ATOMIC_RELAXED));
        const auto flags = __atomic_load_n(&m->flags, __ATOMIC_RELAXED);
        const auto slots = __atomic_load_n(&m->slots, __ATOMIC_RELAXED);
        if (type == MsgType::WriteFragment && !(flags & kMsgLast) && FAILED(st)) fragment_refused_ = st;
        if (slots == 0) break;
        at += slots;
    }
    producer_.Reaped(consumed);
    reaped_pos_.store(consumed, std::memory_order_relaxed);  // exactly what was reaped
    return failed;
}

void ShmPath::ReapLocked() {
    if (!conn_ || !conn_->channel) return;
    HRESULT failed = ReapConsumedLocked();
    if (SUCCEEDED(failed)) EmitLocked();  // what is done leaves first: the scan below starts at the oldest still out
    // A Send nobody receives: like hardware retry exhaustion (COMPAT). A
    // peer with an SRQ may hold a Send while its SRQ is empty (R048), but
    // not for ever: it says so itself, so the bound is only longer. A Read
    // the peer took is answered, each piece of the answer restarting its
    // time (HandleCopyMessage), or fails the same way.
    if (SUCCEEDED(failed) && state() == State::Connected) {
        for (Op &op : ops_) {
            if (op.done || !(op.in_ring || op.awaiting_data)) continue;
            const uint64_t limit = op.in_ring ? conn_->send_timeout_ms : conn_->read_answer_timeout_ms;
            if (op.posted_ms == kNotStamped) {
                op.posted_ms = NowMs();  // first seen waiting: its time starts now (see Send)
            } else if (NowMs() - op.posted_ms > limit) {
                op.status = ND_IO_TIMEOUT;
                op.done = true;
                op.awaiting_data = false;
                failed = ND_IO_TIMEOUT;
            }
            break;
        }
    }
    if (FAILED(failed) && state() == State::Connected) FailLocked(failed);
    // What the peer took leaves the queue now, not at the next poll: a
    // poster of silent Sends that rarely polls must not find it full.
    EmitLocked();
}

void ShmPath::EmitLocked() {
    while (!ops_.empty() && ops_.front().done) {
        const Op &op = ops_.front();
        if (FAILED(op.status) || !(op.flags & ND_OP_FLAG_SILENT_SUCCESS)) {
            ND2_RESULT r{op.status, 0, context_, op.context, op.type};
            icq_->Push(r);
        }
        if (!(op.flags & ND_OP_FLAG_SILENT_SUCCESS))
            reporting_.store(reporting_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
        ops_.pop_front();
        ++first_seq_;
        ops_count_.store(ops_.size(), std::memory_order_relaxed);
    }
}

void ShmPath::FailLocked(HRESULT) {
    State s = state();
    if (s == State::Connected || s == State::Attached) state_.store(State::Error);
    ReapConsumedLocked();  // what the peer already took keeps its real status
    // A Write in fragments that the peer refused at one of them (a remote
    // access it denied: it ends the connection before taking the rest):
    // that refusal is the status of the oldest such Write not done.
    if (FAILED(fragment_refused_))
        for (Op &op : ops_)
            if (!op.done && op.fragmented && op.type == Nd2RequestTypeWrite) {
                op.done = true;
                op.status = std::exchange(fragment_refused_, ND_SUCCESS);
                break;
            }
    for (Op &op : ops_)
        if (!op.done) {
            op.done = true;
            op.status = ND_CANCELED;
        }
    backlog_.clear();
    EmitLocked();
    NoteProgressLocked();
}

void ShmPath::ProgressSend(bool polling) {
    bool responding = responding_.load(std::memory_order_relaxed);
    if (ops_count_.load(std::memory_order_relaxed) == 0 && !responding) return;  // nothing to do: no lock
    if (!responding && state() == State::Connected && !backlogged_.load(std::memory_order_relaxed)) {
        // Only silent Sends outstanding: nothing to report unless one failed
        // or timed out, so the peer's position is sampled: on one idle poll
        // in 64, and then at most once per clock tick (timeouts are seconds
        // long; failures also come by the CM socket). Every read takes the
        // line the peer writes as it consumes, and the peer's next write
        // then waits for it on its critical path: sampling once per 64
        // polls cost the 8 B ping-pong 0.61 -> 0.48 us. Otherwise the
        // position on every pass, but in the application's poll loop on one
        // poll in 4 (reading it on every poll: 8 B message rate 1.8 instead
        // of 3.2 Mmsg/s; a completion waits at most three polls longer). A
        // wake-up's pass always looks. A plain increment, not a locked one
        // (on every poll): polls from two threads at once may count one;
        // only the sampling rate moves.
        uint32_t poll = idle_polls_.load(std::memory_order_relaxed);
        idle_polls_.store(poll + 1, std::memory_order_relaxed);
        // Also once an eighth of the queue is out (on one poll in 4, should
        // the peer lag): reaping a few at a time here keeps a Send from
        // finding half the queue to reap at once (a p99 spike), at about one
        // read of the line per idepth/8 messages.
        // The progress thread's passes (wake-ups, armed polls every 200 ms)
        // always sample: they are rare, and they alone stamp and time out
        // the Sends of an application that waits instead of polling.
        bool sample = !polling ||
                      ((poll & 3) == 0 && ops_count_.load(std::memory_order_relaxed) >= std::max<size_t>(idepth_ / 8, 1));
        if (!sample && (poll & 63) == 0) {
            uint64_t now = NowMs();
            sample = now != last_sample_ms_.load(std::memory_order_relaxed);
            if (sample) last_sample_ms_.store(now, std::memory_order_relaxed);
        }
        bool reporting = reporting_.load(std::memory_order_relaxed) != 0;
        if (!sample && (!reporting || (polling && (poll & 3) != 0))) return;
        if (producer_.ConsumedUpTo() == reaped_pos_.load(std::memory_order_relaxed)) {
            uint64_t oldest = oldest_in_ring_ms_.load(std::memory_order_relaxed);
            if (oldest == 0 || !sample) return;  // nothing new, nothing due
            if (oldest != kNotStamped && NowMs() - oldest <= oldest_limit_ms_.load(std::memory_order_relaxed))
                return;  // (an unstamped one: the pass stamps it)
        }
    }
    // Not a try-lock that gives up: a wake-up for a Send the peer just
    // consumed, arriving while the application posts (tx_mu_ held), was lost
    // that way, and the completion waited for the armed poll timeout.
    send_gate_.Run([this] { ProgressSendPass(); });
}

void ShmPath::ProgressSendPass() {
    std::unique_lock<QpLock> lock(tx_mu_);
    if (!conn_) return;
    bool was_connected = state() == State::Connected;
    ReapLocked();
    PumpBacklogLocked();
    if (state() == State::Connected) PumpResponsesLocked();
    EmitLocked();
    NoteProgressLocked();
    bool failed_now = was_connected && state() == State::Error;
    lock.unlock();
    if (failed_now) {
        FlushReceives();
        TerminatePeer(ND_IO_TIMEOUT);
    }
}

void ShmPath::PumpBacklogLocked() {
    while (!backlog_.empty() && state() == State::Connected) {
        Backlog &b = backlog_.front();
        Op &op = ops_[b.op_seq - first_seq_];
        bool published;
        if (b.stream != Stream::None) {
            published = PumpStreamLocked(b, op);
        } else if ((b.flags & ND_OP_FLAG_READ_FENCE) && ReadPendingBeforeLocked(b.op_seq)) {
            published = false;  // READ_FENCE: wait for earlier Reads (R099)
        } else {
            const char *data = b.inline_data.empty() ? nullptr : b.inline_data.data();
            if (data == nullptr && b.length <= kInlineThreshold) data = "";  // zero-length
            published = MarkInvalidateLocked(b) &&
                        TryPublishSendLocked(op, b.sge.data(), static_cast<ULONG>(b.sge.size()), data, b.length,
                                             b.flags);
        }
        if (!published) break;
        backlog_.pop_front();
    }
}

// Records what ProgressSend's lock-free check compares against.
void ShmPath::NoteProgressLocked() {
    if (!conn_) return;
    backlogged_.store(!backlog_.empty(), std::memory_order_relaxed);
    SetWakeFlagLocked();
    uint64_t oldest = 0, limit = 0;  // none
    for (const Op &op : ops_)
        if (!op.done && (op.in_ring || op.awaiting_data)) {  // as ReapLocked's scan
            oldest = op.posted_ms;  // may be kNotStamped
            limit = op.in_ring ? conn_->send_timeout_ms : conn_->read_answer_timeout_ms;
            break;
        }
    oldest_in_ring_ms_.store(oldest, std::memory_order_relaxed);
    oldest_limit_ms_.store(limit, std::memory_order_relaxed);
}

void ShmPath::Progress(bool from_engine) {
    if (peer_stalled_.load(std::memory_order_relaxed) && !stall_handled_.exchange(true)) qp_.Fail();  // DrainPeerCopies
    ProgressReceive(!from_engine);
    // A peer's request to push part of one of our large Sends: only while a
    // Send is out (one load otherwise).
    if (ops_count_.load(std::memory_order_relaxed) != 0) ServePushRequest();
    ProgressSend(!from_engine);
}

// -------------------------------------------------------------- receiving

bool ShmPath::TakeReceive(PostedReceive *r) {
    const PostedReceive *next = NextReceive(r);
    if (!next) return false;
    if (next != r) *r = *next;
    DoneWithReceive();
    return true;
}

const PostedReceive *ShmPath::NextReceive(PostedReceive *spare) {
    if (srq_) return srq_->Take(spare) ? spare : nullptr;
    return receives_.empty() ? nullptr : &receives_.front();
}

void ShmPath::DoneWithReceive() {
    if (!srq_) receives_.pop_front();
}

void ShmPath::CompleteReceive(const PostedReceive &r, HRESULT status, ULONG bytes, bool solicited,
                              const UINT32 *invalidated) {
    ND2_RESULT res{status, bytes, context_, r.context, Nd2RequestTypeReceive};
    if (invalidated)
        rcq_->PushInvalidated(res, *invalidated, solicited);
    else
        rcq_->Push(res, solicited);
}

// Moves one message into a receive: the status of the receive, and
// *for_sender the status the sender's Send completes with.
HRESULT ShmPath::Deliver(MsgHeader *m, const MsgInfo &info, const PostedReceive &r, ULONG *bytes,
                           int32_t *for_sender) {
    uint64_t room = 0;
    *bytes = 0;
    *for_sender = ND_REMOTE_ERROR;  // unless the delivery works
    if (!LocalSgesValid(r.sge, r.nsge, kRightLocalWrite, &room, &rx_memo_)) return ND_ACCESS_VIOLATION;
    *for_sender = ND_SUCCESS;  // a receive too small is the receiver's failure alone (COMPAT, as over TCP)
    if (info.length > room) return ND_DATA_OVERRUN;  // COMPAT: not ND_BUFFER_OVERFLOW
    *bytes = info.length;
    const char *payload = Channel::Payload(m);
    if (info.type == MsgType::SendInline) {
        size_t left = info.length, at = 0;
        for (uint32_t i = 0; i < r.nsge && left; ++i) {
            size_t n = std::min<size_t>(left, r.sge[i].BufferLength);
            std::memcpy(r.sge[i].Buffer, payload + at, n);
            at += n;
            left -= n;
        }
        return ND_SUCCESS;
    }
    // SendCma: pull from the sender's buffers straight into ours.
    uint32_t nrefs = (info.slots * kSlotSize - sizeof(MsgHeader)) / sizeof(SgeRef);
    const auto *refs = reinterpret_cast<const SgeRef *>(payload);
    iovec local[16], remote[64];
    size_t left = info.length;
    int nl = 0;
    for (uint32_t i = 0; i < r.nsge && left && nl < 16; ++i) {
        size_t n = std::min<size_t>(left, r.sge[i].BufferLength);
        if (n) local[nl++] = iovec{r.sge[i].Buffer, n};
        left -= n;
    }
    int nr = 0;
    uint64_t described = 0;
    for (uint32_t i = 0; i < nrefs && described < info.length && nr < 64; ++i) {
        remote[nr++] = iovec{reinterpret_cast<void *>(refs[i].address), refs[i].length};
        described += refs[i].length;
    }
    if (described != info.length) {  // malformed message
        *for_sender = ND_INVALID_DEVICE_REQUEST;
        return ND_REMOTE_ERROR;
    }
    errno = 0;
    if (PullSend(local, nl, remote, nr, info.length, consumer_.position())) return ND_SUCCESS;
    if (errno == EPERM) OPENND_LOG(Warn, "ndsoft: cross-memory attach to process %d is not permitted", conn_->peer_pid);
    *bytes = 0;
    *for_sender = ND_ACCESS_VIOLATION;  // the sender's buffers could not be read
    return ND_REMOTE_ERROR;
}

void ShmPath::ProgressReceive(bool polling) {
    State s = state();
    if (s != State::Attached && s != State::Connected) return;
    // conn_ is set before the state leaves Idle (release/acquire on state_).
    if (!conn_->channel || !RingConsumer(conn_->channel.get(), 1 - conn_->side).PublishedAt(rx_pos_.load(std::memory_order_relaxed)))
        return;  // nothing new: no lock
    if (polling) {
        // The application's poll loop comes back at once: it takes the lock
        // if it is free and otherwise leaves the message to that pass or to
        // its next poll. The gate's two locked instructions are for calls
        // that must not be lost (wake-ups, a Receive posted for a waiting
        // message); an armed Notify has the progress thread poll again.
        std::unique_lock<QpLock> lock(rx_mu_, std::try_to_lock);
        if (lock.owns_lock()) ReceivePassLocked(lock);
        return;
    }
    receive_gate_.Run([this] {  // see ProgressSend
        std::unique_lock<QpLock> lock(rx_mu_);
        ReceivePassLocked(lock);
    });
}

void ShmPath::ReceivePassLocked(std::unique_lock<QpLock> &lock) {
    std::vector<Unbound> let_go;  // windows the peer invalidated: released after rx_mu_
    bool failed = false, more = false;
    MsgInfo info;
    PostedReceive spare;  // one taken from the SRQ
    // At most one ring's worth per pass: a peer that refills the ring as
    // fast as we empty it must not keep this caller (an application's
    // GetResults, the progress thread) here for good.
    uint64_t budget = kRingSlots;
    // The header is used as Peek read it, once (see MsgInfo).
    while (MsgHeader *m = consumer_.Peek(&info)) {
        if (info.slots == 0) {  // malformed
            failed = true;
            break;
        }
        if (info.slots > budget) {
            more = true;
            break;
        }
        budget -= info.slots;
        if (info.type >= MsgType::SendFragment && info.type <= MsgType::ReadResponse) {
            int32_t for_sender = ND_SUCCESS;
            bool fatal = false;
            ReceiveDone done;
            if (!HandleCopyMessage(m, info, &for_sender, &fatal, &done)) break;  // waits for a receive
            const UINT32 *invalidated = nullptr;
            if (done.valid && rx_invalidate_) {
                invalidated = InvalidateForSendLocked(&done.status, &for_sender, &let_go);
                fatal = fatal || FAILED(done.status);
            }
            consumer_.Finish(m, info, for_sender);
            conn_->WakePeer();
            if (done.valid) CompleteReceive(done.receive, done.status, done.bytes, done.solicited, invalidated);
            if (fatal) {
                failed = true;
                break;
            }
            continue;
        }
        if (info.type == MsgType::InvalidateNext) {
            // One at a time, and whole (the token is read once, from our copy).
            if (rx_invalidate_ || info.length != sizeof(InvalidateHeader) ||
                Channel::SlotsFor(info.length) > info.slots) {
                failed = true;
                break;
            }
            InvalidateHeader h;
            CopyOnce(&h, Channel::Payload(m), sizeof h);
            rx_invalidate_ = h.token;
            consumer_.Finish(m, info, ND_SUCCESS);
            continue;
        }
        bool well_formed = (info.type == MsgType::SendInline || info.type == MsgType::SendCma) &&
                           info.length <= kMaxTransferLength &&
                           (info.type != MsgType::SendInline || Channel::SlotsFor(info.length) <= info.slots);
        if (!well_formed) {
            failed = true;
            break;
        }
        // Used where it is queued (not copied out), and dropped once completed.
        const PostedReceive *r = NextReceive(&spare);
        if (!r) break;  // no receive yet: the Send waits (and times out at the sender)
        ULONG bytes = 0;
        int32_t for_sender = ND_SUCCESS;
        HRESULT result = Deliver(m, info, *r, &bytes, &for_sender);
        bool solicited = (info.flags & kMsgSolicited) != 0;
        const UINT32 *invalidated = rx_invalidate_ ? InvalidateForSendLocked(&result, &for_sender, &let_go) : nullptr;
        // The sender's Send is finished before our receive completes: an
        // application that disconnects as soon as it has the message must
        // not have that Send flushed (ND_CANCELED) at its peer.
        consumer_.Finish(m, info, for_sender);  // m may be reused from here on
        conn_->WakePeer();
        CompleteReceive(*r, result, bytes, solicited, invalidated);
        DoneWithReceive();
        if (FAILED(result)) {
            failed = true;
            break;
        }
    }
    rx_pos_.store(consumer_.position(), std::memory_order_relaxed);
    lock.unlock();
    if (failed) qp_.Fail();
    // What is left is published: the peer will not wake us for it again.
    // The progress thread's next loop polls every queue pair.
    if (more) engine_->Kick();
}

void ShmPath::FlushReceives() {
    std::lock_guard<QpLock> lock(rx_mu_);
    if (reassembly_.active) {  // a message cut short: its receive is flushed
        CompleteReceive(reassembly_.receive, ND_CANCELED, 0, false);
        reassembly_.active = false;
    }
    if (srq_) return;  // an SRQ's receives belong to the SRQ, not to one QP
    receives_.ForEach([this](const PostedReceive &r) { CompleteReceive(r, ND_CANCELED, 0, false); });
    receives_.clear();
}

}  // namespace soft
