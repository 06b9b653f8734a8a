// The connector's state machine (connector.h): the calls, in the SPI's
// order of checks, and the events a transport reports.
#include "opennd/kit/connector.h"

#include <utility>

#include "opennd/kit/connection_rules.h"
#include "opennd/kit/extensions.h"

namespace opennd::kit {
Connector::Connector(HANDLE overlapped_file, const ND2_ADAPTER_INFO &info)
    : requests_(overlapped_file), max_caller_data_(info.MaxCallerData), max_callee_data_(info.MaxCalleeData),
      max_inbound_(info.MaxInboundReadLimit), max_outbound_(info.MaxOutboundReadLimit) {}

bool Connector::Fresh() {
    std::lock_guard<std::mutex> guard(mu_);
    return state_ == State::Idle;
}

HRESULT Connector::Bind(const sockaddr *address, ULONG size) { return BindAs(address, size, false); }

HRESULT Connector::BindShared(const sockaddr *address, ULONG size) { return BindAs(address, size, true); }

HRESULT Connector::BindAs(const sockaddr *address, ULONG size, bool shared) {
    IpAddress want;
    if (!FromSockaddr(address, size, &want)) return ND_INVALID_ADDRESS;
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    // Bound already, or given an address by Connect/Accept: what Windows
    // providers answer (COMPAT).
    if (state_ != State::Idle) return kStatusAddressAlreadyAssociated;
    HRESULT hr = shared ? BindSharedLocked(want) : BindLocked(want);
    if (SUCCEEDED(hr)) state_ = State::Bound;
    return hr;
}

namespace {

// IOpenNdConnectorExt, holding the connector.
class ConnectorExt final : public TearOff<IOpenNdConnectorExt, Connector> {
public:
    using TearOff::TearOff;
    HRESULT STDMETHODCALLTYPE BindShared(const sockaddr *address, ULONG size) override {
        return owner_->BindShared(address, size);
    }
};

}  // namespace

HRESULT Connector::QueryInterface(REFIID iid, void **ppv) {
    if (ppv && iid == IID_IOpenNdConnectorExt) return ConnectorExt::Make<ConnectorExt>(this, ppv);
    return Unknown::QueryInterface(iid, ppv);
}

HRESULT Connector::Connect(IUnknown *qp, const sockaddr *dest_sa, ULONG dest_size, ULONG inbound_limit,
                           ULONG outbound_limit, const VOID *private_data, ULONG private_size, OVERLAPPED *ov) {
    // Refused arguments leave the connector usable.
    if (HRESULT hr = CheckPrivateData(private_data, private_size, max_caller_data_); FAILED(hr)) return hr;
    if (!ov) return ND_INVALID_PARAMETER_8;
    if (!OwnsQueuePair(qp)) return ND_INVALID_PARAMETER_1;
    IpAddress dest;
    if (HRESULT hr = CheckDestination(dest_sa, dest_size, &dest); FAILED(hr)) return hr;
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ != State::Idle && state_ != State::Bound)  // a connection in progress or up (COMPAT)
        return state_ == State::Disconnected || state_ == State::Closed ? ND_INVALID_DEVICE_STATE
                                                                        : ND_CONNECTION_ACTIVE;
    return ConnectLocked(qp, dest, ClampReadLimit(inbound_limit, max_inbound_),
                         ClampReadLimit(outbound_limit, max_outbound_), private_data, private_size, ov);
}

HRESULT Connector::CompleteConnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ != State::Replied) return ND_CONNECTION_INVALID;
    HRESULT hr = CompleteConnectLocked();
    if (FAILED(hr)) {
        PeerGoneLocked();
        return requests_.CompleteNow(ov, hr);
    }
    state_ = State::Connected;
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT Connector::Accept(IUnknown *qp, ULONG inbound_limit, ULONG outbound_limit, const VOID *private_data,
                          ULONG private_size, OVERLAPPED *ov) {
    if (HRESULT hr = CheckPrivateData(private_data, private_size, max_callee_data_); FAILED(hr)) return hr;
    if (!ov) return ND_INVALID_PARAMETER_6;
    if (!OwnsQueuePair(qp)) return ND_INVALID_PARAMETER_1;  // R124
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ != State::Requested) return ND_CONNECTION_INVALID;
    if (aborted_) return ND_CONNECTION_ABORTED;
    // What we serve is at most what the initiator will issue, and the reverse.
    inbound_ = ClampReadLimit(inbound_limit, max_inbound_, peer_outbound_);
    outbound_ = ClampReadLimit(outbound_limit, max_outbound_, peer_inbound_);
    return AcceptLocked(qp, private_data, private_size, ov);
}

HRESULT Connector::Reject(const VOID *private_data, ULONG private_size) {
    if (HRESULT hr = CheckPrivateData(private_data, private_size, max_callee_data_); FAILED(hr)) return hr;
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    // The passive side before Accept, or the active side turning the reply
    // down before CompleteConnect (D31).
    if (state_ != State::Requested && state_ != State::Replied) return ND_CONNECTION_INVALID;
    if (aborted_) return ND_CONNECTION_ABORTED;
    HRESULT hr = RejectLocked(private_data, private_size);
    if (SUCCEEDED(hr)) state_ = State::Closed;
    return hr;
}

HRESULT Connector::GetReadLimits(ULONG *inbound, ULONG *outbound) {
    std::lock_guard<std::mutex> guard(mu_);
    switch (state_) {
    case State::Requested:  // what the initiator asked for, within our limits
        if (inbound) *inbound = ClampReadLimit(peer_outbound_, max_inbound_);
        if (outbound) *outbound = ClampReadLimit(peer_inbound_, max_outbound_);
        return ND_SUCCESS;
    case State::Replied:
    case State::Accepting:
    case State::Connected:
        if (inbound) *inbound = inbound_;
        if (outbound) *outbound = outbound_;
        return ND_SUCCESS;
    default: return ND_CONNECTION_INVALID;
    }
}

