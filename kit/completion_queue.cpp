#include "opennd/kit/completion_queue.h"

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "cq_moderation_timer.h"
#include "opennd/kit/registry.h"

namespace opennd::kit {
namespace {
using CqRegistry = Registry<CompletionQueue, IND2CompletionQueue>;

// The array of the GetResults (`out`) or GetResultsEx (`ex`) call this
// thread is in, while its pollers run on an empty CQ (see the header).
struct DirectSink {
    const CompletionQueue *cq;
    ND2_RESULT *out;
    OPENND_RESULT_EX *ex;
    ULONG n;
    ULONG got;
};

// What GetResults reports of an entry: an invalidating receive is a receive.
void Put(ND2_RESULT *out, const OPENND_RESULT_EX &e) {
    *out = {e.Status, e.BytesTransferred, e.QueuePairContext, e.RequestContext,
            e.RequestType == OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE ? Nd2RequestTypeReceive : e.RequestType};
}
void Put(OPENND_RESULT_EX *out, const OPENND_RESULT_EX &e) { *out = e; }

static_assert(sizeof(OPENND_RESULT_EX) == sizeof(ND2_RESULT) || sizeof(void *) != 8,
              "on LP64 the token sits in ND2_RESULT's tail padding");
static_assert(offsetof(OPENND_RESULT_EX, RequestType) == offsetof(ND2_RESULT, RequestType));
static_assert(offsetof(OPENND_RESULT_EX, RequestContext) == offsetof(ND2_RESULT, RequestContext));
thread_local DirectSink *t_direct __attribute__((tls_model("initial-exec"))) = nullptr;

uint64_t RingSize(uint64_t depth) {
    uint64_t n = 1;
    while (n < depth) n <<= 1;
    return n;
}

// A CQ holds more than it was asked for, as Windows hardware providers round
// a CQ up (mlx4: the next power of two above the depth, less one): programs
// that size a CQ to exactly their posted receives, and share it with their
// sends, depend on the slack (COMPAT). The ring is the capacity plus one.
uint64_t RingFor(uint64_t depth) { return RingSize(depth + 1); }

}  // namespace

// With no requested affinity, notifications follow the creating thread's
// affinity (R043: requested set, then calling thread, then process).
KAFFINITY ThreadAffinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    KAFFINITY mask = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int cpu = 0; cpu < static_cast<int>(sizeof(KAFFINITY) * 8); ++cpu)
            if (CPU_ISSET(cpu, &set)) mask |= KAFFINITY(1) << cpu;
    return mask;
}

CompletionQueue::CompletionQueue(HANDLE overlapped_file, ULONG depth, ULONG max_depth, KAFFINITY affinity)
    : requests_(overlapped_file), max_depth_(max_depth), affinity_(affinity ? affinity : ThreadAffinity()),
      ring_(RingFor(depth)), mask_(ring_.size() - 1), depth_(ring_.size() - 1) {
    CqRegistry::Add(this);
}

CompletionQueue::~CompletionQueue() {
    timer_.reset();  // its thread calls into this CQ
    CqRegistry::Remove(this);
}

CompletionQueue *CompletionQueue::FromUnknown(IUnknown *unknown) {
    return CqRegistry::Find(unknown, IID_IND2CompletionQueue);
}

bool CompletionQueue::Dead() {
    std::lock_guard<SpinLock> lock(mu_);
    return overrun_;
}

bool CompletionQueue::TriggeredLocked(ULONG type) const {
    // Something queued that has not triggered yet (seq >= notified_ and >= head_).
    uint64_t from = notified_ > head_ ? notified_ : head_;
    bool any = tail_ > from;
    bool error = last_error_ > from;
    bool solicited = last_solicited_ > from;
    if (error) return true;
    if (type == ND_CQ_NOTIFY_ANY) return any;
    if (type == ND_CQ_NOTIFY_SOLICITED) return solicited;
    return false;
}

// One trigger releases every armed request, so arming ANY while SOLICITED is
// armed upgrades the CQ to ANY.
bool CompletionQueue::AnyTriggeredLocked() const {
    for (const ArmedRequest &a : armed_)
        if (TriggeredLocked(a.type)) return true;
    return false;
}

void CompletionQueue::FireLocked(HRESULT status) {
    for (const ArmedRequest &a : armed_) requests_.Complete(a.ov, status);  // cancelled ones are skipped
    armed_.clear();
    any_armed_.store(false, std::memory_order_relaxed);
    notified_ = tail_;
    satisfied_ns_ = 0;
}

bool CompletionQueue::PushEntry(const OPENND_RESULT_EX &result, bool solicited) {
    DirectSink *d = t_direct;
    if (d && d->cq == this && d->got < d->n && Quiet()) {
        if (d->out)
            Put(&d->out[d->got++], result);
        else
            Put(&d->ex[d->got++], result);
        return true;
    }
    std::lock_guard<SpinLock> lock(mu_);
    if (overrun_) return false;
    if (tail_ - head_ == depth_) {
        OverrunLocked();
        return false;
    }
    ring_[tail_ & mask_] = result;
    ++tail_;
    published_.store(tail_, std::memory_order_release);
    if (FAILED(result.Status)) last_error_ = tail_;
    if (solicited) last_solicited_ = tail_;
    if (AnyTriggeredLocked() && FireNowLocked()) FireLocked(ND_SUCCESS);
    return true;
}

