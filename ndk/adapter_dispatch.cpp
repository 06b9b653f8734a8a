// NDK_ADAPTER_DISPATCH. Creates are synchronous in ND2, so they return
// STATUS_SUCCESS with the object (no create completion) or an inline error.
#include <new>

#include "objects.h"

namespace opennd::ndk {
namespace {

NTSTATUS QueryAdapterInfo(NDK_ADAPTER *pAdapter, NDK_ADAPTER_INFO *pInfo, ULONG *pBufferSize) {
    if (!pBufferSize) return STATUS_INVALID_PARAMETER;
    if (!pInfo || *pBufferSize < sizeof(NDK_ADAPTER_INFO)) {
        *pBufferSize = sizeof(NDK_ADAPTER_INFO);
        return STATUS_BUFFER_TOO_SMALL;
    }
    ND2_ADAPTER_INFO info{};
    info.InfoVersion = ND_VERSION_2;
    ULONG size = sizeof info;
    Adapter *a = Adapter::From(pAdapter);
    HRESULT hr = a->nd()->Query(&info, &size);
    if (FAILED(hr)) return StatusFromNd(hr);
    AdapterInfoFromNd(info, a->extensions(), pAdapter->Header.Version, pInfo);
    *pBufferSize = sizeof(NDK_ADAPTER_INFO);
    return STATUS_SUCCESS;
}

NTSTATUS CreateCq(NDK_ADAPTER *pAdapter, ULONG CqDepth, NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification,
                  PVOID CqNotificationContext, GROUP_AFFINITY *Affinity, NDK_FN_CREATE_COMPLETION, PVOID,
                  NDK_CQ **ppCq) {
    Adapter *a = Adapter::From(pAdapter);
    if (!ppCq) return STATUS_INVALID_PARAMETER;
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    IND2CompletionQueue *nd = nullptr;
    HRESULT hr = a->nd()->CreateCompletionQueue(IID_IND2CompletionQueue, a->file(), CqDepth,
                                                Affinity ? Affinity->Group : 0, Affinity ? Affinity->Mask : 0,
                                                reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    Cq *cq = new (std::nothrow) Cq(a, nd, CqNotification, CqNotificationContext);
    if (!cq) {
        nd->Release();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->Register(cq);
    *ppCq = cq->pub();
    return STATUS_SUCCESS;
}

NTSTATUS CreatePd(NDK_ADAPTER *pAdapter, NDK_FN_CREATE_COMPLETION, PVOID, NDK_PD **ppPd) {
    Adapter *a = Adapter::From(pAdapter);
    if (!ppPd) return STATUS_INVALID_PARAMETER;
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    Pd *pd = new (std::nothrow) Pd(a);
    if (!pd) return STATUS_INSUFFICIENT_RESOURCES;
    a->Register(pd);
    *ppPd = pd->pub();
    return STATUS_SUCCESS;
}

// A connector of the provider's bound to the address shared, and kept
// (shared_endpoint.cpp).
NTSTATUS CreateSharedEndpoint(NDK_ADAPTER *pAdapter, CONST PSOCKADDR pAddress, ULONG AddressLength,
                              NDK_FN_CREATE_COMPLETION, PVOID, NDK_SHARED_ENDPOINT **ppEndpoint) {
    Adapter *a = Adapter::From(pAdapter);
    if (!ppEndpoint || !pAddress) return STATUS_INVALID_PARAMETER;
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    if (!(a->extensions() & OPENND_EXT_SHARED_ENDPOINT)) return STATUS_NOT_SUPPORTED;
    IND2Connector *nd = nullptr;
    HRESULT hr = a->nd()->CreateConnector(IID_IND2Connector, a->file(), reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    sockaddr_storage bound{};
    ULONG length = sizeof bound;
    hr = BindShared(nd, pAddress, AddressLength);
    if (SUCCEEDED(hr)) hr = nd->GetLocalAddress(reinterpret_cast<sockaddr *>(&bound), &length);
    if (FAILED(hr)) {
        nd->Release();
        return BindStatusFromNd(hr);
    }
    SharedEndpoint *e = new (std::nothrow) SharedEndpoint(a, nd, bound, length);
    if (!e) {
        nd->Release();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->Register(e);
    *ppEndpoint = e->pub();
    return STATUS_SUCCESS;
}

NTSTATUS CreateConnector(NDK_ADAPTER *pAdapter, NDK_FN_CREATE_COMPLETION, PVOID, NDK_CONNECTOR **ppConnector) {
    Adapter *a = Adapter::From(pAdapter);
    if (!ppConnector) return STATUS_INVALID_PARAMETER;
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    IND2Connector *nd = nullptr;
    HRESULT hr = a->nd()->CreateConnector(IID_IND2Connector, a->file(), reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    Connector *c = new (std::nothrow) Connector(a, nd);
    if (!c) {
        nd->Release();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->Register(c);
    *ppConnector = c->pub();
    return STATUS_SUCCESS;
}

NTSTATUS CreateListener(NDK_ADAPTER *pAdapter, NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent, PVOID ConnectEventContext,
                        NDK_FN_CREATE_COMPLETION, PVOID, NDK_LISTENER **ppListener) {
    Adapter *a = Adapter::From(pAdapter);
    if (!ppListener || !ConnectEvent) return STATUS_INVALID_PARAMETER;
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    IND2Listener *nd = nullptr;
    HRESULT hr = a->nd()->CreateListener(IID_IND2Listener, a->file(), reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) return StatusFromNd(hr);
    Listener *l = new (std::nothrow) Listener(a, nd, ConnectEvent, ConnectEventContext);
    if (!l) {
        nd->Release();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->Register(l);
    *ppListener = l->pub();
    return STATUS_SUCCESS;
}

// Logical address mappings (lam.h): synchronous, never pending.
NTSTATUS BuildLam(NDK_ADAPTER *pAdapter, MDL *Mdl, SIZE_T Length, NDK_FN_REQUEST_COMPLETION, PVOID,
                  NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM, ULONG *pLAMSize, ULONG *pFBO) {
    Adapter *a = Adapter::From(pAdapter);
    if (a->closing()) return STATUS_INVALID_DEVICE_STATE;
    return a->lams().Build(Mdl, Length, pNdkLAM, pLAMSize, pFBO);
}

VOID ReleaseLam(NDK_ADAPTER *pAdapter, NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM) {
    Adapter::From(pAdapter)->lams().Release(pNdkLAM);
}

}  // namespace

const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    QueryExtension, QueryAdapterInfo, CreateCq, CreatePd,   CreateSharedEndpoint,
    CreateConnector, CreateListener, BuildLam, ReleaseLam,
};

}  // namespace opennd::ndk