HRESULT Connector::GetPrivateData(VOID *data, ULONG *size) {
    if (!size) return ND_INVALID_PARAMETER_2;
    std::lock_guard<std::mutex> guard(mu_);
    if (!have_peer_data_) return aborted_ ? ND_CONNECTION_ABORTED : ND_CONNECTION_INVALID;
    return CopyOutPrivateData(peer_data_.data(), static_cast<ULONG>(peer_data_.size()), data, size);
}

HRESULT Connector::GetLocalAddress(sockaddr *address, ULONG *size) {
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ == State::Idle || state_ == State::Closed) return ND_CONNECTION_INVALID;
    return CopyOutAddress(local_, address, size);
}

HRESULT Connector::GetPeerAddress(sockaddr *address, ULONG *size) {
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ != State::Replied && state_ != State::Requested && state_ != State::Accepting &&
        state_ != State::Connected)
        return ND_CONNECTION_INVALID;
    return CopyOutAddress(peer_, address, size);
}

HRESULT Connector::NotifyDisconnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ == State::Disconnected) return requests_.CompleteNow(ov, ND_SUCCESS);
    if (state_ != State::Connected && state_ != State::Accepting && state_ != State::Replied)
        return ND_CONNECTION_INVALID;
    HRESULT hr = requests_.Begin(ov);
    if (hr == ND_PENDING) notify_ovs_.push_back(ov);
    return hr;
}

HRESULT Connector::Disconnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    // After the peer has gone, Disconnect is the application's cleanup: it succeeds.
    if (state_ == State::Disconnected) return requests_.CompleteNow(ov, ND_SUCCESS);
    if (state_ != State::Connected) return ND_CONNECTION_INVALID;
    DisconnectLocked();
    PeerGoneLocked();  // flush (R137) and complete NotifyDisconnect
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT Connector::CancelOverlappedRequests() {
    AfterCall after{this};  // OnUnlocked, once the lock below is released
    std::lock_guard<std::mutex> guard(mu_);
    if (state_ == State::Connecting) ConnectFailedLocked(ND_CANCELED);  // R143
    if (state_ == State::Accepting) {  // L6 on the passive side: the Accept is abandoned
        AbandonAcceptLocked();
        EndAcceptLocked();  // its request is cancelled below with the others
    }
    notify_ovs_.clear();
    return requests_.CancelAll();
}

void Connector::SetPeerDataLocked(const void *data, ULONG size) {
    const auto *bytes = static_cast<const uint8_t *>(data);
    peer_data_.assign(bytes, bytes + (data ? size : 0));
    have_peer_data_ = true;
}

void Connector::StartConnectingLocked(const IpAddress &dest, OVERLAPPED *ov) {
    peer_ = dest;
    connect_ov_ = ov;
    have_peer_data_ = false;
    state_ = State::Connecting;
}

void Connector::RepliedLocked(const void *private_data, ULONG private_size, ULONG inbound, ULONG outbound) {
    SetPeerDataLocked(private_data, private_size);
    inbound_ = inbound;
    outbound_ = outbound;
    state_ = State::Replied;
    requests_.Complete(std::exchange(connect_ov_, nullptr), ND_SUCCESS);
}

void Connector::RejectedLocked(const void *private_data, ULONG private_size) {
    SetPeerDataLocked(private_data, private_size);  // the reject's private data is readable
    ConnectFailedLocked(ND_CONNECTION_REFUSED);
}

void Connector::ConnectFailedLocked(HRESULT status) {
    ConnectOverLocked(&status);
    // Refused: the connector is still bound and may try again.
    state_ = status == ND_CONNECTION_REFUSED ? State::Bound : State::Closed;
    if (OVERLAPPED *ov = std::exchange(connect_ov_, nullptr)) requests_.Complete(ov, status);
}

void Connector::RequestedLocked(const IpAddress &local, const IpAddress &peer, const void *private_data,
                                ULONG private_size, ULONG peer_inbound, ULONG peer_outbound) {
    local_ = local;
    peer_ = peer;
    SetPeerDataLocked(private_data, private_size);
    peer_inbound_ = peer_inbound;
    peer_outbound_ = peer_outbound;
    state_ = State::Requested;
}

void Connector::StartAcceptingLocked(OVERLAPPED *ov) {
    accept_ov_ = ov;
    state_ = State::Accepting;
}

void Connector::AcceptedLocked() {
    state_ = State::Connected;
    requests_.Complete(std::exchange(accept_ov_, nullptr), ND_SUCCESS);
}

OVERLAPPED *Connector::EndAcceptLocked() {
    AcceptOverLocked();
    state_ = State::Closed;
    return std::exchange(accept_ov_, nullptr);
}

void Connector::PeerLeftLocked(HRESULT while_connecting) {
    if (state_ == State::Connecting)
        ConnectFailedLocked(while_connecting);
    else if (state_ == State::Accepting)
        requests_.Complete(EndAcceptLocked(), ND_CONNECTION_ABORTED);
    else if (state_ == State::Connected || state_ == State::Replied)
        PeerGoneLocked();
    else if (state_ == State::Requested)
        InitiatorGoneLocked();
}

void Connector::PeerGoneLocked() {
    ConnectionOverLocked();
    state_ = State::Disconnected;
    for (OVERLAPPED *ov : notify_ovs_) requests_.Complete(ov, ND_SUCCESS);
    notify_ovs_.clear();
}

}  // namespace opennd::kit