void CompletionQueue::OverrunLocked() {
    overrun_ = true;
    // Never equal to taken_ again: no Push hands a later entry straight
    // to a poller (the direct path), and every poll takes the lock.
    published_.store(UINT64_MAX, std::memory_order_release);
    FireLocked(ND_BUFFER_OVERFLOW);
}

void CompletionQueue::Overrun() {
    std::lock_guard<SpinLock> lock(mu_);
    if (!overrun_) OverrunLocked();
}

bool CompletionQueue::Armed() {
    std::lock_guard<SpinLock> lock(mu_);
    return !armed_.empty();
}

CompletionQueue::Arming CompletionQueue::ArmedFor() {
    std::lock_guard<SpinLock> lock(mu_);
    Arming a = Arming::kNone;
    for (const ArmedRequest &r : armed_) {
        if (r.type != ND_CQ_NOTIFY_SOLICITED) return Arming::kEvery;
        a = Arming::kSolicited;
    }
    return a;
}

void CompletionQueue::AddPoller(CqPoller *p) {
    pollers_gate_.Edit([&] { pollers_.push_back(p); });
}

void CompletionQueue::RemovePoller(CqPoller *p) {
    pollers_gate_.Edit([&] { std::erase(pollers_, p); });
}

ULONG CompletionQueue::GetResults(ND2_RESULT results[], ULONG n) { return TakeInto(results, n); }

template <class Out>
ULONG CompletionQueue::TakeInto(Out results[], ULONG n) {
    ULONG got = 0;
    {
        ReaderScope reading(pollers_gate_);
        if (reading.open()) {
            DirectSink sink{this, nullptr, nullptr, n, 0};
            if constexpr (std::is_same_v<Out, ND2_RESULT>)
                sink.out = results;
            else
                sink.ex = results;
            struct Installed {  // restored however the pollers return (one may throw)
                DirectSink *outer = t_direct;
                ~Installed() { t_direct = outer; }
            } installed;
            t_direct = &sink;
            for (CqPoller *p : pollers_) p->PollForCq();
            got = sink.got;
        }
    }
    if (got == n || published_.load(std::memory_order_acquire) == taken_.load(std::memory_order_acquire)) return got;
    // After an overrun what was queued before it is still handed out (real
    // completions, never dropped); nothing after it is queued.
    std::lock_guard<SpinLock> lock(mu_);
    while (got < n && head_ < tail_) Put(&results[got++], ring_[head_++ & mask_]);
    taken_.store(head_, std::memory_order_release);
    return got;
}

HRESULT CompletionQueue::Notify(ULONG type, OVERLAPPED *ov) {
    if (type > ND_CQ_NOTIFY_SOLICITED) return ND_INVALID_PARAMETER_1;
    if (!ov) return ND_INVALID_PARAMETER_2;
    bool still_armed;
    {
        std::lock_guard<SpinLock> lock(mu_);
        if (overrun_) return ND_BUFFER_OVERFLOW;
        HRESULT hr = requests_.Begin(ov);
        if (hr != ND_PENDING) return hr;
        armed_.push_back({ov, type});
        any_armed_.store(true, std::memory_order_relaxed);
        if (AnyTriggeredLocked() && FireNowLocked()) FireLocked(ND_SUCCESS);
        still_armed = !armed_.empty();
    }
    if (still_armed) OnArmed();
    return ND_PENDING;
}

HRESULT CompletionQueue::Resize(ULONG depth) {
    if (depth == 0 || depth > max_depth_) return ND_INVALID_PARAMETER;
    std::lock_guard<SpinLock> lock(mu_);
    if (tail_ - head_ > depth) return ND_BUFFER_OVERFLOW;
    std::vector<OPENND_RESULT_EX> next(RingFor(depth));
    // Keep sequence numbers: entry s goes to next[s & new mask].
    for (uint64_t s = head_; s < tail_; ++s) next[s & (next.size() - 1)] = ring_[s & mask_];
    ring_.swap(next);
    mask_ = ring_.size() - 1;
    depth_ = ring_.size() - 1;
    return ND_SUCCESS;
}

HRESULT CompletionQueue::GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) {
    if (!group || !affinity) return ND_INVALID_PARAMETER;
    *group = 0;
    *affinity = affinity_;
    return ND_SUCCESS;
}

HRESULT CompletionQueue::CancelOverlappedRequests() {
    std::lock_guard<SpinLock> lock(mu_);
    armed_.clear();
    any_armed_.store(false, std::memory_order_relaxed);
    satisfied_ns_ = 0;
    return requests_.CancelAll();
}

HRESULT CompletionQueue::GetOverlappedResult(OVERLAPPED *ov, BOOL wait) { return requests_.Result(ov, wait); }

template ULONG CompletionQueue::TakeInto(ND2_RESULT[], ULONG);
template ULONG CompletionQueue::TakeInto(OPENND_RESULT_EX[], ULONG);

}  // namespace opennd::kit
