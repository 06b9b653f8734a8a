#include "opennd/kit/overlapped.h"

namespace opennd::kit {

bool CompletionTarget::Acquire(HANDLE overlapped_file) {
    if (target_) OpenNdReleaseCompletionTarget(target_);
    target_ = OpenNdAcquireCompletionTarget(overlapped_file);
    return target_ != nullptr;
}

CompletionTarget::~CompletionTarget() {
    if (target_) OpenNdReleaseCompletionTarget(target_);
}

OverlappedRequests::OverlappedRequests(HANDLE overlapped_file) { target_.Acquire(overlapped_file); }

OverlappedRequests::~OverlappedRequests() { CancelAll(); }

HRESULT OverlappedRequests::Begin(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER;
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.count(ov)) return ND_INVALID_PARAMETER;  // reusing an OVERLAPPED still in flight
    ov->InternalHigh = 0;
    __atomic_store_n(&ov->Internal, static_cast<ULONG_PTR>(static_cast<uint32_t>(ND_PENDING)), __ATOMIC_RELEASE);
    order_.push_back(Pending{ov, OpenNdBeginOverlapped(ov)});
    index_.emplace(ov, std::prev(order_.end()));
    return ND_PENDING;
}

void OverlappedRequests::DeliverLocked(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes) {
    auto it = index_.find(ov);
    OpenNdEventRef *event = it->second->event;
    order_.erase(it->second);
    index_.erase(it);
    OpenNdCompleteOverlappedEx(target_.get(), ov, status, bytes, event);  // no target: status and event only
    done_.notify_all();
}

bool OverlappedRequests::Complete(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!index_.count(ov)) return false;
    DeliverLocked(ov, status, bytes);
    return true;
}

HRESULT OverlappedRequests::CompleteNow(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes) {
    HRESULT hr = Begin(ov);
    if (hr != ND_PENDING) return hr;
    Complete(ov, status, bytes);
    return ND_PENDING;
}

bool OverlappedRequests::CompleteOldest(HRESULT status, ULONG_PTR bytes, OVERLAPPED **which) {
    std::lock_guard<std::mutex> lock(mu_);
    if (order_.empty()) return false;
    OVERLAPPED *ov = order_.front().ov;
    if (which) *which = ov;
    DeliverLocked(ov, status, bytes);
    return true;
}

bool OverlappedRequests::IsPending(OVERLAPPED *ov) {
    std::lock_guard<std::mutex> lock(mu_);
    return index_.count(ov) != 0;
}

size_t OverlappedRequests::PendingCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return order_.size();
}

HRESULT OverlappedRequests::CancelAll() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!order_.empty()) DeliverLocked(order_.front().ov, ND_CANCELED, 0);
    return ND_SUCCESS;
}

HRESULT OverlappedRequests::Result(OVERLAPPED *ov, BOOL wait) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::unique_lock<std::mutex> lock(mu_);
    if (!index_.count(ov)) {
        HRESULT hr = OverlappedStatus(ov);
        // Pending but not ours: waiting would never end.
        return hr == ND_PENDING ? ND_INVALID_PARAMETER_1 : hr;
    }
    if (!wait) return ND_PENDING;
    done_.wait(lock, [&] { return index_.count(ov) == 0; });
    return OverlappedStatus(ov);
}

}  // namespace opennd::kit
