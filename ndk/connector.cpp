// NDK connector over IND2Connector.
//
// Connect = Bind (source address) + Connect; CompleteConnect, Accept and
// Disconnect are the ND2 calls of the same name. The disconnect event given
// to CompleteConnect/Accept is an IND2Connector::NotifyDisconnect issued once
// the connection is up; it is reported once, and only for a disconnect the
// peer started (a local NdkDisconnect or close also completes ND2's Notify).
#include <new>

#include "objects.h"

namespace opennd::ndk {

Connector::Connector(Adapter *adapter, IND2Connector *nd) : Object(adapter, NdkObjectTypeConnector), nd_(nd) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kConnectorDispatch;
    face_.self = this;
}

Connector::~Connector() { nd_->Release(); }  // still connected: the release disconnects

void Connector::UseQp(Qp *qp) {
    std::lock_guard<std::mutex> lock(mu_);
    if (qp_ == qp) return;
    qp_ = qp;
    adapter()->Link(this, qp);  // the QP's close waits for this connector's
}

void Connector::SetDisconnectEvent(NDK_FN_DISCONNECT_EVENT_CALLBACK event, void *context) {
    std::lock_guard<std::mutex> lock(mu_);
    disconnect_event_ = event;
    disconnect_context_ = context;
}

void Connector::WatchDisconnect() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!disconnect_event_) return;
    }
    Request *r = new (std::nothrow) Request;
    if (!r) return;
    r->kind = RequestKind::DisconnectNotify;
    if (!adapter()->StartEvent(this, r, false, [&](OVERLAPPED *ov) { return nd_->NotifyDisconnect(ov); })) delete r;
}

void Connector::OnRequestDone(Request *request, HRESULT status) {
    switch (request->kind) {
    case RequestKind::CompleteConnect:
    case RequestKind::Accept:
        if (SUCCEEDED(status)) WatchDisconnect();  // before the consumer hears of the connection
        Object::OnRequestDone(request, status);
        return;
    case RequestKind::DisconnectNotify: {
        if (status == ND_CANCELED || local_disconnect_.load() || closing() || disconnect_reported_) return;
        disconnect_reported_ = true;
        NDK_FN_DISCONNECT_EVENT_CALLBACK event;
        void *context;
        {
            std::lock_guard<std::mutex> lock(mu_);
            event = disconnect_event_;
            context = disconnect_context_;
        }
        if (event) event(context);
        return;
    }
    default: Object::OnRequestDone(request, status); return;
    }
}

void Connector::StopWork() { nd_->CancelOverlappedRequests(); }

