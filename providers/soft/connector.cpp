// Connector: the calls an application makes (SPI §3.9, state model §6.9).
#include "connector.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "cm_socket.h"
#include "soft_clock.h"
#include "soft_limits.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/kit/registry.h"
#include "srq.h"

namespace soft {
namespace kit = opennd::kit;
namespace {

using ConnectorRegistry = kit::Registry<Connector, IND2Connector>;

bool IsLocalAddress(const kit::IpAddress &a) {
    for (const auto &l : kit::LocalIpAddresses())
        if (kit::SameIp(l.sa(), a.sa())) return true;
    return false;
}

// The local address the kernel would use to reach `dest`.
bool RouteSource(const kit::IpAddress &dest, kit::IpAddress *out) {
    int fd = socket(dest.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    kit::IpAddress d = dest;
    if (kit::Port(d.sa()) == 0) kit::SetPort(d.sa(), 9);
    socklen_t len = sizeof out->storage;
    bool ok = connect(fd, d.sa(), d.length()) == 0 && getsockname(fd, out->sa(), &len) == 0;
    close(fd);
    if (ok) kit::SetPort(out->sa(), 0);
    return ok;
}

}  // namespace

Connector::Connector(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file)
    : adapter_(adapter, true), engine_(std::move(engine)), requests_(file) {
    ConnectorRegistry::Add(this);
}

Connector::~Connector() {
    ConnectorRegistry::Remove(this);
    if (port_fd_ >= 0) close(port_fd_);
}

Connector *Connector::Find(IUnknown *u) { return ConnectorRegistry::Find(u, IID_IND2Connector); }

bool Connector::Fresh() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::Idle;
}

void Connector::StopWatchingLocked() {
    if (watched_fd_ >= 0) engine_->Unwatch(watched_fd_);
    watched_fd_ = -1;
}

void Connector::OnFinalRelease() {
    std::lock_guard<std::mutex> lock(mu_);
    // Over TCP the queue pair may keep the socket open: end the stream now.
    if (conn_ && conn_->tcp) shutdown(conn_->tcp->fd, SHUT_RDWR);
    if (state_ == State::Connected && conn_) CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
    // Released after Connect completed but before CompleteConnect: the
    // peer's Accept fails ND_CONNECTION_REFUSED (COMPAT).
    if (state_ == State::Replied && conn_) CmSend(conn_->cm_fd, NewCmMessage(CmType::Reject));
    if (qp_ && (state_ == State::Connected || state_ == State::Replied || state_ == State::Accepting)) qp_->Close();
    if (qp_ && state_ == State::Connecting) qp_->Unreserve();
    StopWatchingLocked();
    requests_.CancelAll();
    conn_.reset();  // closes the CM socket: the peer sees the connection end (R140, R143)
    qp_.reset();
    state_ = State::Closed;
}

HRESULT Connector::Bind(const sockaddr *address, ULONG size) {
    kit::IpAddress want;
    if (!kit::FromSockaddr(address, size, &want)) return ND_INVALID_ADDRESS;
    std::lock_guard<std::mutex> lock(mu_);
    // Bound already, or given an address by Connect/Accept: what Windows
    // providers answer (COMPAT).
    if (state_ != State::Idle) return kit::kStatusAddressAlreadyAssociated;
    if (!kit::IsWildcard(want.sa()) && !IsLocalAddress(want)) return ND_INVALID_ADDRESS;
    HRESULT hr;
    int fd = ReservePort(want, &local_, &hr);
    if (fd < 0) return hr;
    port_fd_ = fd;
    state_ = State::Bound;
    return ND_SUCCESS;
}

HRESULT Connector::Connect(IUnknown *qp_unknown, const sockaddr *dest_sa, ULONG dest_size, ULONG inbound_limit,
                           ULONG outbound_limit, const VOID *private_data, ULONG private_size, OVERLAPPED *ov) {
    if (HRESULT hr = kit::CheckPrivateData(private_data, private_size, kAdvertisedPrivateData); FAILED(hr)) return hr;
    if (!ov) return ND_INVALID_PARAMETER_8;
    QueuePair *qp = QueuePair::Find(qp_unknown);
    if (!qp || qp->engine() != engine_.get()) return ND_INVALID_PARAMETER_1;
    kit::IpAddress dest;
    if (HRESULT hr = kit::CheckDestination(dest_sa, dest_size, &dest); FAILED(hr)) return hr;
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Idle && state_ != State::Bound)  // a connection in progress or up (COMPAT)
        return state_ == State::Disconnected || state_ == State::Closed ? ND_INVALID_DEVICE_STATE
                                                                        : ND_CONNECTION_ACTIVE;
    bool tcp = UseTcp(IsLocalAddress(dest));  // same host: shared memory, unless forced
    if (state_ == State::Idle) {
        kit::IpAddress src;
        if (!RouteSource(dest, &src)) return ND_NETWORK_UNREACHABLE;
        HRESULT hr;
        int fd = ReservePort(src, &local_, &hr);
        if (fd < 0) return hr;
        port_fd_ = fd;
        state_ = State::Bound;
    }
    if (!qp->Reserve()) return ND_CONNECTION_ACTIVE;
    if (tcp) {
        HRESULT r = ConnectTcpLocked(qp, dest, inbound_limit, outbound_limit, private_data, private_size, ov);
        if (conn_ && conn_->tcp) conn_->tcp->hold_ms = MpaHoldMs(IsLocalAddress(dest));
        return r;
    }
    HRESULT hr = ND_SUCCESS;
    int cm = CmConnect(dest, &hr);
    if (cm < 0) {
        qp->Unreserve();
        return requests_.CompleteNow(ov, ND_CONNECTION_REFUSED);  // retryable: still Bound
    }
    std::string error;
    auto conn = std::make_shared<Connection>();
    conn->cm_fd = cm;
    conn->side = 0;
    conn->channel = Channel::Create(&error);
    if (!conn->channel) {
        qp->Unreserve();
        return ND_NO_MEMORY;
    }
    CmMessage m = NewCmMessage(CmType::Request);
    m.inbound_read_limit = kit::ClampReadLimit(inbound_limit, kMaxReadLimit);
    m.outbound_read_limit = kit::ClampReadLimit(outbound_limit, kMaxReadLimit);
    m.probe_address = ProbeAddress();
    m.qp_id = qp->id();
    m.flags = qp->UsesSrq() ? kCmFlagUsesSrq : 0;
    std::memcpy(m.peer_address, &local_.storage, local_.length());
    m.peer_address_len = local_.length();
    if (!CopyPrivateData(&m, private_data, private_size)) {
        qp->Unreserve();
        return ND_ACCESS_VIOLATION;  // R116
    }
    m.table_fd = engine_->mrs().fd();
    const int wake = conn->MakeWake();
    if (wake < 0) {
        qp->Unreserve();
        return ND_INSUFFICIENT_RESOURCES;
    }
    int fds[2] = {conn->channel->fd(), wake};
    bool sent = CmSend(cm, m, fds, 2);
    close(wake);  // the peer's now
    conn->channel->CloseFd();  // sent and mapped: not needed any more
    if (!sent) {
        qp->Unreserve();
        return requests_.CompleteNow(ov, ND_CONNECTION_REFUSED);
    }
    hr = requests_.Begin(ov);
    if (hr != ND_PENDING) {
        qp->Unreserve();
        return hr;
    }
    StartConnectingLocked(std::move(conn), qp, dest, ov, cm);
    return ND_PENDING;
}

