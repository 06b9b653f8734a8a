// IND2CompletionQueue for software providers: a ring of ND2_RESULT entries
// (OPENND_RESULT_EX: a receive may name the token its Send invalidated,
// which GetResultsEx of IOpenNdCompletionQueueExt reports) with the SPI's
// notification rules (§3.4):
//  - a new CQ is disarmed; each Notify arms it for one trigger, and one
//    trigger completes every Notify outstanding at that moment;
//  - ANY is satisfied by any new entry, SOLICITED by the receive completion
//    of a solicited Send, ERRORS by an error; errors satisfy every type;
//  - an entry triggers at most once (entries that triggered a notification
//    do not satisfy the next Notify), but an entry still queued that has not
//    triggered satisfies a Notify armed after it arrived (no lost wake-ups);
//  - a full CQ overruns: every Notify completes with ND_BUFFER_OVERFLOW and
//    the CQ reports nothing further.
// Interrupt moderation (opennd/cq_moderation.h, set through the CQ's
// IOpenNdCqModeration) only defers a trigger: a satisfied Notify fires once
// `count` entries are queued or `interval` after it was first satisfied, on
// the CQ's timer thread (made on first use) if nothing else comes.
//
// Producers call Push from any thread. Locking: one short lock (SpinLock);
// GetResults takes it too (a lock-free ring can replace this without changing the interface).
// Except on the polling path: while GetResults runs its pollers on an empty
// CQ with no Notify armed, what they push on that thread goes straight into
// the caller's array, with no lock and no ring. A queue pair pushes its
// entries under its own lock, and the CQ was empty, so its entries keep
// their order; nothing armed, so no notification is owed. (A Notify armed
// by another thread at that very moment is not completed by such an entry,
// which that poll consumes anyway; it fires for the next one.)
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "opennd/cq_moderation.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"
#include "opennd/kit/reader_gate.h"
#include "opennd/kit/spin_lock.h"
#include "opennd/nd_extensions.h"

namespace opennd::kit {

// Something that produces this CQ's entries lazily: GetResults asks every
// poller to make progress first (a software provider's queue pairs move
// incoming data when the application polls, with no thread in between).
class CqPoller {
public:
    virtual void PollForCq() = 0;

protected:
    ~CqPoller() = default;
};

// The calling thread's CPU mask (the default notification affinity).
KAFFINITY ThreadAffinity();

class CompletionQueue : public Unknown<IND2CompletionQueue> {
public:
    CompletionQueue(HANDLE overlapped_file, ULONG depth, ULONG max_depth, KAFFINITY affinity);
    ~CompletionQueue() override;
    bool Valid() const { return requests_.Valid(); }
    // The kit CQ behind an interface pointer, if it is one created by this
    // provider library; nullptr for anything else (another provider's CQ, a
    // different object). No reference is added.
    static CompletionQueue *FromUnknown(IUnknown *unknown);

    // Adds an entry. `solicited`: the receive completion of a Send that
    // carried SEND_AND_SOLICIT_EVENT. Returns false if the CQ overran (the
    // entry is lost and the CQ is dead) or was already dead.
    bool Push(const ND2_RESULT &result, bool solicited = false) {
        return PushEntry(Extend(result, result.RequestType, 0), solicited);
    }
    // A receive completion whose Send invalidated `token` (a Send with
    // Invalidate): GetResults reports it as `result`, GetResultsEx as
    // OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE with the token.
    bool PushInvalidated(const ND2_RESULT &result, UINT32 token, bool solicited = false) {
        return PushEntry(Extend(result, OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE, token), solicited);
    }
    bool Dead();
    // The CQ overran somewhere the ring cannot see (a device CQ): it is
    // dead from now on, as if Push had overrun it.
    void Overrun();
    // True while a Notify is armed and has not fired.
    bool Armed();
    // What the armed Notify requests wait for, read under the CQ's lock:
    // none, only a solicited receive, or any completion (an ANY or ERRORS
    // request: errors satisfy every type). A device armed from this is
    // armed for the requests that are really outstanding, never from a
    // flag another thread may have cleared meanwhile.
    enum class Arming { kNone, kSolicited, kEvery };
    Arming ArmedFor();
    // Pollers are called by GetResults, outside the CQ lock. RemovePoller
    // waits for a poll in progress to finish.
    void AddPoller(CqPoller *p);
    void RemovePoller(CqPoller *p);
    // IOpenNdCqModeration::Moderate (cq_moderation.cpp).
    HRESULT Moderate(ULONG interval_us, ULONG count);

