// NDK shared endpoints: one local address and port that several connectors
// connect from (NdkCreateSharedEndpoint, NdkConnectWithSharedEndpoint). ND2
// binds a connector to an address of its own; OpenND's
// IOpenNdConnectorExt::BindShared lets several share one (adapters with
// OPENND_EXT_SHARED_ENDPOINT). The endpoint is an ND2 connector bound that
// way and never connected: it holds the address while the endpoint is open
// (port 0: the provider picks one, which NdkGetLocalAddress reports). Each
// connector made with it binds the same way before its Connect, and the
// endpoint's close waits for theirs (NDKPI: an endpoint is held by every
// connector that uses it).
#include <cstring>

#include "objects.h"

namespace opennd::ndk {

HRESULT BindShared(IND2Connector *nd, const sockaddr *address, ULONG length) {
    IOpenNdConnectorExt *ext = nullptr;
    if (FAILED(nd->QueryInterface(IID_IOpenNdConnectorExt, reinterpret_cast<void **>(&ext))) || !ext)
        return ND_NOT_SUPPORTED;
    const HRESULT hr = ext->BindShared(address, length);
    ext->Release();
    return hr;
}

SharedEndpoint::SharedEndpoint(Adapter *adapter, IND2Connector *holder, const sockaddr_storage &address,
                               ULONG length)
    : Object(adapter, NdkObjectTypeSharedEndpoint), holder_(holder), address_(address), length_(length) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kSharedEndpointDispatch;
    face_.self = this;
}

SharedEndpoint::~SharedEndpoint() { holder_->Release(); }

HRESULT Connector::UseEndpoint(SharedEndpoint *endpoint) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (endpoint_ == endpoint) return ND_SUCCESS;  // bound by an earlier attempt
        if (endpoint_) return STATUS_ADDRESS_ALREADY_ASSOCIATED;
    }
    const HRESULT hr = BindShared(nd_, endpoint->address(), endpoint->address_length());
    if (FAILED(hr)) return hr;
    std::lock_guard<std::mutex> lock(mu_);
    endpoint_ = endpoint;
    adapter()->Link(this, endpoint);  // the endpoint's close waits for this connector's
    return ND_SUCCESS;
}

namespace {

NTSTATUS GetLocalAddress(NDK_SHARED_ENDPOINT *pEndpoint, PSOCKADDR pAddress, ULONG *pAddressLength) {
    SharedEndpoint *e = Self<SharedEndpoint>(pEndpoint);
    if (!pAddressLength) return STATUS_INVALID_PARAMETER;
    const ULONG room = *pAddressLength;
    *pAddressLength = e->address_length();
    if (!pAddress || room < e->address_length()) return STATUS_BUFFER_TOO_SMALL;
    std::memcpy(pAddress, e->address(), e->address_length());
    return STATUS_SUCCESS;
}

}  // namespace

const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {CloseObject, QueryExtension, GetLocalAddress};

}  // namespace opennd::ndk
