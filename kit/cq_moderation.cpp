// A kit CQ's interrupt moderation (opennd/cq_moderation.h): the limits, the
// check a trigger makes before it fires, and the timer's look. NDKPI's
// NdkControlCqInterruptModeration reaches Moderate through the
// IOpenNdCqModeration tear-off (cq_extensions.cpp).
#include <algorithm>

#include "cq_moderation_timer.h"
#include "opennd/kit/clock.h"
#include "opennd/kit/completion_queue.h"

namespace opennd::kit {

namespace {

constexpr ULONG kNoLimit = 0xFFFFFFFF;  // MAXULONG

}  // namespace

HRESULT CompletionQueue::Moderate(ULONG interval_us, ULONG count) {
    const bool moderated = interval_us != 0 && count > 1;
    // A limit in time needs the timer thread: started here, not under the
    // spin lock every Push takes (one made twice by racing calls is dropped).
    std::unique_ptr<ModerationTimer> made;
    if (moderated && interval_us != kNoLimit) {
        bool need;
        {
            std::lock_guard<SpinLock> lock(mu_);
            need = !timer_;
        }
        if (need) made = std::make_unique<ModerationTimer>(this);
    }
    std::lock_guard<SpinLock> lock(mu_);
    if (interval_us == kNoLimit && (count == kNoLimit || count > depth_)) return ND_INVALID_PARAMETER_MIX;
    if (made && !timer_) timer_ = std::move(made);
    moderated_ = moderated;
    mod_count_ = count == kNoLimit ? UINT64_MAX : count;
    mod_interval_ns_ = interval_us == kNoLimit ? UINT64_MAX : uint64_t(interval_us) * 1000;
    // New limits apply to what already waits: it may be due now.
    if (AnyTriggeredLocked() && FireNowLocked()) FireLocked(ND_SUCCESS);
    return ND_SUCCESS;
}

// A Notify is armed and satisfied. Errors are never held back. A count
// above what the CQ holds is reached when it is full (NDKPI: "no count
// limit"; a full CQ fires rather than waits to overrun).
bool CompletionQueue::ModerationDueLocked() {
    const uint64_t from = std::max(notified_, head_);
    if (last_error_ > from) return true;
    if (tail_ - from >= std::min(mod_count_, depth_)) return true;
    if (mod_interval_ns_ == UINT64_MAX) return false;
    const uint64_t now = NowNs();
    if (!satisfied_ns_) {
        satisfied_ns_ = now;
        timer_->At(now + mod_interval_ns_);
    }
    return now - satisfied_ns_ >= mod_interval_ns_;
}

void CompletionQueue::OnModerationTimer() {
    std::lock_guard<SpinLock> lock(mu_);
    if (!satisfied_ns_) return;  // it fired, or was cancelled, meanwhile
    if (!AnyTriggeredLocked()) {
        satisfied_ns_ = 0;  // what satisfied it was taken by GetResults: the next entry starts anew
        return;
    }
    if (!moderated_ || NowNs() - satisfied_ns_ >= mod_interval_ns_)
        FireLocked(ND_SUCCESS);
    else
        timer_->At(satisfied_ns_ + mod_interval_ns_);
}

}  // namespace opennd::kit
