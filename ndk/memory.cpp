// NDK MR over IND2MemoryRegion, NDK MW over IND2MemoryWindow.
//
// NdkRegisterMr takes an MDL: in OpenND it describes a virtually contiguous
// range of this process (opennd/ndktypes.h), which is registered with
// IND2MemoryRegion::Register at its own address.
#include "objects.h"

namespace opennd::ndk {

Mr::Mr(Adapter *adapter, IND2MemoryRegion *nd) : Object(adapter, NdkObjectTypeMr), nd_(nd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kMrDispatch;
    face_.self = this;
}

Mr::~Mr() { nd_->Release(); }  // a region still registered is deregistered by the release

void Mr::StopWork() { nd_->CancelOverlappedRequests(); }

Mw::Mw(Adapter *adapter, IND2MemoryWindow *nd) : Object(adapter, NdkObjectTypeMw), nd_(nd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kMwDispatch;
    face_.self = this;
}

Mw::~Mw() { nd_->Release(); }

namespace {

NTSTATUS RegisterMr(NDK_MR *pMr, MDL *Mdl, SIZE_T Length, ULONG Flags, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                    PVOID RequestContext) {
    Mr *mr = Self<Mr>(pMr);
    if (!Mdl || Length == 0 || !MdlCovers(Mdl, Length)) return STATUS_INVALID_PARAMETER;
    ULONG flags = 0;
    NTSTATUS status = MrFlagsToNd(Flags, &flags);
    if (!NT_SUCCESS(status)) return status;
    const void *va = MmGetMdlVirtualAddress(Mdl);
    return mr->adapter()->Start(mr, RequestKind::Consumer, RequestCompletion, RequestContext,
                                [&](OVERLAPPED *ov) { return mr->nd()->Register(va, Length, flags, ov); });
}

NTSTATUS DeregisterMr(NDK_MR *pMr, NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    Mr *mr = Self<Mr>(pMr);
    return mr->adapter()->Start(mr, RequestKind::Consumer, RequestCompletion, RequestContext,
                                [&](OVERLAPPED *ov) { return mr->nd()->Deregister(ov); });
}

// Only MRs created with FastRegister = TRUE can be initialised, and
// NdkCreateMr refuses those (pd.cpp).
NTSTATUS InitializeFastRegisterMr(NDK_MR *, ULONG, BOOLEAN, NDK_FN_REQUEST_COMPLETION, PVOID) {
    return STATUS_NOT_SUPPORTED;
}

UINT32 GetRemoteTokenFromMr(NDK_MR *pMr) { return Self<Mr>(pMr)->nd()->GetRemoteToken(); }

UINT32 GetLocalTokenFromMr(NDK_MR *pMr) { return Self<Mr>(pMr)->nd()->GetLocalToken(); }

UINT32 GetRemoteTokenFromMw(NDK_MW *pMw) { return Self<Mw>(pMw)->nd()->GetRemoteToken(); }

}  // namespace

const NDK_MR_DISPATCH kMrDispatch = {
    CloseObject,         QueryExtension,     RegisterMr, DeregisterMr, InitializeFastRegisterMr,
    GetRemoteTokenFromMr, GetLocalTokenFromMr,
};

const NDK_MW_DISPATCH kMwDispatch = {CloseObject, QueryExtension, GetRemoteTokenFromMw};

}  // namespace opennd::ndk
