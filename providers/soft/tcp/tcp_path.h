// The queue pair's data path to a peer on another host (or any peer when
// OPENND_SOFT_TRANSPORT=tcp): iWARP over one TCP connection. The iwarp::Engine
// frames and checks the stream; this class feeds it from the socket, writes
// what it produces, implements its Placement over the adapter's memory-region
// table, and turns its completions into ND2_RESULTs.
//
// Who drives it: the application's posts and polls (GetResults) and the
// engine's progress thread, through the connector that watches the socket
// (edge-triggered). Whoever holds mu_ reads the socket until it would block,
// so one-sided Reads and Writes are served with no call from the target
// application. Locks: mu_ is taken under the connector's lock and never
// calls back into it; CQ and SRQ locks are leaves under mu_.
//
// Completions: initiator requests (including Bind/Invalidate, which are
// local) complete in posting order; Sends and Writes only when a later Read
// Response shows the peer took them (EngineOptions::confirm_by_read), so a
// Write the target refuses completes ND_ACCESS_VIOLATION and a Send the peer
// had no receive for ND_IO_TIMEOUT. SILENT_SUCCESS Sends and Writes bring no
// fence Read of their own (a failure still arrives as the peer's Terminate):
// they are confirmed with the next request that reports, when they fill
// half the initiator queue, or at Disconnect.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "data_path.h"
#include "memory_objects.h"
#include "iwarp/engine.h"
#include "ndspi.h"
#include "posted_receive.h"
#include "ring_queue.h"
#include "opennd/kit/completion_queue.h"

namespace soft {

class TcpPath final : public iwarp::Placement {
public:
    using Env = PathEnv;
    enum class Event { None, Established, Closed };

    // Takes no ownership of fd (the connection's TcpLink owns it). `held`:
    // bytes already read past the MPA handshake. `hold`: transmit nothing
    // until Release (the initiator, until CompleteConnect).
    TcpPath(const Env &env, int fd, const iwarp::Negotiated &negotiated, std::vector<uint8_t> held, bool hold,
            uint32_t hold_ms = 0);
    ~TcpPath() override;

    // Posting (DataPath; tcp_path_post.cpp): the queue's room and the local
    // SGEs are checked here, in order with the stream's requests.
    // (Not inlined into the queue pair's posting: the shared-memory path's
    // is, and the queue pair's code stays small.)
    [[gnu::noinline]] HRESULT PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total);
    // iWARP's Send with Invalidate of the peer's `token` (an ND token).
    HRESULT PostSendInvalidate(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total,
                               UINT32 token);
    [[gnu::noinline]] HRESULT PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr,
                                       UINT32 rtoken, ULONG flags);
    [[gnu::noinline]] HRESULT PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr,
                                        UINT32 rtoken, ULONG flags);
    [[gnu::noinline]] HRESULT PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge);
    HRESULT PostLocal(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool invalidate, LocalOp op);
    void KickReceive() { Progress(true); }
    void Quiesce(uint64_t) { Quiesce(); }
    void Close() { Abort(false); }
    void Fail() { Abort(true); }  // a Terminate, then the stream is over

    // The engine's requests. Arguments and local SGEs are checked by the caller.
    // `copy`: the data is inline (the caller may reuse its buffers at once).
    // `invalidate`: the STag a Send with Invalidate names (none: a plain Send).
    void Send(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, bool copy,
              std::optional<uint32_t> invalidate = std::nullopt);
    void Write(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t raddr, uint32_t stag, ULONG flags, bool copy);
    void Read(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, uint64_t raddr, uint32_t stag, ULONG flags);
    // A request done at post time (Bind, Invalidate, or one refused locally).
    void Local(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status);
    void Receive(const PostedReceive &r, bool valid);
    // Returns once no placement into local memory that began before the
    // call is still running (Deregister's barrier).
    void Quiesce();
    size_t initiator_count();
    size_t receive_count();

    // Reads, writes and completes what it can. `from_engine`: the progress
    // thread (a socket event or a poll for an armed Notify); if another
    // thread holds the lock, that thread makes the pass as it lets go, so
    // no event is lost. Otherwise the application polling: a pass already
    // under way is enough.
    // `may_park`: a socket event, and the application is polling this path
    // (AppPolling): it will read the socket itself, so the progress
    // thread stops being woken for it for a while (Engine::Park) instead of
    // taking a core from a spinning application (2-core machines). Not
    // when the peer's last message was a Write or a Read of our memory
    // (one_sided_last_): those complete nothing here, so the application
    // has no reason to poll for the next one; it may be spinning on the
    // memory a Write fills (issue #26). A Send resets it: an application
    // waiting for Sends polls, and its polls place the Writes before them.
    Event Progress(bool from_engine, bool may_park = false);
    void Release();  // CompleteConnect: the RTR and data may go
    bool established();
    bool closed();
    // Ends the stream from this side: everything completes ND_CANCELED;
    // `terminate` tells the peer with a Terminate; without, the stream is
    // closing and what was not sent yet is dropped.
    void Abort(bool terminate);
    // Disconnect: writes what is already framed (bounded wait), then FIN.
    void Shutdown(int timeout_ms);

    // iwarp::Placement
    iwarp::TaggedCheck CheckTagged(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access access) override;
    void PlaceTagged(uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len, iwarp::Access access) override;
    bool FetchTagged(uint32_t stag, uint64_t to, uint8_t *out, uint32_t len) override;
    const uint8_t *TaggedSource(uint32_t stag, uint64_t to, uint32_t len) override;
    bool ReceiveUsable(uint64_t id) override;
    bool InvalidateStag(uint32_t stag) override;
    size_t TaggedDestination(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access access, iwarp::MutableBuffer *out,
                             size_t max) override;

