// IND2SharedReceiveQueue's rules for every provider (§9, R083-R088): Modify
// (0 leaves a value unchanged; a depth below the receives posted is
// ND_BUFFER_OVERFLOW and changes nothing), threshold notification (not
// armed until Notify; every Notify outstanding completes once the receives
// posted fall below the threshold; threshold 0: never), notify affinity and
// the overlapped requests. A provider keeps its receives under lock() and
// calls ThresholdCheckLocked whenever it takes one; Receive and its
// argument checks (post_checks.h) are the provider's, so its per-message
// path has no extra call or lock. A provider whose device counts the
// receives (a verbs SRQ's limit event) arms it in OnArmed and reports it
// with FireLocked; one that learns of a taken receive only later asks
// MaybeArmed (no lock) before it checks.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "ndspi.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"

namespace opennd::kit {

class SharedReceiveQueue : public Unknown<IND2SharedReceiveQueue> {
public:
    // `max_depth`: the adapter's MaxSharedReceiveQueueDepth.
    SharedReceiveQueue(HANDLE overlapped_file, ULONG depth, ULONG max_depth, ULONG threshold, KAFFINITY affinity);
    ~SharedReceiveQueue() override;
    bool Valid() const { return requests_.Valid(); }
    // True while a Notify waits.
    bool Armed();

    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override {
        return requests_.Result(ov, wait);
    }
    HRESULT STDMETHODCALLTYPE GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) final;
    HRESULT STDMETHODCALLTYPE Modify(ULONG depth, ULONG threshold) final;
    HRESULT STDMETHODCALLTYPE Notify(OVERLAPPED *ov) final;

protected:
    std::mutex &lock() { return mu_; }
    ULONG DepthLocked() const { return depth_; }
    ULONG ThresholdLocked() const { return threshold_; }
    // Whether a Notify may be waiting (no lock: a hint for the data path).
    bool MaybeArmed() const { return waiting_.load(std::memory_order_acquire); }
    // Completes every Notify waiting if `posted` (the receives now posted)
    // is below the threshold. Under lock().
    void ThresholdCheckLocked(size_t posted) {
        if (threshold_ != 0 && !armed_.empty() && posted < threshold_) FireLocked(ND_SUCCESS);
    }
    // Completes every Notify waiting with `status` (ND_SUCCESS: the
    // threshold was crossed; an error: the SRQ failed). Under lock().
    void FireLocked(HRESULT status);
    // The receives posted now (Modify, Notify). Under lock().
    virtual size_t PostedLocked() const = 0;
    // Modify raises the depth to `depth`: ND_SUCCESS, or why not (the SRQ
    // is then unchanged). Under lock().
    virtual HRESULT GrowLocked(ULONG /*depth*/) { return ND_SUCCESS; }
    // A Notify or Modify left Notify requests waiting (called without the lock).
    virtual void OnArmed() {}

private:

    OverlappedRequests requests_;
    const ULONG max_depth_;
    const KAFFINITY affinity_;
    std::mutex mu_;
    ULONG depth_, threshold_;
    std::vector<OVERLAPPED *> armed_;
    std::atomic<bool> waiting_{false};  // !armed_.empty()
};

}  // namespace opennd::kit
