// NDK listener over IND2Listener.
//
// NdkListen = Bind + Listen; then one GetConnectionRequest is kept
// outstanding with a fresh ND2 connector. Each request that arrives becomes a
// new NDK connector (child of the adapter, dependent of the listener) handed
// to the connect-event callback; while events are paused the request is
// rejected, as if no one listened. Closing the listener cancels the
// outstanding request and releases the ND2 listener at once (no new
// connections), but completes only once the connectors it delivered are
// closed.
#include <new>

#include "objects.h"

namespace opennd::ndk {

Listener::Listener(Adapter *adapter, IND2Listener *nd, NDK_FN_CONNECT_EVENT_CALLBACK event, void *context)
    : Object(adapter, NdkObjectTypeListener), nd_(nd), event_(event), event_context_(context) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kListenerDispatch;
    face_.self = this;
}

Listener::~Listener() {
    if (nd_) nd_->Release();
}

void Listener::Next() {
    if (closing()) return;
    Adapter *a = adapter();
    IND2Connector *spare = nullptr;
    if (FAILED(a->nd()->CreateConnector(IID_IND2Connector, a->file(), reinterpret_cast<void **>(&spare)))) return;
    Request *r = new (std::nothrow) Request;
    if (!r) {
        spare->Release();
        return;
    }
    r->kind = RequestKind::ConnectionRequest;
    r->connector = spare;
    if (a->StartEvent(this, r, false, [&](OVERLAPPED *ov) { return nd_->GetConnectionRequest(spare, ov); })) return;
    spare->Release();
    delete r;
}

void Listener::OnRequestDone(Request *request, HRESULT status) {
    IND2Connector *nd = request->connector;
    request->connector = nullptr;
    if (FAILED(status) || closing()) {  // cancelled by the close, or the listener failed
        nd->Release();
        return;
    }
    if (paused_.load()) {
        nd->Reject(nullptr, 0);
        nd->Release();
    } else {
        Adapter *a = adapter();
        Connector *c = new (std::nothrow) Connector(a, nd);
        if (!c) {
            nd->Release();
        } else {
            a->Register(c, this);
            event_(event_context_, c->pub());
        }
    }
    Next();
}

void Listener::StopWork() { nd_->CancelOverlappedRequests(); }

void Listener::Quiesce() {
    nd_->Release();  // stops listening now; delivered connectors keep the close pending
    nd_ = nullptr;
}

namespace {

// Synchronous in ND2: STATUS_SUCCESS (no callback) or an error.
NTSTATUS Listen(NDK_LISTENER *pListener, CONST PSOCKADDR pAddress, ULONG AddressLength, NDK_FN_REQUEST_COMPLETION,
                PVOID) {
    Listener *l = Self<Listener>(pListener);
    if (!pAddress) return STATUS_INVALID_PARAMETER_2;
    HRESULT hr = l->nd()->Bind(pAddress, AddressLength);
    if (FAILED(hr)) return BindStatusFromNd(hr);
    hr = l->nd()->Listen(0);
    if (FAILED(hr)) return StatusFromNd(hr);
    l->Next();
    return STATUS_SUCCESS;
}

NTSTATUS GetLocalAddress(NDK_LISTENER *pListener, PSOCKADDR pAddress, ULONG *pAddressLength) {
    return SizeStatusFromNd(Self<Listener>(pListener)->nd()->GetLocalAddress(pAddress, pAddressLength));
}

VOID ControlConnectEvents(NDK_LISTENER *pListener, BOOLEAN Pause) { Self<Listener>(pListener)->Pause(Pause != 0); }

}  // namespace

const NDK_LISTENER_DISPATCH kListenerDispatch = {CloseObject, QueryExtension, Listen, GetLocalAddress,
                                                 ControlConnectEvents};

}  // namespace opennd::ndk
