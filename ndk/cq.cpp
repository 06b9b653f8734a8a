// NDK CQ over IND2CompletionQueue.
//
// NdkArmCq -> IND2CompletionQueue::Notify; its completion (dispatcher) calls
// the CQ notification callback once per arm. ND2's Notify already has the
// NDK semantics: a Notify armed while new (not yet notified) entries are
// queued fires at once, one event releases every Notify outstanding, errors
// satisfy every type. What this layer adds is "once per arm": arms are
// grouped in rounds; a round issues at most one Notify per type, and the first
// of them to complete ends the round (later ones of that round are dropped).
#include <algorithm>
#include <new>
#include <type_traits>

#include "objects.h"
#include "opennd/cq_moderation.h"
#include "opennd/log.h"
#include "opennd/nd_extensions.h"

namespace opennd::ndk {

Cq::Cq(Adapter *adapter, IND2CompletionQueue *nd, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, void *notify_context)
    : Object(adapter, NdkObjectTypeCq), nd_(nd), notify_(notify), notify_context_(notify_context) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kCqDispatch;
    face_.self = this;
    // Receives that report an invalidated token (any provider built on the kit).
    if (FAILED(nd_->QueryInterface(IID_IOpenNdCompletionQueueExt, reinterpret_cast<void **>(&ext_)))) ext_ = nullptr;
}

Cq::~Cq() {
    if (ext_) ext_->Release();
    nd_->Release();
}

void Cq::Arm(ULONG type) {
    if (type > NDK_CQ_NOTIFY_SOLICITED || closing()) return;
    const unsigned bit = 1u << type;
    // Twice at most: when this arm's Notify cannot be posted (no memory),
    // arms that merged into it meanwhile get one more try.
    for (int attempt = 0; attempt < 2; ++attempt) {
        uint64_t round;
        {
            std::lock_guard<std::mutex> lock(arm_mu_);
            armed_ = true;
            if (round_types_ & bit) {  // merged into this round's Notify of that type
                merged_types_ |= bit;
                return;
            }
            round_types_ |= bit;
            merged_types_ &= ~bit;
            round = round_;
        }
        if (Request *r = new (std::nothrow) Request) {
            r->kind = RequestKind::CqNotify;
            r->round = round;
            // An inline error (the CQ overran) is delivered as a notification too.
            if (adapter()->StartEvent(this, r, true, [&](OVERLAPPED *ov) { return nd_->Notify(type, ov); })) return;
            delete r;
        }
        // No memory, or it could not even be posted: this arm is lost (ArmCq
        // returns nothing), but the next one of this type must post its own.
        std::lock_guard<std::mutex> lock(arm_mu_);
        if (round_ != round) return;
        round_types_ &= ~bit;
        if (!(merged_types_ & bit)) return;
    }
}

void Cq::OnRequestDone(Request *request, HRESULT status) {
    bool fire = false;
    {
        std::lock_guard<std::mutex> lock(arm_mu_);
        if (request->round == round_) {
            ++round_;
            round_types_ = 0;
            merged_types_ = 0;
            fire = armed_;
            armed_ = false;
        }
    }
    // ND_CANCELED: the CQ is closing; no notification after a close started.
    if (fire && status != ND_CANCELED && !closing() && notify_) notify_(notify_context_, StatusFromNd(status));
}

void Cq::StopWork() { nd_->CancelOverlappedRequests(); }

namespace {

NTSTATUS ResizeCq(NDK_CQ *pCq, ULONG CqDepth, NDK_FN_REQUEST_COMPLETION, PVOID) {
    return StatusFromNd(Self<Cq>(pCq)->nd()->Resize(CqDepth));  // synchronous in ND2
}

VOID ArmCq(NDK_CQ *pCq, ULONG Type) { Self<Cq>(pCq)->Arm(Type); }

constexpr ULONG kBatch = 32;

// Results in batches of `In` (ND2_RESULT or OPENND_RESULT_EX), from `take`;
// this layer's own requests' (kInternalRequest) are left out, and a token a
// peer's Send invalidated is no local token any more (lam.h).
template <class In, class Out, class Take>
ULONG Gather(Cq *cq, Out results[], ULONG n, Take take) {
    In batch[kBatch];
    ULONG total = 0;
    while (total < n) {
        ULONG want = std::min(n - total, kBatch);
        ULONG got = take(batch, want);
        for (ULONG i = 0; i < got; ++i) {
            if (__builtin_expect(batch[i].RequestContext == kInternalRequest, 0)) {
                if (FAILED(batch[i].Status))
                    OPENND_LOG(Info, "ndk: a Read's local invalidation completed 0x%08x", unsigned(batch[i].Status));
                continue;
            }
            if constexpr (std::is_same_v<In, OPENND_RESULT_EX>) {
                if (batch[i].RequestType == OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE)
                    if (IND2MemoryWindow *w = cq->adapter()->lams().TakeFast(batch[i].InvalidatedToken)) w->Release();
            }
            if constexpr (std::is_same_v<Out, NDK_RESULT_EX>)
                ResultExFromNd(batch[i], &results[total++]);
            else if constexpr (std::is_same_v<In, ND2_RESULT>)
                ResultFromNd(batch[i], &results[total++]);
            else
                ResultFromNd(ND2_RESULT{batch[i].Status, batch[i].BytesTransferred, batch[i].QueuePairContext,
                                        batch[i].RequestContext, batch[i].RequestType},
                             &results[total++]);
        }
        if (got < want) break;
    }
    return total;
}

// Both take the provider's results with their invalidated tokens where it
// has them; an invalidating receive is an ordinary receive in NDK_RESULT.
template <class Out>
ULONG Results(NDK_CQ *pCq, Out results[], ULONG n) {
    Cq *cq = Self<Cq>(pCq);
    if (IOpenNdCompletionQueueExt *ext = cq->ext())
        return Gather<OPENND_RESULT_EX>(cq, results, n,
                                        [&](OPENND_RESULT_EX *b, ULONG k) { return ext->GetResultsEx(b, k); });
    return Gather<ND2_RESULT>(cq, results, n, [&](ND2_RESULT *b, ULONG k) { return cq->nd()->GetResults(b, k); });
}

ULONG GetCqResults(NDK_CQ *pCq, NDK_RESULT Results_[], ULONG nResults) { return Results(pCq, Results_, nResults); }

ULONG GetCqResultsEx(NDK_CQ *pCq, NDK_RESULT_EX Results_[], ULONG nResults) {
    return Results(pCq, Results_, nResults);
}

// ND2 has no call for interrupt moderation: it is OpenND's CQ extension
// (opennd/cq_moderation.h), which every kit provider's CQ answers, and
// whose ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED becomes the NDK
// flag. It defers the CQ's Notify, so the notification callback of an arm
// comes once the count or the interval is reached. Never pending.
NTSTATUS ControlCqInterruptModeration(NDK_CQ *pCq, ULONG ModerationInterval, ULONG ModerationCount) {
    IOpenNdCqModeration *m = nullptr;
    if (FAILED(Self<Cq>(pCq)->nd()->QueryInterface(IID_IOpenNdCqModeration, reinterpret_cast<void **>(&m))) || !m)
        return STATUS_NOT_SUPPORTED;
    const HRESULT hr = m->Moderate(ModerationInterval, ModerationCount);
    m->Release();
    return StatusFromNd(hr);
}

}  // namespace

const NDK_CQ_DISPATCH kCqDispatch = {
    CloseObject, QueryExtension, ResizeCq, ArmCq, GetCqResults, ControlCqInterruptModeration, GetCqResultsEx,
};

}  // namespace opennd::ndk
