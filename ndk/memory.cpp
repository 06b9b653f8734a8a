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

Mr::Mr(Adapter *adapter, IND2MemoryWindow *fast) : Object(adapter, NdkObjectTypeMr), fast_(fast) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kMrDispatch;
    face_.self = this;
}

// A region still registered is deregistered by the release; a window still
// fast-registered is invalidated by it.
Mr::~Mr() {
    if (nd_) nd_->Release();
    if (fast_) {
        adapter()->lams().RemoveFast(this);
        fast_->Release();
    }
}

void Mr::StopWork() {
    if (nd_) nd_->CancelOverlappedRequests();
}

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
    if (!mr->nd()) return STATUS_INVALID_DEVICE_REQUEST;  // a fast-register MR
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
    if (!mr->nd()) return STATUS_INVALID_DEVICE_REQUEST;  // a fast-register MR is invalidated, not deregistered
    return mr->adapter()->Start(mr, RequestKind::Consumer, RequestCompletion, RequestContext,
                                [&](OVERLAPPED *ov) { return mr->nd()->Deregister(ov); });
}

// Only MRs created with FastRegister = TRUE, once. Nothing to allocate (the
// window was made with the MR): completes inline.
NTSTATUS InitializeFastRegisterMr(NDK_MR *pMr, ULONG AdapterPageCount, BOOLEAN RemoteAccess,
                                  NDK_FN_REQUEST_COMPLETION, PVOID) {
    Mr *mr = Self<Mr>(pMr);
    if (!mr->fast() || mr->fast_pages()) return STATUS_INVALID_DEVICE_REQUEST;
    ND2_ADAPTER_INFO info{};
    info.InfoVersion = ND_VERSION_2;
    ULONG size = sizeof info;
    HRESULT hr = mr->adapter()->nd()->Query(&info, &size);
    if (FAILED(hr)) return StatusFromNd(hr);
    if (AdapterPageCount == 0 || AdapterPageCount > FastRegisterPages(info, mr->adapter()->extensions()))
        return STATUS_INVALID_PARAMETER;
    mr->InitializeFast(AdapterPageCount, RemoteAccess != FALSE);
    return STATUS_SUCCESS;
}

// A fast-register MR's token is its window's, new with every registration,
// and its local token too: this layer translates local SGEs that carry it
// (lam.h).
UINT32 GetRemoteTokenFromMr(NDK_MR *pMr) {
    Mr *mr = Self<Mr>(pMr);
    return mr->fast() ? mr->fast()->GetRemoteToken() : mr->nd()->GetRemoteToken();
}

UINT32 GetLocalTokenFromMr(NDK_MR *pMr) {
    Mr *mr = Self<Mr>(pMr);
    return mr->fast() ? mr->fast()->GetRemoteToken() : mr->nd()->GetLocalToken();
}

UINT32 GetRemoteTokenFromMw(NDK_MW *pMw) { return Self<Mw>(pMw)->nd()->GetRemoteToken(); }

}  // namespace

const NDK_MR_DISPATCH kMrDispatch = {
    CloseObject,         QueryExtension,     RegisterMr, DeregisterMr, InitializeFastRegisterMr,
    GetRemoteTokenFromMr, GetLocalTokenFromMr,
};

const NDK_MW_DISPATCH kMwDispatch = {CloseObject, QueryExtension, GetRemoteTokenFromMw};

}  // namespace opennd::ndk
