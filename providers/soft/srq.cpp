#include "srq.h"

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
    : kit::SharedReceiveQueue(file, depth, kMaxQueueDepth, threshold, affinity), adapter_(adapter, true),
      engine_(std::move(engine)), max_sge_(max_sge) {
    SrqRegistry::Add(this);
}

SharedReceiveQueue::~SharedReceiveQueue() { SrqRegistry::Remove(this); }

SharedReceiveQueue *SharedReceiveQueue::Find(IUnknown *u) {
    return SrqRegistry::Find(u, IID_IND2SharedReceiveQueue);
}

bool SharedReceiveQueue::Take(PostedReceive *r) {
    std::lock_guard<std::mutex> guard(lock());
    if (receives_.empty()) return false;
    *r = receives_.front();
    receives_.pop_front();
    ThresholdCheckLocked(receives_.size());
    return true;
}

void SharedReceiveQueue::AddQp(QueuePair *qp) {
    std::lock_guard<std::mutex> lock(qps_mu_);
    qps_.push_back(qp);
}

void SharedReceiveQueue::RemoveQp(QueuePair *qp) {
    std::lock_guard<std::mutex> lock(qps_mu_);
    std::erase(qps_, qp);
}

HRESULT SharedReceiveQueue::Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) {
    HRESULT hr = kit::CheckReceive(max_sge_, kMaxTransferLength, sge, nsge);
    if (FAILED(hr)) return hr;
    PostedReceive r;
    r.Assign(ctx, sge, nsge);
    {
        std::lock_guard<std::mutex> guard(lock());
        if (receives_.size() >= DepthLocked()) return ND_NO_MORE_ENTRIES;
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