private:
    // Send and Send with Invalidate: the room and local SGE checks.
    HRESULT SendChecked(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, std::optional<uint32_t> invalidate);
    bool RemoteRange(uint32_t stag, uint64_t to, uint32_t len, uint32_t need, uint64_t *where) const;
    struct InitiatorOp {
        InitiatorOp(ND2_REQUEST_TYPE t, void *c, ULONG f, bool d, HRESULT s, uint64_t i)
            : type(t), context(c), flags(f), done(d), status(s), id(i) {}
        ND2_REQUEST_TYPE type;
        void *context;
        ULONG flags;
        bool done;
        HRESULT status;
        uint64_t id;                // engine id (0: local)
        uint32_t sink = 0;          // Reads: the sink STag in sinks_
        std::shared_ptr<std::vector<uint8_t>> copy;  // inline data the engine gathers from
    };
    struct Fenced {  // a request waiting for earlier Reads (READ_FENCE), and all after it
        uint64_t id;
        std::function<bool(uint64_t)> post;
    };
    struct RecvOp {
        uint64_t id;  // the engine's
        bool valid;   // its SGEs passed the check when it was posted
        PostedReceive r;
    };

    // Queues a request in order and hands it to the engine (`post`), now or
    // once the Reads before it completed (READ_FENCE).
    void Submit(InitiatorOp op, std::function<bool(uint64_t)> post);
    void ConfirmIfFullLocked();
    bool ReadOutstandingLocked(uint64_t before_id) const;
    void ReleaseFencedLocked();
    void CancelLocked(uint64_t id);
    void EmitLocked();
    void PumpLocked();  // requires mu_: socket in, engine, socket out, completions
    // Posting: what the engine has to send goes out now; reading is left to
    // socket events and polls (a read here would mostly find nothing).
    void TransmitLocked();
    void PumpStreamLocked();
    void ReadSocketLocked();
    void CheckHangupLocked();
    void GiveUpLocked();  // the peer stopped answering or reading: end the stream
    void CheckSilenceLocked();
    void WriteSocketLocked();
    void CompleteLocked();
    void FeedHeldLocked();
    bool PostSrqReceiveLocked();  // true if one was posted
    bool PostReceiveLocked(const PostedReceive &r, bool valid);  // false: it completed ND_CANCELED
    void FailLocked(bool terminate);

    // mu_ is taken through Hold: letting go, it makes the pass another
    // thread asked for while it was held (pass_wanted_).
    class Hold {
    public:
        explicit Hold(TcpPath &p) : p_(p) { p_.mu_.lock(); }
        ~Hold() { p_.Unlock(); }
        Hold(const Hold &) = delete;
        Hold &operator=(const Hold &) = delete;

    private:
        TcpPath &p_;
    };
    void Unlock();
    bool AppPolling() const;  // see Progress (may_park)

    const Env env_;
    const int fd_;
    std::mutex mu_;
    std::atomic<uint32_t> pass_wanted_{0};  // non-zero: a pass was asked for
    // When the application last polled (NowNs); shared with the engine's
    // list of parked streams, which may outlive this path.
    const std::shared_ptr<std::atomic<uint64_t>> app_poll_ns_ = std::make_shared<std::atomic<uint64_t>>(0);
    std::atomic<bool> one_sided_last_{false};  // the peer's last message Wrote or Read our memory (Progress)
    std::atomic<bool> closed_flag_{false};  // closed_, readable without mu_
    iwarp::Engine engine_;
    std::vector<uint8_t> held_;  // read, not yet consumed (the engine stalled)
    size_t held_at_ = 0;
    std::vector<uint8_t> rx_buf_;
    // Framed bytes on their way out: engine pieces (PullGather) naming
    // own_ or the application's Send/Write buffers, sent from tx_at_/tx_off_.
    std::vector<uint8_t> own_;
    std::vector<iwarp::Engine::TxPiece> tx_;
    size_t tx_at_ = 0, tx_off_ = 0;
    bool TxPendingLocked() const { return tx_at_ < tx_.size(); }
    // The stream failed: operations complete (flushed) and their buffers may
    // go, so what is still to send is copied into own_ first.
    void OwnPendingLocked();
    bool eof_ = false, closed_ = false, hold_ = false, logged_end_ = false;
    bool peer_fin_ = false;  // eof_ was the peer's orderly close (not a reset or a timeout)
    bool logged_crc_quirk_ = false;  // said once that a siw quirk was tolerated
    uint64_t stalled_since_ms_ = 0;
    // The peer ended the stream while a Send of its waited for a receive
    // here (CheckHangupLocked): its bytes are still delivered, until then.
    uint64_t hangup_ms_ = 0;
    uint64_t silent_since_ms_ = 0;
    uint64_t tx_blocked_since_ms_ = 0;  // the socket refused our bytes since (0: it takes them)
    // The socket refused more (EAGAIN): polls before this time do not try
    // again (the progress thread's writability event does, at once).
    uint64_t tx_retry_ns_ = 0;
    bool rx_empty_ = false;  // the last read found nothing (see ReadSocketLocked)
    const uint32_t silence_limit_ms_;  // TcpTimeoutMs() when the stream began
    uint64_t hold_until_ms_ = 0;  // transmit nothing before this (the siw 6.1 window); 0: no timer
    uint64_t failed_since_ms_ = 0;  // our side ended the stream then (a timer runs); 0: not ended
    void ReleaseHoldLocked();  // waiting for the peer, and not a byte from it since
    uint64_t next_id_ = 1;
    std::deque<InitiatorOp> ops_;
    std::deque<Fenced> fenced_;
    RingQueue<RecvOp> recvs_;
    // Read sinks: our own STags for Read Responses (Access::LocalWrite),
    // kept apart from the memory-region tokens the peer may name.
    uint32_t next_sink_ = 1;
    std::map<uint32_t, std::vector<ND2_SGE>> sinks_;
    uint32_t withdrawn_sink_ = 0;  // a sink deregistered while its Read was in flight
    // Windows the peer's Sends invalidated, let go of once mu_ is (Unlock).
    std::vector<Unbound> unbound_;
};

}  // namespace soft