void Connector::StartConnectingLocked(std::shared_ptr<Connection> conn, QueuePair *qp, const kit::IpAddress &dest,
                                      OVERLAPPED *ov, int fd) {
    const bool stream = conn->tcp != nullptr;
    conn_ = std::move(conn);
    qp_ = kit::ComPtr<QueuePair>(qp, true);
    peer_ = dest;
    connect_ov_ = ov;
    have_peer_data_ = false;
    state_ = State::Connecting;
    watched_fd_ = fd;
    if (stream)
        engine_->WatchStream(fd, this);
    else
        engine_->Watch(fd, this);
}

HRESULT Connector::CompleteConnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Replied) return ND_CONNECTION_INVALID;
    if (conn_->tcp) {  // the RTR (our first FPDU) tells the responder
        qp_->TcpRelease();
        qp_->SetConnected();
        state_ = State::Connected;
        return requests_.CompleteNow(ov, ND_SUCCESS);
    }
    CmMessage ready = NewCmMessage(CmType::Ready);
    if (conn_->can_access_peer) ready.flags |= kCmFlagCanAccessPeer;
    if (!CmSend(conn_->cm_fd, ready)) {
        PeerGoneLocked();
        return requests_.CompleteNow(ov, ND_CONNECTION_ABORTED);
    }
    qp_->SetConnected();
    state_ = State::Connected;
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT Connector::Accept(IUnknown *qp_unknown, ULONG inbound_limit, ULONG outbound_limit, const VOID *private_data,
                          ULONG private_size, OVERLAPPED *ov) {
    if (HRESULT hr = kit::CheckPrivateData(private_data, private_size, kAdvertisedPrivateData); FAILED(hr)) return hr;
    if (!ov) return ND_INVALID_PARAMETER_6;
    QueuePair *qp = QueuePair::Find(qp_unknown);
    if (!qp || qp->engine() != engine_.get()) return ND_INVALID_PARAMETER_1;  // R124
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Requested) return ND_CONNECTION_INVALID;
    if (aborted_) return ND_CONNECTION_ABORTED;
    if (!qp->Reserve()) return ND_CONNECTION_ACTIVE;
    CmMessage m = NewCmMessage(CmType::Accept);
    if (!CopyPrivateData(&m, private_data, private_size)) {
        qp->Unreserve();
        return ND_ACCESS_VIOLATION;  // R116
    }
    inbound_ = kit::ClampReadLimit(inbound_limit, kMaxReadLimit, peer_msg_.outbound_read_limit);
    outbound_ = kit::ClampReadLimit(outbound_limit, kMaxReadLimit, peer_msg_.inbound_read_limit);
    if (conn_->tcp) return AcceptTcpLocked(qp, m, ov);
    m.inbound_read_limit = inbound_;
    m.outbound_read_limit = outbound_;
    m.probe_address = ProbeAddress();
    if (conn_->can_access_peer) m.flags |= kCmFlagCanAccessPeer;
    m.qp_id = qp->id();
    m.flags |= qp->UsesSrq() ? kCmFlagUsesSrq : 0;
    std::memcpy(m.peer_address, &local_.storage, local_.length());
    m.peer_address_len = local_.length();
    m.table_fd = engine_->mrs().fd();
    const int wake = conn_->MakeWake();
    if (wake < 0) {
        qp->Unreserve();
        return ND_INSUFFICIENT_RESOURCES;
    }
    int fds[1] = {wake};
    bool sent = CmSend(conn_->cm_fd, m, fds, 1);
    close(wake);  // the peer's now
    HRESULT hr = AcceptSentLocked(qp, sent, ov);
    if (hr == ND_PENDING) qp->Attach(conn_);  // the first Send may arrive before Ready is read
    return hr;
}

