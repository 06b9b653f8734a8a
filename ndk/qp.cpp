// NDK QP over IND2QueuePair: the data path. Every post is the ND2 call of the
// same name with the flags translated (one table lookup) and the SGE array
// passed through (same layout; an SGE with the privileged token gets its
// logical address mapping's token, lam.h). No lock: NDK consumers serialise posts per
// queue, as ND2 providers allow (Bind, rare, links the window to its MR
// under the adapter's lock).
#include "objects.h"
#include "opennd/log.h"

namespace opennd::ndk {

Qp::Qp(Adapter *adapter, IND2QueuePair *nd) : Object(adapter, NdkObjectTypeQp), nd_(nd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kQpDispatch;
    face_.self = this;
    if (adapter->extensions() && FAILED(nd_->QueryInterface(IID_IOpenNdQueuePairExt, reinterpret_cast<void **>(&ext_))))
        ext_ = nullptr;
}

Qp::~Qp() {
    if (ext_) ext_->Release();
    nd_->Release();
}

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
    return PostSges(
        qp->adapter()->lams(), pSgl, nSge,
        [&](const ND2_SGE *sge) { return qp->nd()->Receive(RequestContext, sge, nSge); }, /*writes=*/true);
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

constexpr ULONG kFastRegisterFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                                     NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                                     NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK | NDK_OP_FLAG_DEFER;
constexpr ULONG kRemoteFlags = NDK_OP_FLAG_ALLOW_REMOTE_READ | (NDK_OP_FLAG_ALLOW_REMOTE_WRITE & ~NDK_OP_FLAG_ALLOW_LOCAL_WRITE);

// The pages are logical addresses, here this process's page addresses
// (lam.h): the window is bound over the mapping that holds them, at
// pages[0] + FBO, and the peer addresses it at BaseVirtualAddress. Pages
// that are not consecutive in this process cannot be one window:
// STATUS_NOT_SUPPORTED (every mapping NdkBuildLAM makes is consecutive).
NTSTATUS FastRegister(NDK_QP *pQp, PVOID RequestContext, NDK_MR *pMr, ULONG AdapterPageCount,
                      CONST NDK_LOGICAL_ADDRESS *AdapterPageArray, ULONG FBO, SIZE_T Length,
                      PVOID BaseVirtualAddress, ULONG Flags) {
    Qp *qp = Self<Qp>(pQp);
    if (!pMr) return STATUS_INVALID_PARAMETER_3;
    Mr *mr = Self<Mr>(pMr);
    if (!mr->fast()) return STATUS_INVALID_PARAMETER_3;
    if (!mr->fast_pages() || !qp->ext()) return STATUS_INVALID_DEVICE_REQUEST;  // not initialised
    if (AdapterPageCount == 0 || AdapterPageCount > mr->fast_pages()) return STATUS_INVALID_PARAMETER_4;
    if (!AdapterPageArray) return STATUS_INVALID_PARAMETER_5;
    if (FBO >= PAGE_SIZE) return STATUS_INVALID_PARAMETER_6;
    const uint64_t span = uint64_t(AdapterPageCount) * PAGE_SIZE;
    if (Length == 0 || Length > span - FBO) return STATUS_INVALID_PARAMETER_7;
    if (Flags & ~kFastRegisterFlags) return STATUS_INVALID_PARAMETER;
    if ((Flags & kRemoteFlags) && !mr->fast_remote()) return STATUS_ACCESS_VIOLATION;
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    const auto first = static_cast<uintptr_t>(AdapterPageArray[0].QuadPart);
    for (ULONG i = 0; i < AdapterPageCount; ++i) {
        const auto page = static_cast<uintptr_t>(AdapterPageArray[i].QuadPart);
        if (page & (PAGE_SIZE - 1)) return STATUS_INVALID_PARAMETER_5;
        if (page != first + uintptr_t(i) * PAGE_SIZE) return STATUS_NOT_SUPPORTED;
    }
    if (first + span < first) return STATUS_INVALID_PARAMETER_5;
    Lams &lams = qp->adapter()->lams();
    IND2MemoryRegion *lam = lams.Holding(first, first + span);
    if (!lam) return STATUS_ACCESS_VIOLATION;  // pages no mapping holds
    const UINT32 before = mr->fast()->GetRemoteToken();
    const HRESULT hr = qp->ext()->FastRegister(RequestContext, lam, mr->fast(), reinterpret_cast<void *>(first + FBO),
                                               Length, reinterpret_cast<uintptr_t>(BaseVirtualAddress), flags);
    // Its token is a local token too (lam.h), as soon as the post returns.
    // A registration gets a new token; one that keeps the old fails (the MR
    // is still valid) in its completion and changes nothing.
    if (SUCCEEDED(hr) && mr->fast()->GetRemoteToken() != before)
        lams.AddFast(mr, mr->fast(), mr->fast()->GetRemoteToken(), reinterpret_cast<uintptr_t>(BaseVirtualAddress),
                     Length, first + FBO, lam->GetLocalToken(),
                     (Flags & (NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK)) != 0);
    lam->Release();  // a bound window holds its region
    return StatusFromNd(hr);
}

// Memory windows, and fast-register MRs (windows too), map to
// IND2QueuePair::Invalidate; a registered MR is deregistered instead.
NTSTATUS Invalidate(NDK_QP *pQp, PVOID RequestContext, NDK_OBJECT_HEADER *pMrOrMw, ULONG Flags) {
    Object *target = FromHeader(pMrOrMw);
    if (!target) return STATUS_INVALID_PARAMETER_3;
    IND2MemoryWindow *window = nullptr;
    Mr *fast = nullptr;
    if (target->type() == NdkObjectTypeMr) {
        fast = static_cast<Mr *>(target);
        window = fast->fast();
        if (!window) return STATUS_INVALID_DEVICE_REQUEST;
    } else if (target->type() == NdkObjectTypeMw) {
        window = static_cast<Mw *>(target)->nd();
    } else {
        return STATUS_INVALID_PARAMETER_3;
    }
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    const HRESULT hr = qp->nd()->Invalidate(RequestContext, window, flags);
    if (fast && SUCCEEDED(hr)) qp->adapter()->lams().RemoveFast(fast);
    return StatusFromNd(hr);
}

// RDMA_READ_LOCAL_INVALIDATE: the fast-register MR that the first SGE
// names is invalidated once the Read completes. ND2 has no such Read (nor
// has verbs in user space): the Read, then an Invalidate of the MR's window
// posted right behind it, silent and on this layer's own context
// (kInternalRequest, which GetCqResults drops). Both providers perform an
// Invalidate as it is posted, in order behind the Read (the Read's data goes
// to the mapping's region, which stays), so by the Read's completion the
// peer is refused; the MR serves no local SGE from the post on. Queue pairs
// get twice the initiator depth asked for (pd.cpp) for the Invalidates.
NTSTATUS ReadInvalidate(Qp *qp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
                        UINT32 RemoteToken, ULONG flags) {
    if (!pSgl || nSge == 0) return STATUS_INVALID_PARAMETER;
    Lams &lams = qp->adapter()->lams();
    const UINT32 sink = pSgl[0].MemoryRegionToken;
    if (sink == lams.privileged_token()) return STATUS_INVALID_PARAMETER;
    const NTSTATUS posted = PostSges(
        lams, pSgl, nSge,
        [&](const ND2_SGE *sge) {
            // Translated only if the sink is a fast registration: else the
            // flag names no MR to invalidate.
            if (sge[0].MemoryRegionToken == sink) return ND_INVALID_PARAMETER;
            return qp->nd()->Read(RequestContext, sge, nSge, RemoteAddress, RemoteToken, flags);
        },
        /*writes=*/true);
    if (posted != STATUS_SUCCESS) return posted;
    IND2MemoryWindow *window = lams.TakeFast(sink);
    if (!window) return STATUS_SUCCESS;  // invalidated meanwhile by another thread of the consumer's
    const HRESULT hr = qp->nd()->Invalidate(kInternalRequest, window, ND_OP_FLAG_SILENT_SUCCESS);
    window->Release();
    if (FAILED(hr)) OPENND_LOG(Warn, "ndk: the Read's local invalidation could not be posted (0x%08x)", unsigned(hr));
    return STATUS_SUCCESS;
}

NTSTATUS Read(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, UINT64 RemoteAddress,
              UINT32 RemoteToken, ULONG Flags) {
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags & ~NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, &flags);
    if (status != STATUS_SUCCESS) return status;
    Qp *qp = Self<Qp>(pQp);
    if (Flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) {
        if (!(qp->adapter()->extensions() & OPENND_EXT_FAST_REGISTER)) return STATUS_NOT_SUPPORTED;
        return ReadInvalidate(qp, RequestContext, pSgl, nSge, RemoteAddress, RemoteToken, flags);
    }
    return PostSges(
        qp->adapter()->lams(), pSgl, nSge,
        [&](const ND2_SGE *sge) { return qp->nd()->Read(RequestContext, sge, nSge, RemoteAddress, RemoteToken, flags); },
        /*writes=*/true);
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

// ND2 has no Send that invalidates a token at the receiver: OpenND's
// IOpenNdQueuePairExt::SendInvalidate (adapters with OPENND_EXT_SEND_INVALIDATE).
// It completes here as a Send; the peer's receive as ReceiveAndInvalidate.
NTSTATUS SendAndInvalidate(NDK_QP *pQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, ULONG Flags,
                           UINT32 RemoteToken) {
    Qp *qp = Self<Qp>(pQp);
    if (!qp->ext() || !(qp->adapter()->extensions() & OPENND_EXT_SEND_INVALIDATE)) return STATUS_NOT_SUPPORTED;
    ULONG flags;
    NTSTATUS status = OpFlagsToNd(Flags, &flags);
    if (status != STATUS_SUCCESS) return status;
    return PostSges(qp->adapter()->lams(), pSgl, nSge, [&](const ND2_SGE *sge) {
        return qp->ext()->SendInvalidate(RequestContext, sge, nSge, flags, RemoteToken);
    });
}

}  // namespace

const NDK_QP_DISPATCH kQpDispatch = {
    CloseObject, QueryExtension, Flush, Send, Receive, Bind, FastRegister, Invalidate, Read, Write, SendAndInvalidate,
};

}  // namespace opennd::ndk
