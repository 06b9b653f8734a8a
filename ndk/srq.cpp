// NDK SRQ over IND2SharedReceiveQueue.
//
// SRQ notification: armed by NdkCreateSrq and by NdkModifySrq with a non-zero
// NotifyThreshold; fires once (fewer queued receives than the threshold, at
// once if that is already the case) and stays disarmed until the next such
// NdkModifySrq. Behind it: one IND2SharedReceiveQueue::Notify at a time; a
// Notify completion fires the callback only if an arm is owed, so one
// NdkModifySrq gives at most one notification even when the Modify itself
// releases a Notify that was already in flight.
#include <new>
#include <utility>

#include "objects.h"

namespace opennd::ndk {

Srq::Srq(Adapter *adapter, IND2SharedReceiveQueue *nd, ULONG threshold, NDK_FN_SRQ_NOTIFICATION_CALLBACK notify,
         void *notify_context)
    : Object(adapter, NdkObjectTypeSrq), nd_(nd), notify_(notify), notify_context_(notify_context) {
    (void)threshold;  // kept by the ND2 SRQ
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kSrqDispatch;
    face_.self = this;
}

Srq::~Srq() { nd_->Release(); }

bool Srq::Owe() {
    std::lock_guard<std::mutex> lock(arm_mu_);
    return std::exchange(armed_, true);
}

void Srq::Forgive() {
    std::lock_guard<std::mutex> lock(arm_mu_);
    armed_ = false;
}

void Srq::Issue() {
    if (!notify_ || closing()) return;
    {
        std::lock_guard<std::mutex> lock(arm_mu_);
        if (!armed_ || notify_pending_) return;  // nothing owed, or the Notify in flight serves it
        notify_pending_ = true;
    }
    Request *r = new (std::nothrow) Request;
    if (r) {
        r->kind = RequestKind::SrqNotify;
        if (adapter()->StartEvent(this, r, true, [&](OVERLAPPED *ov) { return nd_->Notify(ov); })) return;
        delete r;
    }
    std::lock_guard<std::mutex> lock(arm_mu_);
    notify_pending_ = false;
}

void Srq::OnRequestDone(Request *, HRESULT status) {
    bool fire;
    {
        std::lock_guard<std::mutex> lock(arm_mu_);
        notify_pending_ = false;
        fire = armed_;
        armed_ = false;
    }
    if (fire && status != ND_CANCELED && !closing()) notify_(notify_context_, StatusFromNd(status));
}

void Srq::StopWork() { nd_->CancelOverlappedRequests(); }

namespace {

// Synchronous in ND2: STATUS_SUCCESS or an error, never a callback. Depth 0
// keeps the depth, threshold 0 keeps the threshold and the arming state.
NTSTATUS ModifySrq(NDK_SRQ *pSrq, ULONG SrqDepth, ULONG NotifyThreshold, NDK_FN_REQUEST_COMPLETION, PVOID) {
    Srq *srq = Self<Srq>(pSrq);
    // Owed from before the Modify: a Notify in flight (which the Modify may
    // release at once) serves it. If none does once the Modify is done (none
    // was in flight, or it completed before this arm) one starts then, on
    // the new threshold.
    const bool owed = NotifyThreshold && srq->Owe();
    HRESULT hr = srq->nd()->Modify(SrqDepth, NotifyThreshold);
    if (FAILED(hr)) {
        if (NotifyThreshold && !owed) srq->Forgive();
        return StatusFromNd(hr);
    }
    if (NotifyThreshold) srq->Issue();
    return STATUS_SUCCESS;
}

NTSTATUS SrqReceive(NDK_SRQ *pSrq, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge) {
    Srq *srq = Self<Srq>(pSrq);
    return PostSges(srq->adapter()->lams(), pSgl, nSge,
                    [&](const ND2_SGE *sge) { return srq->nd()->Receive(RequestContext, sge, nSge); });
}

}  // namespace

const NDK_SRQ_DISPATCH kSrqDispatch = {CloseObject, QueryExtension, ModifySrq, SrqReceive};

}  // namespace opennd::ndk