    // IOpenNdCompletionQueueExt::GetResultsEx (cq_extensions.cpp).
    ULONG GetResultsEx(OPENND_RESULT_EX results[], ULONG n);

    // IUnknown: also answers IID_IOpenNdCqModeration and
    // IID_IOpenNdCompletionQueueExt (tear-offs, cq_extensions.cpp).
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override;

    // IND2Overlapped
    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override;
    // IND2CompletionQueue
    HRESULT STDMETHODCALLTYPE GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) override;
    HRESULT STDMETHODCALLTYPE Resize(ULONG depth) override;
    HRESULT STDMETHODCALLTYPE Notify(ULONG type, OVERLAPPED *ov) override;
    ULONG STDMETHODCALLTYPE GetResults(ND2_RESULT results[], ULONG n) override;

protected:
    // Called (outside the CQ lock) when a Notify was armed and did not fire at
    // once: a provider with a progress thread wakes it here.
    virtual void OnArmed() {}
    // Nothing queued, no Notify armed, not overrun: what a poll finds now
    // may go straight into the caller's array (the direct path of the
    // header's comment). A provider that overrides GetResults to poll its
    // device itself tests this first, and again under the lock its own
    // producers push under, and otherwise calls this class's GetResults.
    bool Quiet() const {
        return !any_armed_.load(std::memory_order_relaxed) &&
               published_.load(std::memory_order_acquire) == taken_.load(std::memory_order_acquire);
    }

private:
    struct ArmedRequest {
        OVERLAPPED *ov;
        ULONG type;
    };
    class ModerationTimer;
    static OPENND_RESULT_EX Extend(const ND2_RESULT &r, ND2_REQUEST_TYPE type, UINT32 token) {
        return {r.Status, r.BytesTransferred, r.QueuePairContext, r.RequestContext, type, token};
    }
    bool PushEntry(const OPENND_RESULT_EX &entry, bool solicited);
    // GetResults and GetResultsEx: Out is ND2_RESULT or OPENND_RESULT_EX.
    template <class Out>
    ULONG TakeInto(Out results[], ULONG n);
    bool TriggeredLocked(ULONG type) const;
    bool AnyTriggeredLocked() const;
    // A trigger fires now: unmoderated, or moderation's count or time is up.
    bool FireNowLocked() { return !moderated_ || ModerationDueLocked(); }
    bool ModerationDueLocked();
    void OnModerationTimer();
    void FireLocked(HRESULT status);
    void OverrunLocked();

    OverlappedRequests requests_;
    const ULONG max_depth_;
    const KAFFINITY affinity_;
    SpinLock mu_;
    // Entry s is ring_[s & mask_]: the ring is a power of two, depth_ + 1
    // long (a division on every push and take cost more than the push's
    // other work).
    std::vector<OPENND_RESULT_EX> ring_;
    uint64_t mask_ = 0;
    uint64_t depth_ = 0;  // entries the CQ holds before it overruns: the depth asked for, rounded up
    uint64_t head_ = 0;  // sequence number of the oldest queued entry
    uint64_t tail_ = 0;  // sequence number the next entry gets
    // Copies of tail_ and head_ stored under mu_, read without it: an empty
    // CQ is seen without taking the lock (the common case when polling).
    std::atomic<uint64_t> published_{0}, taken_{0};
    uint64_t notified_ = 0;       // entries below this have triggered a notification
    uint64_t last_solicited_ = 0; // 1 + sequence of the newest solicited entry
    uint64_t last_error_ = 0;     // 1 + sequence of the newest error entry
    bool overrun_ = false;
    std::vector<ArmedRequest> armed_;
    std::atomic<bool> any_armed_{false};  // !armed_.empty(), stored under mu_, read without it
    // Pollers: GetResults reads the list through the gate, with no lock and
    // no locked instruction; AddPoller/RemovePoller edit it once no poll is
    // inside. A poll that meets an edit in progress skips polling once,
    // which only delays entries to the next call.
    ReaderGate pollers_gate_;
    std::vector<CqPoller *> pollers_;
    // Moderation (under mu_): limits (UINT64_MAX: none), and when the armed
    // Notify was first satisfied (0: it is not).
    bool moderated_ = false;
    uint64_t mod_count_ = UINT64_MAX, mod_interval_ns_ = UINT64_MAX;
    uint64_t satisfied_ns_ = 0;
    std::unique_ptr<ModerationTimer> timer_;  // stopped first in the destructor
};

}  // namespace opennd::kit
