#include "srq.h"

#include <sched.h>

#include <algorithm>

#include "soft_limits.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/post_checks.h"
#include "opennd/kit/registry.h"

namespace soft {
namespace kit = opennd::kit;
namespace {
using SrqRegistry = kit::Registry<SharedReceiveQueue, IND2SharedReceiveQueue>;
}

SharedReceiveQueue::SharedReceiveQueue(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file, ULONG depth,
                                       ULONG max_sge, ULONG threshold, KAFFINITY affinity)
    : adapter_(adapter, true), engine_(std::move(engine)), requests_(file), max_sge_(max_sge),
      affinity_(affinity ? affinity : kit::ThreadAffinity()),
      depth_(depth), threshold_(threshold) {
    SrqRegistry::Add(this);
}

SharedReceiveQueue::~SharedReceiveQueue() {
    SrqRegistry::Remove(this);
    CancelOverlappedRequests();
}

SharedReceiveQueue *SharedReceiveQueue::Find(IUnknown *u) {
    return SrqRegistry::Find(u, IID_IND2SharedReceiveQueue);
}

void SharedReceiveQueue::CheckThresholdLocked() {
    if (threshold_ == 0 || armed_.empty() || receives_.size() >= threshold_) return;
    for (OVERLAPPED *ov : armed_) requests_.Complete(ov, ND_SUCCESS);
    armed_.clear();
}

bool SharedReceiveQueue::Take(PostedReceive *r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (receives_.empty()) return false;
    *r = receives_.front();
    receives_.pop_front();
    CheckThresholdLocked();
    return true;
}

bool SharedReceiveQueue::Armed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !armed_.empty();
}

void SharedReceiveQueue::AddQp(QueuePair *qp) {
    std::lock_guard<std::mutex> lock(qps_mu_);
    qps_.push_back(qp);
}

void SharedReceiveQueue::RemoveQp(QueuePair *qp) {
    std::lock_guard<std::mutex> lock(qps_mu_);
    std::erase(qps_, qp);
}

HRESULT SharedReceiveQueue::CancelOverlappedRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_.clear();
    return requests_.CancelAll();
}

HRESULT SharedReceiveQueue::GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) {
    if (!group || !affinity) return ND_INVALID_PARAMETER;
    *group = 0;
    *affinity = affinity_;
    return ND_SUCCESS;
}

HRESULT SharedReceiveQueue::Modify(ULONG depth, ULONG threshold) {
    if (depth > kMaxQueueDepth) return ND_INVALID_PARAMETER;
    std::lock_guard<std::mutex> lock(mu_);
    if (depth != 0 && depth < receives_.size()) return ND_BUFFER_OVERFLOW;  // R084
    if (depth) depth_ = depth;                                              // 0: unchanged (R083)
    if (threshold) threshold_ = threshold;
    CheckThresholdLocked();
    return ND_SUCCESS;
}

HRESULT SharedReceiveQueue::Notify(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::lock_guard<std::mutex> lock(mu_);
    HRESULT hr = requests_.Begin(ov);
    if (hr != ND_PENDING) return hr;
    armed_.push_back(ov);
    CheckThresholdLocked();
    return ND_PENDING;
}

HRESULT SharedReceiveQueue::Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) {
    HRESULT hr = kit::CheckReceive(max_sge_, kMaxTransferLength, sge, nsge);
    if (FAILED(hr)) return hr;
    PostedReceive r;
    r.Assign(ctx, sge, nsge);
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (receives_.size() >= depth_) return ND_NO_MORE_ENTRIES;
        receives_.push_back(r);
    }
    // A Send may be waiting on one of the QPs for exactly this receive.
    std::vector<QueuePair *> qps;
    {
        std::lock_guard<std::mutex> lock(qps_mu_);
        for (QueuePair *qp : qps_)
            if (qp->TryAddRef()) qps.push_back(qp);
    }
    for (QueuePair *qp : qps) {
        qp->KickReceive();
        qp->Release();
    }
    return ND_SUCCESS;
}

}  // namespace soft
