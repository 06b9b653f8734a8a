// The queue pair's data path to a peer process on this host: messages
// through the channel's two rings (shm_wire.h), one-sided operations and
// large Sends by cross-memory attach (shm_path_rdma.cpp, shm_path_push.cpp),
// and a copy-through-ring stream when cross-memory attach is not permitted
// (shm_path_copy.cpp). It implements DataPath (data_path.h).
//
// Completion order: initiator requests complete in post order (Reads and
// Writes run at post time but their entries wait behind earlier Sends);
// receives complete in post order.
//
// Locks: tx_mu_ (initiator queue and ring producer), rx_mu_ (receive queue
// and ring consumer), both QpLock (spin locks: short sections on every
// message). When both are taken, rx_mu_ first; CQ pushes happen under them
// (the CQ lock is a leaf).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "channel.h"
#include "connection.h"
#include "data_path.h"
#include "memory_objects.h"
#include "mr_table.h"
#include "opennd/kit/spin_lock.h"
#include "posted_receive.h"
#include "ring_queue.h"

namespace soft {

class QueuePair;

// Lets many threads ask for one kind of progress (the progress thread on a
// wake-up, GetResults, posting) while one at a time makes it, without losing
// a request. A caller that finds another at work must not simply leave: what
// brought it (a message published, a Send consumed) may have come after the
// other's last look, and then nobody looks until the next wake-up, which may
// never come (the peer is done) or the progress thread's armed poll timeout
// (200 ms; OPENND_SOFT_ARMED_POLL_MS). Requests are counted instead: the one
// that finds none running makes passes until no request came during one.
class ProgressGate {
public:
    template <class Pass>
    void Run(Pass pass) {
        if (requests_.fetch_add(1, std::memory_order_acq_rel) != 0) return;  // the running pass repeats for us
        for (;;) {
            const uint32_t answered = requests_.load(std::memory_order_acquire);
            pass();
            if (requests_.fetch_sub(answered, std::memory_order_acq_rel) == answered) return;
        }
    }

private:
    std::atomic<uint32_t> requests_{0};
};

// The path's two locks are taken on every message and held for short
// sections (a long one: a cross-memory copy, which a waiter spins out then
// yields to): unlocking a SpinLock is a plain store.
using QpLock = opennd::kit::SpinLock;

class ShmPath {
public:
    using State = QpState;
    ShmPath(QueuePair &qp, const PathEnv &env)
        : qp_(qp), state_(*env.state), engine_(env.engine), rcq_(env.rcq), icq_(env.icq), srq_(env.srq),
          context_(env.qp_context), id_(env.qp_id), rdepth_(env.receive_depth), idepth_(env.initiator_depth) {}
    ShmPath(const ShmPath &) = delete;
    ShmPath &operator=(const ShmPath &) = delete;

    // The connection runs here: its channel's rings are ours. Set once,
    // before the queue pair's state leaves Idle.
    void Attach(Connection *conn);

    // Posting (DataPath). Arguments are checked by the queue pair; `total`
    // is the request's length.
    [[gnu::always_inline]] inline HRESULT PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags,
                                                   uint64_t total);  // shm_path_inline.h
    // A Send with Invalidate: an InvalidateNext message, then the Send.
    HRESULT PostSendInvalidate(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total,
                               UINT32 token);
    HRESULT PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                     ULONG flags);
    HRESULT PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                      ULONG flags);
    // Before the connection too (queued); once the QP runs over TCP, handed
    // to that path (AttachTcp moves the early ones there, under rx_mu_).
    HRESULT PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge);
    // `invalidate`: transfers through the window under way end before it
    // completes (R106).
    HRESULT PostLocal(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool invalidate, LocalOp op);

    // Progress: the application polling (from_engine false) or the
    // progress thread.
    void Progress(bool from_engine);
    void KickReceive() { ProgressReceive(); }
    void WantWakeups(bool on);
    void Quiesce(uint64_t until_ms);
    // Waits (bounded) until the peer's cross-memory copies into our memory
    // that have started are over.
    void DrainPeerCopies(uint64_t until_ms);
    // The queue pair is going: the peer is told (it copies nothing more into
    // us) and the copies under way end.
    void Leave();
    // Everything outstanding completes ND_CANCELED; the state ends Closed.
    void Close();
    // As Close, and the peer is told to stop.
    void Fail();
    void FlushReceives();
    // Receives posted before the connection, for a path that takes them
    // over (requires rx_mu_).
    RingQueue<PostedReceive> TakeReceivesLocked() {
        RingQueue<PostedReceive> early;
        std::swap(early, receives_);
        return early;
    }
    QpLock &rx_lock() { return rx_mu_; }
    QpLock &tx_lock() { return tx_mu_; }