HRESULT Connector::AcceptSentLocked(QueuePair *qp, bool sent, OVERLAPPED *ov) {
    if (!sent) {
        qp->Unreserve();
        aborted_ = true;
        return ND_CONNECTION_ABORTED;
    }
    HRESULT hr = requests_.Begin(ov);
    if (hr != ND_PENDING) {
        qp->Unreserve();
        return hr;
    }
    qp_ = kit::ComPtr<QueuePair>(qp, true);
    accept_ov_ = ov;
    state_ = State::Accepting;
    accept_deadline_ms_ = NowMs() + AcceptTimeoutMs();
    if (watched_fd_ >= 0) engine_->WakeAt(watched_fd_, accept_deadline_ms_);  // OnReadable looks
    return ND_PENDING;
}

HRESULT Connector::Reject(const VOID *private_data, ULONG private_size) {
    if (HRESULT hr = kit::CheckPrivateData(private_data, private_size, kAdvertisedPrivateData); FAILED(hr)) return hr;
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Requested && state_ != State::Replied) return ND_CONNECTION_INVALID;
    if (aborted_) return ND_CONNECTION_ABORTED;
    CmMessage m = NewCmMessage(CmType::Reject);
    if (!CopyPrivateData(&m, private_data, private_size)) return ND_ACCESS_VIOLATION;  // R116
    if (conn_->tcp)
        RejectTcpLocked(m);
    else
        CmSend(conn_->cm_fd, m);
    if (qp_) qp_->Close();
    StopWatchingLocked();
    conn_.reset();
    state_ = State::Closed;
    return ND_SUCCESS;
}

