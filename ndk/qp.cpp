// NDK QP over IND2QueuePair: the data path. Every post is the ND2 call of the
// same name with the flags translated (one table lookup) and the SGE array
// passed through (same layout; an SGE with the privileged token gets its
// logical address mapping's token, lam.h). No lock: NDK consumers serialise posts per
// queue, as ND2 providers allow (Bind, rare, links the window to its MR
// under the adapter's lock).
#include "objects.h"

namespace opennd::ndk {

Qp::Qp(Adapter *adapter, IND2QueuePair *nd) : Object(adapter, NdkObjectTypeQp), nd_(nd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kQpDispatch;
    face_.self = this;
}

Qp::~Qp() { nd_->Release(); }

// A close flushes: outstanding requests complete with STATUS_CANCELLED.
void Qp::StopWork() { nd_->Flush(); }

namespace {

VOID Flush(NDK_QP *pQp) { Self<Qp>(pQp)->nd()->Flush(); }

NTSTATUS Send(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, ULONG Flags) {
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    return PostSges(qp->adapter()->lams(), pSgl, nSge,
                    [&](const ND2_SGE *sge) { return qp->nd()->Send(RequestContext, sge, nSge, flags); });
}

NTSTATUS Receive(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge) {
    Qp *qp = Self<Qp>(pQp);
    return PostSges(qp->adapter()->lams(), pSgl, nSge,
                    [&](const ND2_SGE *sge) { return qp->nd()->Receive(RequestContext, sge, nSge); });
}

NTSTATUS Bind(NDK_QP *pQp, PVOID RequestContext, NDK_MR *pMr, NDK_MW *pMw, PVOID VirtualAddress, SIZE_T Length,
              ULONG Flags) {
    if (!pMr) return STATUS_INVALID_PARAMETER_3;
    if (!pMw) return STATUS_INVALID_PARAMETER_4;
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    Mr *mr = Self<Mr>(pMr);
    Mw *mw = Self<Mw>(pMw);
    HRESULT hr = qp->nd()->Bind(RequestContext, mr->nd(), mw->nd(), VirtualAddress, Length, flags);
    // MR -> MW is an antecedent link (NDK-SPEC 1): the window keeps the
    // registration alive, so the MR's close waits until the window closes.
    // Not undone by Invalidate: its completion goes to the consumer's CQ.
    if (SUCCEEDED(hr)) qp->adapter()->Link(mw, mr);
    return StatusFromNd(hr);
}

// Needs fast-register MRs, which ND2 cannot express (pd.cpp).
NTSTATUS FastRegister(NDK_QP *, PVOID, NDK_MR *, ULONG, CONST NDK_LOGICAL_ADDRESS *, ULONG, SIZE_T, PVOID, ULONG) {
    return STATUS_NOT_SUPPORTED;
}

// Memory windows map to IND2QueuePair::Invalidate. Invalidating an MR is for
// fast-registered MRs only, and there are none.
NTSTATUS Invalidate(NDK_QP *pQp, PVOID RequestContext, NDK_OBJECT_HEADER *pMrOrMw, ULONG Flags) {
    Object *target = FromHeader(pMrOrMw);
    if (!target) return STATUS_INVALID_PARAMETER_3;
    if (target->type() == NdkObjectTypeMr) return STATUS_NOT_SUPPORTED;
    if (target->type() != NdkObjectTypeMw) return STATUS_INVALID_PARAMETER_3;
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    return StatusFromNd(
        Self<Qp>(pQp)->nd()->Invalidate(RequestContext, static_cast<Mw *>(target)->nd(), flags));
}

NTSTATUS Read(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
              UINT32 RemoteToken, ULONG Flags) {
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    return PostSges(qp->adapter()->lams(), pSgl, nSge, [&](const ND2_SGE *sge) {
        return qp->nd()->Read(RequestContext, sge, nSge, RemoteAddress, RemoteToken, flags);
    });
}

NTSTATUS Write(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
               UINT32 RemoteToken, ULONG Flags) {
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    return PostSges(qp->adapter()->lams(), pSgl, nSge, [&](const ND2_SGE *sge) {
        return qp->nd()->Write(RequestContext, sge, nSge, RemoteAddress, RemoteToken, flags);
    });
}

// ND2 has no Send that invalidates a token at the receiver (and so no
// ReceiveAndInvalidate completion): consumers invalidate locally instead.
NTSTATUS SendAndInvalidate(NDK_QP *, PVOID, CONST NDK_SGE *, ULONG, ULONG, UINT32) { return STATUS_NOT_SUPPORTED; }

}  // namespace

const NDK_QP_DISPATCH kQpDispatch = {
    CloseObject, QueryExtension, Flush, Send, Receive, Bind, FastRegister, Invalidate, Read, Write, SendAndInvalidate,
};

}  // namespace opennd::ndk
