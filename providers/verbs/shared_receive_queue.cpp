// The verbs shared receive queue (shared_receive_queue.h).
#include "shared_receive_queue.h"

#include <algorithm>

#include "completion_queue.h"
#include "opennd/kit/post_checks.h"
#include "opennd/kit/registry.h"
#include "opennd/log.h"
#include "queue_pair.h"

namespace opennd::verbs {
namespace {
using Registry = kit::Registry<SharedReceiveQueue, IND2SharedReceiveQueue>;
}

SharedReceiveQueue::SharedReceiveQueue(std::shared_ptr<Device> device, IND2Adapter *adapter,
                                       const kit::SharedReceiveQueueArgs &a)
    : kit::SharedReceiveQueue(a.file, a.depth, device->info().MaxSharedReceiveQueueDepth, a.threshold, a.affinity),
      device_(std::move(device)), adapter_(adapter, true),
      // As for a queue pair's receives: the adapter's SGEs, whatever was asked (COMPAT).
      max_sge_(device_->info().MaxReceiveSge), max_transfer_(device_->info().MaxTransferLength),
      generation_(NewGeneration()),
      chunks_((device_->info().MaxSharedReceiveQueueDepth + kChunk - 1) / kChunk) {
    // A device that cannot resize an SRQ gets one as deep as ND allows
    // now, so Modify can deepen it later (a provider may allocate more).
    ibv_srq_init_attr init{};
    init.attr.max_wr = device_->caps().resize_srq ? a.depth : device_->info().MaxSharedReceiveQueueDepth;
    init.attr.max_sge = max_sge_;
    srq_ = ibv_create_srq(device_->pd(), &init);
    if (!srq_) {
        OPENND_LOG(Debug, "ndverbs: ibv_create_srq(%u WRs, %u SGEs): %s", a.depth, max_sge_, strerror(errno));
        return;
    }
    max_wr_ = std::max(init.attr.max_wr, a.depth);
    device_->AddObject(srq_, this);
    Registry::Add(this);
}

SharedReceiveQueue::~SharedReceiveQueue() {
    if (srq_) {
        Registry::Remove(this);
        device_->RemoveObject(srq_);
        ibv_destroy_srq(srq_);
    }
    for (auto &c : chunks_) delete c.load();
}

SharedReceiveQueue *SharedReceiveQueue::Find(IUnknown *u) { return Registry::Find(u, IID_IND2SharedReceiveQueue); }

void SharedReceiveQueue::AttachCq(CompletionQueue *cq) {
    std::lock_guard<std::mutex> lock(cqs_mu_);
    cqs_.push_back(cq);
}

void SharedReceiveQueue::DetachCq(CompletionQueue *cq) {
    std::lock_guard<std::mutex> lock(cqs_mu_);
    if (auto it = std::find(cqs_.begin(), cqs_.end(), cq); it != cqs_.end()) cqs_.erase(it);
}

int64_t SharedReceiveQueue::FreeSlotLocked() {
    for (uint32_t i = 0; i < capacity_; ++i) {
        const uint32_t index = (cursor_ + i) % capacity_;
        if (!At(index).busy.load(std::memory_order_acquire)) {
            cursor_ = index + 1;
            return index;
        }
    }
    const uint32_t chunk = capacity_ / kChunk;
    if (chunk >= chunks_.size()) return -1;
    chunks_[chunk].store(new Chunk, std::memory_order_release);
    capacity_ += kChunk;
    cursor_ = chunk * kChunk + 1;
    return chunk * kChunk;
}

HRESULT SharedReceiveQueue::Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) {
    const HRESULT hr = kit::CheckReceive(max_sge_, max_transfer_, sge, nsge);
    if (FAILED(hr)) return hr;
    if (PostOne(ctx, sge, nsge) == ND_SUCCESS) return ND_SUCCESS;
    // Full by the completions polled so far: receives the device has
    // completed since are not posted any more (R087 counts what is posted).
    DrainCqs();
    return PostOne(ctx, sge, nsge);
}

