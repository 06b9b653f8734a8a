// The software provider's queue pair: the ND object (queue_pair.cpp,
// queue_pair_rdma.cpp) over one of two data paths, chosen when it connects:
// ShmPath (shm/) to a process on this host, TcpPath (tcp/) otherwise. The
// queue pair holds the state and checks every request (the kit's
// post_checks.h); the path queues, moves and completes it (DataPath,
// data_path.h). States: data_path.h (QpState).
#pragma once

#include <atomic>
#include <memory>
#include <type_traits>
#include <vector>

#include "connection.h"
#include "data_path.h"
#include "opennd/kit/com.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/queue_pair.h"
#include "progress_engine.h"
#include "shm_path.h"
#include "tcp_path.h"

namespace soft {

class SharedReceiveQueue;

static_assert(DataPath<ShmPath> && DataPath<TcpPath>, "both data paths implement the posting interface");

class MemoryRegion;
class MemoryWindow;

// On the kit's queue pair (opennd/kit/queue_pair.h), which checks every
// request and then calls the Post* below.
class QueuePair : public opennd::kit::QueuePair<QueuePair>, public opennd::kit::CqPoller, public Pollable {
public:
    using State = QpState;

    QueuePair(IND2Adapter *adapter, std::shared_ptr<Engine> engine, const opennd::kit::QueuePairArgs &a);
    ~QueuePair() override;
    static QueuePair *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }
    uint64_t id() const { return id_; }
    bool UsesSrq() const { return srq_ != nullptr; }
    State state() const { return state_.load(std::memory_order_acquire); }

    // Connection life, driven by the connector.
    bool Reserve();  // Idle -> reserved for one connector; false if in use
    void Unreserve();
    void Attach(std::shared_ptr<Connection> conn);
    // Over TCP (queue_pair_tcp.cpp): the stream after the MPA handshake.
    // `hold`: transmit nothing until TcpRelease (CompleteConnect).
    void AttachTcp(std::shared_ptr<Connection> conn, const iwarp::Negotiated &negotiated, std::vector<uint8_t> after,
                   bool hold);
    TcpPath::Event TcpProgress();  // the progress thread, on socket events
    void TcpRelease();
    bool TcpEstablished();
    void TcpShutdown();
    void SetConnected();
    // Everything outstanding completes ND_CANCELED; the QP is done.
    void Close();
    // The connection failed (or was flushed): everything outstanding
    // completes ND_CANCELED and the peer is told to stop.
    void Fail();

    // IND2QueuePair (the rest: the kit's)
    HRESULT STDMETHODCALLTYPE Flush() override;

    // Progress: CqPoller (application thread) and Pollable (progress thread).
    void PollForCq() override { Progress(false); }
    // `from_engine`: the progress thread (an armed Notify), not the
    // application polling (a TCP path then leaves the socket to it).
    void Progress(bool from_engine) {
        if (state() != State::Idle) OnPath([from_engine](DataPath auto &p) { p.Progress(from_engine); });
    }
    bool TryRef() override { return TryAddRef(); }
    void Unref() override { Release(); }
    void Poll() override { Progress(true); }
    void WantWakeups(bool on) override { shm_.WantWakeups(on); }  // (over TCP the socket wakes the progress thread)
    bool NotifyArmed() override;
    void Quiesce(uint64_t until_ms) override;

    // Used by the SRQ: a receive posted to it may match a waiting message.
    void KickReceive() {
        if (state() == State::Idle)
            shm_.KickReceive();  // (nothing to match yet)
        else
            OnPath([](DataPath auto &p) { p.KickReceive(); });
    }
    // ShmPath::PostReceive, under its receive lock: the connection went to
    // TCP while it waited (AttachTcp holds that lock while it moves the
    // early receives), so the receive goes there too.
    bool OverTcpLocked() const { return tcp_ != nullptr; }
    HRESULT PostTcpReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) { return tcp_->PostReceive(ctx, sge, nsge); }

private:
    friend class opennd::kit::QueuePair<QueuePair>;
    // What the kit's checks hand on (queue_pair.cpp, queue_pair_rdma.cpp).
    HRESULT PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total) {
        return OnPath([&](DataPath auto &p) { return p.PostSend(ctx, sge, nsge, flags, total); });
    }
    HRESULT PostSendInvalidate(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total,
                               UINT32 token) {
        return OnPath([&](DataPath auto &p) { return p.PostSendInvalidate(ctx, sge, nsge, flags, total, token); });
    }
    HRESULT PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge);
    HRESULT PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                     ULONG flags) {
        return OnPath([&](DataPath auto &p) { return p.PostRead(ctx, sge, nsge, total, raddr, rtoken, flags); });
    }
    HRESULT PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                      ULONG flags) {
        return OnPath([&](DataPath auto &p) { return p.PostWrite(ctx, sge, nsge, total, raddr, rtoken, flags); });
    }
    MemoryRegion *FindRegion(IUnknown *mr);
    MemoryWindow *FindWindow(IUnknown *mw);
    HRESULT PostBind(void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer, SIZE_T size, ULONG flags);
    HRESULT PostInvalidate(void *ctx, MemoryWindow *mw, ULONG flags);
    HRESULT PostFastRegister(void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer, SIZE_T size,
                             UINT64 remote, ULONG flags);
    HRESULT BindAt(ND2_REQUEST_TYPE type, void *ctx, MemoryRegion *mr, MemoryWindow *mw, const void *buffer,
                   SIZE_T size, uint64_t remote, ULONG flags);

    // The path the connection runs on. Only once the state has left Idle
    // (tcp_ is set before, with release/acquire on state_).
    template <class F>
    std::invoke_result_t<F, ShmPath &> OnPath(F &&f) {
        if (tcp_) [[unlikely]]
            return f(*tcp_);
        return f(shm_);
    }
    PathEnv Env() { return {&state_, engine_.get(), id_, context_, rcq_.get(), icq_.get(), srq_, rdepth_, idepth_}; }

    // Posting is allowed once connected, and after (it completes ND_CANCELED).
    bool MayPost() const {
        const State s = state();
        return s != State::Idle && s != State::Attached;
    }

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    opennd::kit::ComPtr<opennd::kit::CompletionQueue> rcq_, icq_;
    opennd::kit::ComPtr<IND2SharedReceiveQueue> srq_ref_;
    SharedReceiveQueue *srq_;
    void *context_;
    const ULONG rdepth_, idepth_;
    const uint64_t id_;
    std::atomic<State> state_{State::Idle};
    std::atomic<bool> reserved_{false};
    std::shared_ptr<Connection> conn_;  // set once, at Attach (before state leaves Idle)
    std::unique_ptr<TcpPath> tcp_;      // likewise, at AttachTcp: the connection is over TCP

    ShmPath shm_{*this, Env()};  // after what Env() reads
};

}  // namespace soft

// ShmPath::PostSend, which the kit's Send inlines through PostSend above.
#include "shm_path_inline.h"
