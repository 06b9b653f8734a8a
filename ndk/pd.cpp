// The protection domain: a grouping object (in ND2 the adapter is the PD).
// Its children (MR, MW, SRQ, QP) are ND2 objects created on the adapter; the
// PD only orders their lifetimes: it closes after them.
#include <new>

#include "objects.h"

namespace opennd::ndk {

Pd::Pd(Adapter *adapter) : Object(adapter, NdkObjectTypePd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kPdDispatch;
    face_.self = this;
}

namespace {

template <class T, class Nd>
NTSTATUS Hand(Adapter *a, T *obj, Nd *nd, Object *a1, Object *a2, Object *a3, Object *a4, decltype(obj->pub()) *out) {
    if (!obj) {
        nd->Release();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->Register(obj, a1, a2, a3, a4);
    *out = obj->pub();
    return STATUS_SUCCESS;
}

// Fast-register MRs are registered by a work request over logical page
// addresses at a consumer-chosen virtual address: a window, bound by the
// provider's IOpenNdQueuePairExt::FastRegister (qp.cpp).
NTSTATUS CreateMr(NDK_PD *pPd, BOOLEAN FastRegister, NDK_FN_CREATE_COMPLETION, PVOID, NDK_MR **ppMr) {
    Pd *pd = Self<Pd>(pPd);
    if (!ppMr) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Adapter *a = pd->adapter();
    if (FastRegister) {
        if (!(a->extensions() & OPENND_EXT_FAST_REGISTER)) return STATUS_NOT_SUPPORTED;
        IND2MemoryWindow *mw = nullptr;
        HRESULT hr = a->nd()->CreateMemoryWindow(IID_IND2MemoryWindow, reinterpret_cast<void **>(&mw));
        if (FAILED(hr)) return StatusFromNd(hr);
        return Hand(a, new (std::nothrow) Mr(a, mw), mw, pd, nullptr, nullptr, nullptr, ppMr);
    }
    IND2MemoryRegion *nd = nullptr;
    HRESULT hr = a->nd()->CreateMemoryRegion(IID_IND2MemoryRegion, a->file(), reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    return Hand(a, new (std::nothrow) Mr(a, nd), nd, pd, nullptr, nullptr, nullptr, ppMr);
}

NTSTATUS CreateMw(NDK_PD *pPd, NDK_FN_CREATE_COMPLETION, PVOID, NDK_MW **ppMw) {
    Pd *pd = Self<Pd>(pPd);
    if (!ppMw) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Adapter *a = pd->adapter();
    IND2MemoryWindow *nd = nullptr;
    HRESULT hr = a->nd()->CreateMemoryWindow(IID_IND2MemoryWindow, reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    return Hand(a, new (std::nothrow) Mw(a, nd), nd, pd, nullptr, nullptr, nullptr, ppMw);
}

NTSTATUS CreateSrq(NDK_PD *pPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge, ULONG NotifyThreshold,
                   NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification, PVOID SrqNotificationContext,
                   GROUP_AFFINITY *Affinity, NDK_FN_CREATE_COMPLETION, PVOID, NDK_SRQ **ppSrq) {
    Pd *pd = Self<Pd>(pPd);
    if (!ppSrq) return STATUS_INVALID_PARAMETER;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Adapter *a = pd->adapter();
    IND2SharedReceiveQueue *nd = nullptr;
    HRESULT hr = a->nd()->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, a->file(), SrqDepth,
                                                   MaxReceiveRequestSge, NotifyThreshold,
                                                   Affinity ? Affinity->Group : 0, Affinity ? Affinity->Mask : 0,
                                                   reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    Srq *srq = new (std::nothrow) Srq(a, nd, NotifyThreshold, SrqNotification, SrqNotificationContext);
    NTSTATUS status = Hand(a, srq, nd, pd, nullptr, nullptr, nullptr, ppSrq);
    if (NT_SUCCESS(status) && NotifyThreshold) {
        srq->Owe();
        srq->Issue();
    }
    return status;
}

// A Read that invalidates its sink posts an Invalidate behind it (qp.cpp):
// where the adapter fast-registers, a queue pair gets room for one per
// request the consumer asked room for, or as many as the adapter allows.
template <class Create>
HRESULT CreateWithRoom(Adapter *a, ULONG depth, Create create) {
    if (!(a->extensions() & OPENND_EXT_FAST_REGISTER) || depth == 0 || depth > UINT32_MAX / 2) return create(depth);
    const HRESULT hr = create(depth * 2);
    return FAILED(hr) ? create(depth) : hr;
}

NTSTATUS CreateQp(NDK_PD *pPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq, PVOID QPContext, ULONG ReceiveQueueDepth,
                  ULONG InitiatorQueueDepth, ULONG MaxReceiveRequestSge, ULONG MaxInitiatorRequestSge,
                  ULONG InlineDataSize, NDK_FN_CREATE_COMPLETION, PVOID, NDK_QP **ppQp) {
    Pd *pd = Self<Pd>(pPd);
    if (!ppQp) return STATUS_INVALID_PARAMETER;
    if (!pReceiveCq) return STATUS_INVALID_PARAMETER_2;
    if (!pInitiatorCq) return STATUS_INVALID_PARAMETER_3;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Cq *rcq = Self<Cq>(pReceiveCq), *icq = Self<Cq>(pInitiatorCq);
    Adapter *a = pd->adapter();
    IND2QueuePair *nd = nullptr;
    HRESULT hr = CreateWithRoom(a, InitiatorQueueDepth, [&](ULONG depth) {
        return a->nd()->CreateQueuePair(IID_IND2QueuePair, rcq->nd(), icq->nd(), QPContext, ReceiveQueueDepth, depth,
                                        MaxReceiveRequestSge, MaxInitiatorRequestSge, InlineDataSize,
                                        reinterpret_cast<void **>(&nd));
    });
    if (FAILED(hr)) return StatusFromNd(hr);
    return Hand(a, new (std::nothrow) Qp(a, nd), nd, pd, rcq, icq == rcq ? nullptr : icq, nullptr, ppQp);
}

NTSTATUS CreateQpWithSrq(NDK_PD *pPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq, NDK_SRQ *pSrq, PVOID QPContext,
                         ULONG InitiatorQueueDepth, ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                         NDK_FN_CREATE_COMPLETION, PVOID, NDK_QP **ppQp) {
    Pd *pd = Self<Pd>(pPd);
    if (!ppQp) return STATUS_INVALID_PARAMETER;
    if (!pReceiveCq) return STATUS_INVALID_PARAMETER_2;
    if (!pInitiatorCq) return STATUS_INVALID_PARAMETER_3;
    if (!pSrq) return STATUS_INVALID_PARAMETER_4;
    if (pd->closing()) return STATUS_INVALID_DEVICE_STATE;
    Cq *rcq = Self<Cq>(pReceiveCq), *icq = Self<Cq>(pInitiatorCq);
    Srq *srq = Self<Srq>(pSrq);
    Adapter *a = pd->adapter();
    IND2QueuePair *nd = nullptr;
    HRESULT hr = CreateWithRoom(a, InitiatorQueueDepth, [&](ULONG depth) {
        return a->nd()->CreateQueuePairWithSrq(IID_IND2QueuePair, rcq->nd(), icq->nd(), srq->nd(), QPContext, depth,
                                               MaxInitiatorRequestSge, InlineDataSize, reinterpret_cast<void **>(&nd));
    });
    if (FAILED(hr)) return StatusFromNd(hr);
    return Hand(a, new (std::nothrow) Qp(a, nd), nd, pd, rcq, icq == rcq ? nullptr : icq, srq, ppQp);
}

// The privileged token lets SGEs carry logical addresses (from NdkBuildLAM)
// with no registration of their own, for local access only (lam.h).
VOID GetPrivilegedMemoryRegionToken(NDK_PD *pPd, UINT32 *pToken) {
    if (pToken) *pToken = Self<Pd>(pPd)->adapter()->lams().privileged_token();
}

}  // namespace

const NDK_PD_DISPATCH kPdDispatch = {
    CloseObject, QueryExtension, CreateMr, CreateMw, CreateSrq, CreateQp, CreateQpWithSrq,
    GetPrivilegedMemoryRegionToken,
};

}  // namespace opennd::ndk