namespace {

// Connect, the connector bound (or left for the provider to bind).
NTSTATUS ConnectBound(Connector *c, Qp *qp, CONST PSOCKADDR pDestAddress, ULONG DestAddressLength,
                      ULONG InboundReadLimit, ULONG OutboundReadLimit, CONST PVOID pPrivateData,
                      ULONG PrivateDataLength, NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    c->UseQp(qp);
    return c->adapter()->Start(c, RequestKind::Consumer, RequestCompletion, RequestContext, [&](OVERLAPPED *ov) {
        return c->nd()->Connect(qp->nd(), pDestAddress, DestAddressLength, InboundReadLimit, OutboundReadLimit,
                                pPrivateData, PrivateDataLength, ov);
    });
}

NTSTATUS Connect(NDK_CONNECTOR *pConnector, NDK_QP *pQp, CONST PSOCKADDR pSrcAddress, ULONG SrcAddressLength,
                 CONST PSOCKADDR pDestAddress, ULONG DestAddressLength, ULONG InboundReadLimit,
                 ULONG OutboundReadLimit, CONST PVOID pPrivateData, ULONG PrivateDataLength,
                 NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    Connector *c = Self<Connector>(pConnector);
    if (!pQp) return STATUS_INVALID_PARAMETER_2;
    if (!pDestAddress) return STATUS_INVALID_PARAMETER_5;
    if (pSrcAddress) {
        // A connector whose earlier attempt failed is still bound: keep that.
        HRESULT hr = c->nd()->Bind(pSrcAddress, SrcAddressLength);
        if (FAILED(hr) && hr != ND_INVALID_DEVICE_STATE) return BindStatusFromNd(hr);
    }
    return ConnectBound(c, Self<Qp>(pQp), pDestAddress, DestAddressLength, InboundReadLimit, OutboundReadLimit,
                        pPrivateData, PrivateDataLength, RequestCompletion, RequestContext);
}

// Connect from the endpoint's address (shared_endpoint.cpp).
NTSTATUS ConnectWithSharedEndpoint(NDK_CONNECTOR *pConnector, NDK_QP *pQp, NDK_SHARED_ENDPOINT *pSharedEndpoint,
                                   CONST PSOCKADDR pDestAddress, ULONG DestAddressLength, ULONG InboundReadLimit,
                                   ULONG OutboundReadLimit, CONST PVOID pPrivateData, ULONG PrivateDataLength,
                                   NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    Connector *c = Self<Connector>(pConnector);
    if (!pQp) return STATUS_INVALID_PARAMETER_2;
    if (!pSharedEndpoint) return STATUS_INVALID_PARAMETER_3;
    if (!pDestAddress) return STATUS_INVALID_PARAMETER_4;
    const HRESULT hr = c->UseEndpoint(Self<SharedEndpoint>(pSharedEndpoint));
    if (FAILED(hr)) return BindStatusFromNd(hr);
    return ConnectBound(c, Self<Qp>(pQp), pDestAddress, DestAddressLength, InboundReadLimit, OutboundReadLimit,
                        pPrivateData, PrivateDataLength, RequestCompletion, RequestContext);
}

NTSTATUS CompleteConnect(NDK_CONNECTOR *pConnector, NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                         PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                         PVOID RequestContext) {
    Connector *c = Self<Connector>(pConnector);
    c->SetDisconnectEvent(DisconnectEvent, DisconnectEventContext);
    NTSTATUS status = c->adapter()->Start(c, RequestKind::CompleteConnect, RequestCompletion, RequestContext,
                                          [&](OVERLAPPED *ov) { return c->nd()->CompleteConnect(ov); });
    if (status == STATUS_SUCCESS) c->WatchDisconnect();
    return status;
}

NTSTATUS Accept(NDK_CONNECTOR *pConnector, NDK_QP *pQp, ULONG InboundReadLimit, ULONG OutboundReadLimit,
                CONST PVOID pPrivateData, ULONG PrivateDataLength, NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    Connector *c = Self<Connector>(pConnector);
    if (!pQp) return STATUS_INVALID_PARAMETER_2;
    Qp *qp = Self<Qp>(pQp);
    c->SetDisconnectEvent(DisconnectEvent, DisconnectEventContext);
    c->UseQp(qp);
    NTSTATUS status =
        c->adapter()->Start(c, RequestKind::Accept, RequestCompletion, RequestContext, [&](OVERLAPPED *ov) {
            return c->nd()->Accept(qp->nd(), InboundReadLimit, OutboundReadLimit, pPrivateData, PrivateDataLength,
                                   ov);
        });
    if (status == STATUS_SUCCESS) c->WatchDisconnect();
    return status;
}

NTSTATUS Reject(NDK_CONNECTOR *pConnector, CONST PVOID pPrivateData, ULONG PrivateDataLength) {
    return StatusFromNd(Self<Connector>(pConnector)->nd()->Reject(pPrivateData, PrivateDataLength));
}

// IRD/ORD from GetReadLimits, private data from GetPrivateData. (NULL, 0)
// asks for the size; a buffer that is too small gets STATUS_BUFFER_TOO_SMALL
// and the size needed.
NTSTATUS GetConnectionData(NDK_CONNECTOR *pConnector, ULONG *pInboundReadLimit, ULONG *pOutboundReadLimit,
                           PVOID pPrivateData, ULONG *pPrivateDataLength) {
    IND2Connector *nd = Self<Connector>(pConnector)->nd();
    if (!pPrivateDataLength) return STATUS_INVALID_PARAMETER_5;
    ULONG inbound = 0, outbound = 0;
    HRESULT hr = nd->GetReadLimits(&inbound, &outbound);
    if (FAILED(hr)) return StatusFromNd(hr);
    if (pInboundReadLimit) *pInboundReadLimit = inbound;
    if (pOutboundReadLimit) *pOutboundReadLimit = outbound;
    const ULONG capacity = pPrivateData ? *pPrivateDataLength : 0;
    hr = nd->GetPrivateData(pPrivateData, pPrivateDataLength);
    if (hr == ND_BUFFER_OVERFLOW && *pPrivateDataLength <= capacity) return STATUS_SUCCESS;  // it all fit
    return SizeStatusFromNd(hr);
}

NTSTATUS GetLocalAddress(NDK_CONNECTOR *pConnector, PSOCKADDR pAddress, ULONG *pAddressLength) {
    return SizeStatusFromNd(Self<Connector>(pConnector)->nd()->GetLocalAddress(pAddress, pAddressLength));
}

NTSTATUS GetPeerAddress(NDK_CONNECTOR *pConnector, PSOCKADDR pAddress, ULONG *pAddressLength) {
    return SizeStatusFromNd(Self<Connector>(pConnector)->nd()->GetPeerAddress(pAddress, pAddressLength));
}

NTSTATUS Disconnect(NDK_CONNECTOR *pConnector, NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext) {
    Connector *c = Self<Connector>(pConnector);
    const bool marked = c->MarkLocalDisconnect(true);  // the disconnect it causes is no event
    NTSTATUS status = c->adapter()->Start(c, RequestKind::Consumer, RequestCompletion, RequestContext,
                                          [&](OVERLAPPED *ov) { return c->nd()->Disconnect(ov); });
    if (!NT_SUCCESS(status) && !marked) c->MarkLocalDisconnect(false);  // refused: the peer's still is one
    return status;
}

}  // namespace

const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    CloseObject, QueryExtension,   Connect,         ConnectWithSharedEndpoint, CompleteConnect, Accept,
    Reject,      GetConnectionData, GetLocalAddress, GetPeerAddress,           Disconnect,
};

}  // namespace opennd::ndk
