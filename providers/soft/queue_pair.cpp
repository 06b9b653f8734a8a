// Queue pair: construction, connection life, Receive.
#include "memory_objects.h"
#include "opennd/kit/registry.h"
#include "queue_pair.h"
#include "shm_path_inline.h"
#include "soft_limits.h"
#include "srq.h"

namespace soft {
namespace kit = opennd::kit;
namespace {

using QpRegistry = kit::Registry<QueuePair, IND2QueuePair>;

}  // namespace

QueuePair::QueuePair(IND2Adapter *adapter, std::shared_ptr<Engine> engine, const kit::QueuePairArgs &a)
    : kit::QueuePair<QueuePair>(a, kMaxSge * 4, kMaxTransferLength), adapter_(adapter, true),
      engine_(std::move(engine)), rcq_(kit::CompletionQueue::FromUnknown(a.receive_cq), true),
      icq_(kit::CompletionQueue::FromUnknown(a.initiator_cq), true), srq_ref_(SharedReceiveQueue::Find(a.srq), true),
      srq_(SharedReceiveQueue::Find(a.srq)), context_(a.context), rdepth_(a.receive_depth),
      idepth_(a.initiator_depth), id_(engine_->NextQpId()) {
    QpRegistry::Add(this);
    rcq_->AddPoller(this);
    if (icq_.get() != rcq_.get()) icq_->AddPoller(this);
    if (srq_) srq_->AddQp(this);
    engine_->AddPollable(this);
}

QueuePair::~QueuePair() {
    // No GetResults on our CQs runs our placements from here on; only then
    // may we leave the Deregister barrier's list (Engine::QuiescePlacements).
    rcq_->RemovePoller(this);
    if (icq_.get() != rcq_.get()) icq_->RemovePoller(this);
    if (srq_) srq_->RemoveQp(this);
    // The peer may not have heard of our end yet, and a region's token is
    // good on any queue pair (R074): its copies into our memory must end
    // before we leave the barrier's list, and no new one may start.
    if (state() != State::Idle && !tcp_) shm_.Leave();
    engine_->RemovePollable(this);
    QpRegistry::Remove(this);
    Close();  // released without Disconnect: implicit flush (R140)
}

QueuePair *QueuePair::Find(IUnknown *u) { return QpRegistry::Find(u, IID_IND2QueuePair); }

bool QueuePair::Reserve() {
    if (state() != State::Idle) return false;
    bool expected = false;
    return reserved_.compare_exchange_strong(expected, true);
}

void QueuePair::Unreserve() {
    if (state() == State::Idle) reserved_ = false;
}

void QueuePair::Attach(std::shared_ptr<Connection> conn) {
    conn_ = std::move(conn);  // (Idle: no path reads it yet)
    shm_.Attach(conn_.get());
    state_.store(State::Attached, std::memory_order_release);
    // The progress thread flags "wake me" only when its armed state changes:
    // a channel that appears while it is armed gets the flag here (then the
    // poll below, so nothing published before the flag is missed).
    if (engine_->armed()) shm_.WantWakeups(true);
    engine_->Kick();
    shm_.KickReceive();
}

void QueuePair::SetConnected() {
    State expected = State::Attached;
    state_.compare_exchange_strong(expected, State::Connected);
}

void QueuePair::Close() {
    if (state() == State::Idle) return;
    state_.store(State::Closed);
    OnPath([](DataPath auto &p) { p.Close(); });
}

void QueuePair::Fail() {
    State s = state();
    if (s == State::Idle || s == State::Closed) return;
    if (s == State::Connected || s == State::Attached) state_.compare_exchange_strong(s, State::Error);
    OnPath([](DataPath auto &p) { p.Fail(); });
}

HRESULT QueuePair::Flush() {
    if (state() == State::Idle)
        shm_.FlushReceives();  // receives posted before connecting (R094, R102)
    else
        Fail();
    return ND_SUCCESS;
}

// Before the connection: queued on the shared-memory path, which hands it
// on if the connection turns out to run over TCP.
HRESULT QueuePair::PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) {
    if (state() == State::Idle) return shm_.PostReceive(ctx, sge, nsge);
    return OnPath([&](DataPath auto &p) { return p.PostReceive(ctx, sge, nsge); });
}

void QueuePair::Quiesce(uint64_t until_ms) {
    if (state() != State::Idle) OnPath([until_ms](DataPath auto &p) { p.Quiesce(until_ms); });
}

bool QueuePair::NotifyArmed() { return rcq_->Armed() || icq_->Armed() || (srq_ && srq_->Armed()); }

}  // namespace soft
