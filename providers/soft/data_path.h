// What a queue pair's two data paths share: the state the queue pair keeps,
// what each path is given about its queue pair, and the interface both
// implement (ShmPath in shm/, TcpPath in tcp/). The queue pair checks a
// request (the kit's post_checks.h), then hands it to the path its
// connection runs on (QueuePair::OnPath): one predictable branch, no
// virtual call, on every message.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>

#include "ndspi.h"
#include "opennd/kit/completion_queue.h"

namespace soft {

class Engine;
class SharedReceiveQueue;

// Idle (created) -> Attached (connection known, receives may be consumed;
// at Accept/Connect reply) -> Connected (posting allowed) -> Error (a failed
// request; everything else completes ND_CANCELED) or Closed (disconnected:
// everything completes ND_CANCELED). Posting in Error/Closed is accepted and
// completes ND_CANCELED.
enum class QpState { Idle, Attached, Connected, Error, Closed };

// The queue pair, as its data path sees it.
struct PathEnv {
    std::atomic<QpState> *state;  // the queue pair's (the shared-memory path sets Error)
    Engine *engine;  // the adapter's: its memory-region table, its progress thread
    uint64_t qp_id;
    void *qp_context;
    opennd::kit::CompletionQueue *rcq, *icq;
    SharedReceiveQueue *srq;
    uint32_t receive_depth, initiator_depth;
};

// A request done at post time (Bind, Invalidate): run once the initiator
// queue has room, in order with the path's other requests. Not owning.
struct LocalOp {
    HRESULT (*run)(void *);
    void *arg;
    HRESULT operator()() const { return run(arg); }
    template <class F>
    static LocalOp Of(F &f) {
        return {[](void *p) { return (*static_cast<F *>(p))(); }, &f};
    }
};

// The posting and progress interface of a data path. Arguments are checked
// by the queue pair; `total` is the request's length. Each Post* returns
// ND_SUCCESS (the request completes later, exactly once, maybe with an
// error) or ND_NO_MORE_ENTRIES (the queue is full: nothing was queued).
template <class P>
concept DataPath = requires(P &p, void *ctx, const ND2_SGE *sge, ULONG n, ULONG flags, uint64_t total, UINT64 raddr,
                            UINT32 rtoken, ND2_REQUEST_TYPE type, bool b, LocalOp op, uint64_t until) {
    { p.PostSend(ctx, sge, n, flags, total) } -> std::same_as<HRESULT>;
    // A Send with Invalidate of the peer's token `rtoken` (an ND token).
    { p.PostSendInvalidate(ctx, sge, n, flags, total, rtoken) } -> std::same_as<HRESULT>;
    { p.PostRead(ctx, sge, n, total, raddr, rtoken, flags) } -> std::same_as<HRESULT>;
    { p.PostWrite(ctx, sge, n, total, raddr, rtoken, flags) } -> std::same_as<HRESULT>;
    { p.PostReceive(ctx, sge, n) } -> std::same_as<HRESULT>;
    // `b`: an Invalidate (transfers through the window end before it completes, R106).
    { p.PostLocal(type, ctx, flags, b, op) } -> std::same_as<HRESULT>;
    p.Progress(b);  // b: the progress thread, not the application polling
    p.KickReceive();  // an SRQ got a receive a waiting message may take
    p.Quiesce(until);  // Deregister's barrier: placements under way end
    p.Close();  // everything outstanding completes ND_CANCELED
    p.Fail();   // likewise, and the peer is told to stop
};

}  // namespace soft