private:
    struct Op {
        ND2_REQUEST_TYPE type;
        void *context;
        ULONG flags;
        bool in_ring;     // a Send waiting for the peer to consume it
        bool done;
        HRESULT status;
        uint64_t pos;     // in_ring: its ring position
        bool fragmented = false;  // sent in fragments (see fragment_refused_)
        uint64_t posted_ms;  // a Send: kNotStamped until first seen waiting in the ring (ReapLocked)
        // A Read through the ring: its data arrives in ReadResponse messages.
        bool awaiting_data = false;
        uint32_t got = 0;
        // A Read's destination; a large SendCma's source, for the peer's
        // PushRequest. Kept with its capacity when the slot is reused.
        std::vector<ND2_SGE> sink;

        // Fills a (reused) slot of ops_.
        void Reset(ND2_REQUEST_TYPE t, void *ctx, ULONG f, bool is_done, HRESULT st, uint64_t ms) {
            type = t;
            context = ctx;
            flags = f;
            in_ring = false;
            done = is_done;
            status = st;
            pos = 0;
            fragmented = false;
            posted_ms = ms;
            awaiting_data = false;
            got = 0;
            sink.clear();
        }
    };
    enum class Stream : uint8_t { None, SendFragments, WriteFragments, ReadRequest };
    struct Backlog {  // an operation not (fully) in the ring yet
        uint64_t op_seq;
        std::vector<ND2_SGE> sge;
        std::vector<char> inline_data;
        uint32_t length;
        ULONG flags;
        Stream stream = Stream::None;  // None: one Send message (copy or CMA)
        uint64_t raddr = 0;
        uint32_t rtoken = 0;
        uint32_t published = 0;  // streams: bytes already in the ring
        // A Send with Invalidate: its InvalidateNext message goes out
        // (`marked`) in the turn that publishes the Send or its first fragment.
        bool invalidate = false, marked = false;
        uint32_t token = 0;
    };
    struct ResponseJob {  // a Read served through the ring (target side)
        uint64_t read_id;
        uint64_t address;
        uint32_t length;
        uint32_t sent;
        int32_t status;
        uint32_t token;  // wire token of the source, checked again for every chunk
    };
    struct Reassembly {  // a fragmented Send being received
        bool active = false;
        PostedReceive receive;
        uint32_t total = 0;
        HRESULT status = ND_SUCCESS;
        bool solicited = false;
    };

    State state() const { return state_.load(std::memory_order_acquire); }
    // requires tx_mu_
    // AddOpLocked and TryPublishSendLocked: shm_path_inline.h.
    [[gnu::always_inline]] inline Op &AddOpLocked(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool done,
                                                  HRESULT status, uint64_t posted_ms);
    void PushOpLocked(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status);
    [[gnu::always_inline]] inline bool TryPublishSendLocked(Op &op, const ND2_SGE *sge, ULONG nsge,
                                                            const char *inline_data, uint32_t length, ULONG flags);
    // Send and Send with Invalidate (`invalidate`: the token, or nullptr).
    [[gnu::always_inline]] inline HRESULT PostSendAs(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags,
                                                     uint64_t total, const UINT32 *invalidate);
    // Publishes b's InvalidateNext if it needs one and has not; false if
    // the ring has no room.
    bool MarkInvalidateLocked(Backlog &b);
    void PumpBacklogLocked();  // publishes what the backlog can, in order
    void ReapLocked();
    HRESULT ReapConsumedLocked();
    void EmitLocked();
    void NoteProgressLocked();
    void SetWakeFlagLocked();
    void FailLocked(HRESULT failed_status);
    // `memo`: tx_memo_ (tx_mu_ held) or rx_memo_ (rx_mu_ held), or none.
    bool LocalSgesValid(const ND2_SGE *sge, ULONG nsge, uint32_t need_rights, uint64_t *total,
                        MrMemo *memo = nullptr);
    // [address, +length) of our memory under the peer's wire token, with
    // `need` (remote rights), and a window's only through this QP.
    bool OwnRangeValid(uint32_t wire_token, uint64_t address, uint64_t length, uint32_t need,
                       uint64_t *where = nullptr);
    HRESULT FinishOneSided(std::unique_lock<QpLock> &lock, ND2_REQUEST_TYPE type, void *ctx, ULONG flags,
                           HRESULT status, bool was_connected);
    HRESULT RemoteAccess(const ND2_SGE *sge, ULONG nsge, UINT64 raddr, UINT32 rtoken, bool write, ULONG flags);
    void TerminatePeer(HRESULT why);

    // `polling`: the application's poll loop, which comes again at once: the
    // peer's position may be left for a later poll (not so a wake-up's pass).
    void ProgressSend(bool polling);
    void ProgressReceive(bool polling = false);
    void ProgressSendPass();     // under send_gate_: takes tx_mu_
    void ReceivePassLocked(std::unique_lock<QpLock> &lock);  // unlocks before it reports a failure
    // The copy-through-ring path, when cross-memory attach is not permitted
    // (shm_path_copy.cpp).
    HRESULT PostStreamLocked(Stream kind, ND2_REQUEST_TYPE type, void *ctx, const ND2_SGE *sge, ULONG nsge,
                             uint32_t length, ULONG flags, uint64_t raddr, uint32_t rtoken,
                             const UINT32 *invalidate = nullptr);
    bool PumpStreamLocked(Backlog &b, Op &op);
    // READ_FENCE: a Read posted before op `seq` has not completed yet.
    bool ReadPendingBeforeLocked(uint64_t seq) const;
    void PumpResponsesLocked();
    // A receive to complete once the message that filled it is finished
    // (the sender's Send is done before the receiver can see its receive).
    struct ReceiveDone {
        bool valid = false;
        PostedReceive receive;
        HRESULT status = ND_SUCCESS;
        ULONG bytes = 0;
        bool solicited = false;
    };
    // Handles one copy-path message; false if it must wait (no receive yet).
    // *for_sender: the status the message is finished with; *fatal: the QP
    // fails; *done: a receive the message completed.
    bool HandleCopyMessage(MsgHeader *m, const MsgInfo &info, int32_t *for_sender, bool *fatal, ReceiveDone *done);
    bool TakeReceive(PostedReceive *r);  // NextReceive, copied out, and DoneWithReceive
    // The receive the next message goes to: the queue's front, left there,
    // or one taken from the SRQ into *spare; nullptr if there is none.
    // DoneWithReceive drops it (requires rx_mu_, nothing posted between).
    const PostedReceive *NextReceive(PostedReceive *spare);
    void DoneWithReceive();
    // `invalidated`: the token the message's Send invalidated, if any.
    void CompleteReceive(const PostedReceive &r, HRESULT status, ULONG bytes, bool solicited,
                         const UINT32 *invalidated = nullptr);
    // The message that completes a receive follows an InvalidateNext
    // (rx_invalidate_): once it is placed (*status succeeded) the token is
    // invalidated, or the receive fails ND_REMOTE_ERROR and the sender's
    // Send ND_ACCESS_VIOLATION. Returns the token invalidated, else nullptr;
    // what it let go of goes to *let_go (released after rx_mu_).
    const UINT32 *InvalidateForSendLocked(HRESULT *status, int32_t *for_sender, std::vector<Unbound> *let_go);
    HRESULT Deliver(MsgHeader *m, const MsgInfo &info, const PostedReceive &r, ULONG *bytes, int32_t *for_sender);
    // A SendCma message's bytes into our buffers (shm_path_push.cpp): a
    // large one half pulled here and half pushed by the sender when it
    // answers our PushRequest in time. `pos`: the message's ring position.
    bool PullSend(const iovec *local, int nl, const iovec *remote, int nr, uint64_t length, uint64_t pos);
    // The sender's side: serves the peer's PushRequest, if one waits.
    void ServePushRequest();

    QueuePair &qp_;
    std::atomic<QpState> &state_;  // the queue pair's
    Engine *const engine_;
    opennd::kit::CompletionQueue *const rcq_, *const icq_;
    SharedReceiveQueue *const srq_;
    void *const context_;
    const uint64_t id_;
    const ULONG rdepth_, idepth_;
    Connection *conn_ = nullptr;  // Attach; owned by the queue pair

    QpLock tx_mu_;
    std::atomic<bool> terminate_sent_{false};  // TerminatePeer: once per connection
    // The peer held its copy counter up past kQuiesceLimitMs: the connection
    // is ended (by the next Progress: DrainPeerCopies may run under our
    // locks) and no barrier waits for this peer again.
    std::atomic<bool> peer_stalled_{false};
    std::atomic<bool> stall_handled_{false};
    RingProducer producer_;
    // Ring positions below this may hold fragments of a request (stream
    // ops); the first failure the peer wrote on one, seen as it was reaped
    // (its slot is reused after): the status of the request the peer
    // refused, once the connection ends (FailLocked). Under tx_mu_.
    uint64_t fragments_end_ = 0;
    HRESULT fragment_refused_ = ND_SUCCESS;
    MrMemo tx_memo_;  // the region of the last local SGEs posted
    RingQueue<Op> ops_;  // a ring, not a deque: no allocation per request
    std::atomic<size_t> ops_count_{0};  // ops_.size(), readable without tx_mu_
    // Ops in ops_ that report a completion even when they succeed (not
    // SILENT_SUCCESS): while there are none, polling need not look at the
    // peer's consumer position on every pass (that cache line is the one the
    // peer writes as it consumes: reading it slows both sides down).
    std::atomic<size_t> reporting_{0};
    // What the last reap saw, so a poll that finds nothing new takes no lock:
    // the peer's consumer position, whether Sends wait in the backlog, and
    // when the oldest Send still in the ring was posted (0: none).
    std::atomic<uint64_t> reaped_pos_{0};
    std::atomic<bool> backlogged_{false};
    std::deque<ResponseJob> responses_;  // requires tx_mu_
    std::atomic<bool> responding_{false};
    std::atomic<bool> engine_wakeups_{false};  // the engine is armed (WantWakeups)
    // A Send is not stamped with the time when it is posted (reading the
    // clock was 5 ns of a 90 ns message) but when a reap first finds it
    // still waiting; the send timeout runs from there. Reaps come at least
    // on every sampled poll and every armed progress pass, so a Send nobody
    // receives still fails within a few seconds.
    static constexpr uint64_t kNotStamped = 1;
    std::atomic<uint64_t> oldest_in_ring_ms_{0};  // 0: nothing waiting in the ring (or for a Read's answer)
    std::atomic<uint64_t> oldest_limit_ms_{0};    // its timeout (Connection::send_timeout_ms, ...)
    std::atomic<uint32_t> idle_polls_{0};
    std::atomic<uint64_t> last_sample_ms_{0};  // NowMs() of the last sample (ProgressSend)
    uint64_t first_seq_ = 0;  // sequence number of ops_.front()
    std::deque<Backlog> backlog_;
    ProgressGate send_gate_;  // ProgressSend: never called with tx_mu_ held

    QpLock rx_mu_;
    RingConsumer consumer_;
    MrMemo rx_memo_;  // the region of the last receive filled
    std::atomic<uint64_t> rx_pos_{0};  // consumer position, readable without rx_mu_ (a hint)
    RingQueue<PostedReceive> receives_;
    Reassembly reassembly_;
    // The peer's InvalidateNext for the next Send (network order), and the
    // token it invalidated, while that receive completes.
    std::optional<UINT32> rx_invalidate_;
    UINT32 rx_invalidated_ = 0;
    ProgressGate receive_gate_;  // ProgressReceive: never called with rx_mu_ held
};

}  // namespace soft
