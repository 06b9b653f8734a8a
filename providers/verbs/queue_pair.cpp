// The verbs queue pair (queue_pair.h): setup, completions and Flush. The
// posting hooks are in queue_pair_post.cpp.
#include "queue_pair.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <thread>

#include "opennd/kit/registry.h"
#include "opennd/log.h"
#include "status.h"

namespace opennd::verbs {
namespace {

using Registry = kit::Registry<QueuePair, IND2QueuePair>;
std::atomic<uint64_t> g_generation{1};

// ND2_SGE and ibv_sge have one layout: SGE arrays go to the device as they are.
static_assert(sizeof(ND2_SGE) == sizeof(ibv_sge));
static_assert(offsetof(ND2_SGE, Buffer) == offsetof(ibv_sge, addr));
static_assert(offsetof(ND2_SGE, BufferLength) == offsetof(ibv_sge, length));
static_assert(offsetof(ND2_SGE, MemoryRegionToken) == offsetof(ibv_sge, lkey));

}  // namespace

uint64_t NewGeneration() { return g_generation.fetch_add(1) & 0xFFFF; }

ShadowRing::ShadowRing(uint32_t depth, uint32_t parts)
    : depth_(std::max<uint32_t>(depth, 1)), capacity_(depth_ * std::max<uint32_t>(parts, 1)) {
    slots_.resize(std::bit_ceil(capacity_));
    mask_ = slots_.size() - 1;
}

QueuePair::QueuePair(std::shared_ptr<Device> device, IND2Adapter *adapter, const kit::QueuePairArgs &a,
                     CompletionQueue *rcq, CompletionQueue *icq, SharedReceiveQueue *srq)
    : kit::QueuePair<QueuePair>(a, 32, device->info().MaxTransferLength, device->info().MaxReadSge),
      device_(std::move(device)),
      adapter_(adapter, true), rcq_(rcq, true), icq_(icq, true), srq_(srq, true), context_(a.context),
      generation_(NewGeneration()),
      sq_(a.initiator_depth, 1), rq_(a.receive_depth, 1) {
    const ND2_ADAPTER_INFO &info = device_->info();
    ibv_qp_init_attr attr{};
    attr.send_cq = icq->cq();
    attr.recv_cq = rcq->cq();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 0;
    attr.cap.max_send_wr = std::clamp<uint32_t>(a.initiator_depth, 1, device_->caps().max_qp_wr);
    attr.cap.max_recv_wr = std::max<uint32_t>(a.receive_depth, 1);
    attr.cap.max_send_sge = std::clamp<uint32_t>(a.initiator_sge, 1, info.MaxInitiatorSge);
    attr.cap.max_recv_sge = std::clamp<uint32_t>(a.receive_sge, 1, info.MaxReceiveSge);
    if (srq_) {
        attr.srq = srq_->srq();
        attr.cap.max_recv_wr = attr.cap.max_recv_sge = 0;
    }
    attr.cap.max_inline_data = a.inline_size;
    qp_ = ibv_create_qp(device_->pd(), &attr);
    if (!qp_) return;
    max_send_sge_ = attr.cap.max_send_sge;
    inline_size_ = a.inline_size;
    reads_complete_late_ = device_->caps().reads_complete_late;
    fenced_reads_ = device_->caps().fenced_reads;
    sq_.Limit(attr.cap.max_send_wr);
    signal_every_ = std::max<uint32_t>(1, std::min(attr.cap.max_send_wr, std::max<uint32_t>(a.initiator_depth, 1)) / 2);
    // INIT now: ND takes Receives before the connection exists.
    ibv_qp_attr init{};
    init.qp_state = IBV_QPS_INIT;
    init.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    init.port_num = device_->caps().port;
    init.pkey_index = 0;
    const int mask = device_->caps().iwarp ? (IBV_QP_STATE | IBV_QP_ACCESS_FLAGS)
                                           : (IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
    if (ibv_modify_qp(qp_, &init, mask) != 0) {
        OPENND_LOG(Warn, "ndverbs: a new queue pair does not go to INIT: %s", strerror(errno));
        ibv_destroy_qp(qp_);
        qp_ = nullptr;
        return;
    }
    rcq_->Attach(qp_->qp_num, this);
    if (icq != rcq) icq_->Attach(qp_->qp_num, this);
    if (srq_) srq_->AttachCq(rcq);
    device_->AddObject(qp_, this);
    Registry::Add(this);
}

QueuePair::~QueuePair() {
    if (!qp_) return;
    Registry::Remove(this);
    device_->RemoveObject(qp_);
    if (srq_) srq_->DetachCq(rcq_.get());
    rcq_->Detach(qp_->qp_num);
    if (icq_.get() != rcq_.get()) icq_->Detach(qp_->qp_num);
    ibv_destroy_qp(qp_);
}

QueuePair *QueuePair::Find(IUnknown *u) { return Registry::Find(u, IID_IND2QueuePair); }

void QueuePair::Fail() {
    if (!qp_) return;
    std::scoped_lock lock(send_mu_, recv_mu_);
    FailLocked();
}

void QueuePair::FailLocked() {
    state_.store(kFailed, std::memory_order_release);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp_, &attr, IBV_QP_STATE);  // every request posted is flushed by the device
}

HRESULT STDMETHODCALLTYPE QueuePair::Flush() {
    Fail();
    return ND_SUCCESS;
}

// Released: what is still posted completes ND_CANCELED before the queue
// pair goes (its CQs outlive it). The device flushes it once in ERR; its
// completions move into the CQs' rings while the queue pair is attached.
void QueuePair::OnFinalRelease() {
    Fail();
    // Receives all complete (each is signaled); a Send that finished
    // unsignaled before the flush never does, so the wait ends once the
    // receives are done and the sends stopped moving. Receives taken from
    // an SRQ are not counted here: the wait also lasts until they stop
    // coming (their slots are freed only by their completions).
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + std::chrono::seconds(2);
    auto moved = Clock::now();
    uint64_t last = sq_.outstanding(), shared = srq_completions_.load();
    while (Clock::now() < until) {
        rcq_->Poll();
        if (icq_.get() != rcq_.get()) icq_->Poll();
        if (sq_.outstanding() != last || srq_completions_.load() != shared) {
            last = sq_.outstanding();
            shared = srq_completions_.load();
            moved = Clock::now();
        }
        const bool quiet = Clock::now() - moved > std::chrono::milliseconds(20);
        if (!rq_.outstanding() && (!last || quiet) && (!srq_ || quiet)) break;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// Complete's every other case: failures and flushes, an SRQ's receive, a
// destroyed queue pair's completion, a window operation refused.
bool QueuePair::CompleteSlow(const ibv_wc &wc, ND2_RESULT *out) {
    const bool receive = (wc.wr_id & kReceiveBit) != 0;
    const uint64_t seq = wc.wr_id & kSeqMask;
    if (receive && srq_) return CompleteShared(wc, out);
    if ((wc.wr_id >> 48) != generation_) return false;  // a destroyed queue pair's (number reused)
    ShadowRing &ring = receive ? rq_ : sq_;
    const Slot s = ring.At(seq);
    ring.RetireThrough(seq);
    HRESULT status = LocalFailure(wc.status, static_cast<ND2_REQUEST_TYPE>(s.type), [&] { return KeyGone(s.lkey); });
    if (SUCCEEDED(status) && s.status) status = s.status;  // a window operation the provider refused
    // An emulated Bind or Invalidate took effect when posted; only its
    // marker's trip to the peer fails when the connection fails first (a
    // peer's Write through the window just invalidated does that): flushed,
    // or on siw failed in flight (LOC_QP_OP_ERR). A device's own Invalidate
    // would have completed locally: so does this one, unless a request
    // before it failed.
    const bool applied = s.applied && wc.status != IBV_WC_SUCCESS && !ring.failed;
    if (applied) {
        state_.store(kFailed, std::memory_order_release);
        status = s.status;
    }
    if (FAILED(status)) {
        OPENND_LOG(Debug, "ndverbs: qp %u: %s (vendor %u) for request type %d", qp_->qp_num,
                   ibv_wc_status_str(wc.status), wc.vendor_err, s.type);
        state_.store(kFailed, std::memory_order_release);  // an RC queue pair is in ERR after any error
        ring.failed = true;
        if (s.request == ring.failed_request) return false;  // a later part of a request already reported
        if (!s.last) ring.failed_request = s.request;
    } else if (!s.last || (!s.signaled && SUCCEEDED(status))) {
        return false;
    }
    out->Status = status;
    out->BytesTransferred = receive ? (SUCCEEDED(status) ? wc.byte_len : 0) : s.bytes;
    out->QueuePairContext = context_;
    out->RequestContext = s.context;
    out->RequestType = static_cast<ND2_REQUEST_TYPE>(s.type);
    return true;
}

// A receive taken from the SRQ: its slot there gives its context.
bool QueuePair::CompleteShared(const ibv_wc &wc, ND2_RESULT *out) {
    if ((wc.wr_id >> 48) != srq_->generation()) return false;
    const SrqReceive r = srq_->Complete(static_cast<uint32_t>(wc.wr_id & kSeqMask));
    srq_completions_.fetch_add(1, std::memory_order_relaxed);
    const HRESULT status = LocalFailure(wc.status, Nd2RequestTypeReceive, [&] { return KeyGone(r.lkey); });
    if (FAILED(status)) {
        OPENND_LOG(Debug, "ndverbs: qp %u: %s (vendor %u) for a shared receive", qp_->qp_num,
                   ibv_wc_status_str(wc.status), wc.vendor_err);
        state_.store(kFailed, std::memory_order_release);
    }
    *out = {status, SUCCEEDED(status) ? wc.byte_len : 0, context_, r.context, Nd2RequestTypeReceive};
    return true;
}

void QueuePair::OnAsyncEvent(ibv_event_type type) {
    switch (type) {
    case IBV_EVENT_COMM_EST:  // data came before the RTU: the connection is up
        if (rdma_cm_id *id = cm_id_.load()) rdma_notify(id, IBV_EVENT_COMM_EST);
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR: state_.store(kFailed, std::memory_order_release); break;
    default: break;
    }
}

}  // namespace opennd::verbs