HRESULT SharedReceiveQueue::PostOne(VOID *ctx, const ND2_SGE sge[], ULONG nsge) {
    std::lock_guard<std::mutex> lock(this->lock());
    if (PostedLocked() >= DepthLocked()) return ND_NO_MORE_ENTRIES;  // R087
    const int64_t index = FreeSlotLocked();
    if (index < 0) return ND_NO_MORE_ENTRIES;
    Slot &slot = At(static_cast<uint32_t>(index));
    slot.r = {ctx, nsge ? sge[0].MemoryRegionToken : 0};
    slot.busy.store(true, std::memory_order_release);
    ibv_recv_wr wr{};
    ibv_sge empty{0, 0, 0};
    static_assert(sizeof(ND2_SGE) == sizeof(ibv_sge));
    wr.sg_list = nsge ? reinterpret_cast<ibv_sge *>(const_cast<ND2_SGE *>(sge)) : &empty;
    wr.num_sge = nsge ? static_cast<int>(nsge) : 1;  // a zero-byte receive: siw refuses one with no SGE
    wr.wr_id = (generation_ << 48) | kReceiveBit | static_cast<uint64_t>(index);
    ibv_recv_wr *bad = nullptr;
    if (ibv_post_srq_recv(srq_, &wr, &bad) != 0) {
        slot.busy.store(false, std::memory_order_release);
        return ND_NO_MORE_ENTRIES;
    }
    posted_.store(posted_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return ND_SUCCESS;
}

SrqReceive SharedReceiveQueue::Complete(uint32_t index) {
    Slot &slot = At(index);
    (void)slot.busy.load(std::memory_order_acquire);  // pairs with Receive's store: the slot's fields are its
    const SrqReceive r = slot.r;
    slot.busy.store(false, std::memory_order_release);
    done_.fetch_add(1, std::memory_order_acq_rel);
    if (MaybeArmed()) {
        std::lock_guard<std::mutex> lock(this->lock());
        ThresholdCheckLocked(PostedLocked());
    }
    return r;
}

// ND's depth only grows the device SRQ when it must (it never shrinks).
HRESULT SharedReceiveQueue::GrowLocked(ULONG depth) {
    if (depth <= max_wr_) return ND_SUCCESS;
    ibv_srq_attr attr{};
    attr.max_wr = depth;
    if (ibv_modify_srq(srq_, &attr, IBV_SRQ_MAX_WR) != 0) return ND_INSUFFICIENT_RESOURCES;
    max_wr_ = depth;
    return ND_SUCCESS;
}

void SharedReceiveQueue::DrainCqs() {
    std::vector<kit::ComPtr<CompletionQueue>> cqs;
    {
        std::lock_guard<std::mutex> lock(cqs_mu_);  // an attached CQ outlives its entry
        for (CompletionQueue *cq : cqs_)
            if (std::none_of(cqs.begin(), cqs.end(), [cq](const auto &c) { return c.get() == cq; }))
                cqs.emplace_back(cq, true);
    }
    for (const auto &cq : cqs) cq->Poll();
}

// Arms the device's limit (one-shot, so at every Notify) at the
// threshold, then counts what the CQs already hold.
void SharedReceiveQueue::OnArmed() {
    {
        std::lock_guard<std::mutex> lock(this->lock());
        if (!MaybeArmed() || ThresholdLocked() == 0) return;
        ibv_srq_attr attr{};
        attr.srq_limit = std::min<uint32_t>(ThresholdLocked(), max_wr_);
        if (ibv_modify_srq(srq_, &attr, IBV_SRQ_LIMIT) != 0)
            OPENND_LOG(Debug, "ndverbs: arming an SRQ limit of %u: %s", attr.srq_limit, strerror(errno));
    }
    DrainCqs();
    std::lock_guard<std::mutex> lock(this->lock());
    ThresholdCheckLocked(PostedLocked());
}

void SharedReceiveQueue::OnAsyncEvent(ibv_event_type type) {
    std::lock_guard<std::mutex> lock(this->lock());
    if (type == IBV_EVENT_SRQ_LIMIT_REACHED) FireLocked(ND_SUCCESS);  // fewer posted than the limit now
    else if (type == IBV_EVENT_SRQ_ERR) FireLocked(ND_INTERNAL_ERROR);  // the SRQ and its queue pairs are lost
}

}  // namespace opennd::verbs