HRESULT Connector::GetReadLimits(ULONG *inbound, ULONG *outbound) {
    std::lock_guard<std::mutex> lock(mu_);
    switch (state_) {
    case State::Requested:  // what the active side asked for, within our limits
        if (inbound) *inbound = kit::ClampReadLimit(peer_msg_.outbound_read_limit, kMaxReadLimit);
        if (outbound) *outbound = kit::ClampReadLimit(peer_msg_.inbound_read_limit, kMaxReadLimit);
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
    std::lock_guard<std::mutex> lock(mu_);
    if (!have_peer_data_) return aborted_ ? ND_CONNECTION_ABORTED : ND_CONNECTION_INVALID;
    return kit::CopyOutPrivateData(peer_msg_.private_data, peer_msg_.private_len, data, size);
}

HRESULT Connector::GetLocalAddress(sockaddr *address, ULONG *size) {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::Idle || state_ == State::Closed) return ND_CONNECTION_INVALID;
    return kit::CopyOutAddress(local_, address, size);
}

HRESULT Connector::GetPeerAddress(sockaddr *address, ULONG *size) {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::Replied && state_ != State::Requested && state_ != State::Accepting &&
        state_ != State::Connected)
        return ND_CONNECTION_INVALID;
    return kit::CopyOutAddress(peer_, address, size);
}

HRESULT Connector::NotifyDisconnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::Disconnected) return requests_.CompleteNow(ov, ND_SUCCESS);
    if (state_ != State::Connected && state_ != State::Accepting && state_ != State::Replied)
        return ND_CONNECTION_INVALID;
    HRESULT hr = requests_.Begin(ov);
    if (hr == ND_PENDING) notify_ovs_.push_back(ov);
    return hr;
}

HRESULT Connector::Disconnect(OVERLAPPED *ov) {
    if (!ov) return ND_INVALID_PARAMETER_1;
    std::lock_guard<std::mutex> lock(mu_);
    // After the peer has gone, Disconnect is the application's cleanup: it succeeds.
    if (state_ == State::Disconnected) return requests_.CompleteNow(ov, ND_SUCCESS);
    if (state_ != State::Connected) return ND_CONNECTION_INVALID;
    if (conn_->tcp) {
        conn_->tcp->ordered_end = true;
        qp_->TcpShutdown();  // what is framed goes out, then FIN: the peer sees the end
    }
    else
        CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
    PeerGoneLocked();  // flush (R137) and complete NotifyDisconnect
    return requests_.CompleteNow(ov, ND_SUCCESS);
}

HRESULT Connector::CancelOverlappedRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::Connecting) AbandonLocked(ND_CANCELED);  // R143
    if (state_ == State::Accepting) {  // L6 on the passive side: the Accept is abandoned
        // The initiator hears of it as of a disconnect (its CompleteConnect
        // then fails), and its late answer finds no Accept to complete.
        if (conn_->tcp)
            shutdown(conn_->tcp->fd, SHUT_RDWR);
        else
            CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
        EndAcceptLocked();  // its request is cancelled below with the others
    }
    notify_ovs_.clear();
    return requests_.CancelAll();
}

}  // namespace soft
