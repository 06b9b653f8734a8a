#include "opennd/kit/shared_receive_queue.h"

#include "opennd/kit/completion_queue.h"

namespace opennd::kit {

SharedReceiveQueue::SharedReceiveQueue(HANDLE overlapped_file, ULONG depth, ULONG max_depth, ULONG threshold,
                                       KAFFINITY affinity)
    : requests_(overlapped_file), max_depth_(max_depth), affinity_(affinity ? affinity : ThreadAffinity()),
      depth_(depth), threshold_(threshold) {}

SharedReceiveQueue::~SharedReceiveQueue() { CancelOverlappedRequests(); }

bool SharedReceiveQueue::Armed() {
    std::lock_guard<std::mutex> lock(mu_);
    return !armed_.empty();
}

void SharedReceiveQueue::FireLocked(HRESULT status) {
    for (OVERLAPPED *ov : armed_) requests_.Complete(ov, status);
    armed_.clear();
    waiting_.store(false, std::memory_order_release);
}

HRESULT SharedReceiveQueue::CancelOverlappedRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_.clear();
    waiting_.store(false, std::memory_order_release);
    return requests_.CancelAll();
}

HRESULT SharedReceiveQueue::GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) {
    if (!group || !affinity) return ND_INVALID_PARAMETER;
    *group = 0;
    *affinity = affinity_;
    return ND_SUCCESS;
}

HRESULT SharedReceiveQueue::Modify(ULONG depth, ULONG threshold) {
    if (depth > max_depth_) return ND_INVALID_PARAMETER;
    {
        std::lock_guard<std::mutex> lock(mu_);
        const size_t posted = PostedLocked();
        if (depth != 0 && depth < posted) return ND_BUFFER_OVERFLOW;  // R084
        if (depth > depth_) {
            const HRESULT hr = GrowLocked(depth);
            if (FAILED(hr)) return hr;
        }
        if (depth) depth_ = depth;  // 0: unchanged (R083)
        if (threshold) threshold_ = threshold;
        ThresholdCheckLocked(posted);
        if (armed_.empty() || !threshold) return ND_SUCCESS;
    }
    OnArmed();  // the threshold changed under a waiting Notify
    return ND_SUCCESS;
}

HRESULT SharedReceiveQueue::Notify(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    {
        std::lock_guard<std::mutex> lock(mu_);
        HRESULT hr = requests_.Begin(ov);
        if (hr != ND_PENDING) return hr;
        armed_.push_back(ov);
        waiting_.store(true, std::memory_order_release);
        ThresholdCheckLocked(PostedLocked());  // already below: completes at once (R085)
        if (armed_.empty() || threshold_ == 0) return ND_PENDING;
    }
    OnArmed();
    return ND_PENDING;
}

}  // namespace opennd::kit
