// Connector: what the calls an application makes send (the kit holds
// the state machine and the checks, SPI §3.9, §6.9).
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

bool IsLocalAddress(const kit::IpAddress &a) { return kit::HasIp(kit::LocalIpAddresses(), a.sa()); }

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

Connector::Connector(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file,
                     const ND2_ADAPTER_INFO &info)
    : kit::Connector(file, info), adapter_(adapter, true), engine_(std::move(engine)) {
    ConnectorRegistry::Add(this);
}

Connector::~Connector() {
    ConnectorRegistry::Remove(this);
    if (port_fd_ >= 0) close(port_fd_);
}

Connector *Connector::Find(IUnknown *u) { return ConnectorRegistry::Find(u, IID_IND2Connector); }

void Connector::StopWatchingLocked() {
    if (watched_fd_ >= 0) engine_->Unwatch(watched_fd_);
    watched_fd_ = -1;
}

void Connector::OnFinalRelease() {
    std::lock_guard<std::mutex> guard(lock());
    // Over TCP the queue pair may keep the socket open: end the stream now.
    if (conn_ && conn_->tcp) shutdown(conn_->tcp->fd, SHUT_RDWR);
    if (state_ == State::Connected && conn_) CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
    // Released after Connect completed but before CompleteConnect: the
    // peer's Accept fails ND_CONNECTION_REFUSED (COMPAT).
    if (state_ == State::Replied && conn_) CmSend(conn_->cm_fd, NewCmMessage(CmType::Reject));
    if (qp_ && (state_ == State::Connected || state_ == State::Replied || state_ == State::Accepting)) qp_->Close();
    if (qp_ && state_ == State::Connecting) qp_->Unreserve();
    StopWatchingLocked();
    requests().CancelAll();
    conn_.reset();  // closes the CM socket: the peer sees the connection end (R140, R143)
    qp_.reset();
    ClosedLocked();
}

bool Connector::OwnsQueuePair(IUnknown *qp_unknown) {
    QueuePair *qp = QueuePair::Find(qp_unknown);
    return qp && qp->engine() == engine_.get();
}

HRESULT Connector::BindLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(kit::LocalIpAddresses(), want)) return ND_INVALID_ADDRESS;
    HRESULT hr;
    int fd = ReservePort(want, &local_, &hr);
    if (fd < 0) return hr;
    port_fd_ = fd;
    return ND_SUCCESS;
}

// Every shared connector holds its own socket on the address (the TCP path
// connects from it); the kernel lets them share the port (cm_socket.h).
HRESULT Connector::BindSharedLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(kit::LocalIpAddresses(), want)) return ND_INVALID_ADDRESS;
    HRESULT hr;
    int fd = ReservePort(want, &local_, &hr, true);
    if (fd < 0) return hr;
    port_fd_ = fd;
    shared_ = true;
    return ND_SUCCESS;
}

HRESULT Connector::ConnectLocked(IUnknown *qp_unknown, const kit::IpAddress &dest, ULONG inbound_limit,
                                 ULONG outbound_limit, const void *private_data, ULONG private_size,
                                 OVERLAPPED *ov) {
    QueuePair *qp = QueuePair::Find(qp_unknown);
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
        return requests().CompleteNow(ov, ND_CONNECTION_REFUSED);  // retryable: still Bound
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
    m.inbound_read_limit = inbound_limit;  // clamped by the kit (R120)
    m.outbound_read_limit = outbound_limit;
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
        return requests().CompleteNow(ov, ND_CONNECTION_REFUSED);
    }
    hr = requests().Begin(ov);
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
    kit::Connector::StartConnectingLocked(dest, ov);
    watched_fd_ = fd;
    if (stream)
        engine_->WatchStream(fd, this);
    else
        engine_->Watch(fd, this);
}

HRESULT Connector::CompleteConnectLocked() {
    if (conn_->tcp) {  // the RTR (our first FPDU) tells the responder
        qp_->TcpRelease();
        qp_->SetConnected();
        return ND_SUCCESS;
    }
    CmMessage ready = NewCmMessage(CmType::Ready);
    if (conn_->can_access_peer) ready.flags |= kCmFlagCanAccessPeer;
    if (!CmSend(conn_->cm_fd, ready)) return ND_CONNECTION_ABORTED;
    qp_->SetConnected();
    return ND_SUCCESS;
}

HRESULT Connector::AcceptLocked(IUnknown *qp_unknown, const void *private_data, ULONG private_size,
                                OVERLAPPED *ov) {
    QueuePair *qp = QueuePair::Find(qp_unknown);
    if (!qp->Reserve()) return ND_CONNECTION_ACTIVE;
    CmMessage m = NewCmMessage(CmType::Accept);
    if (!CopyPrivateData(&m, private_data, private_size)) {
        qp->Unreserve();
        return ND_ACCESS_VIOLATION;  // R116
    }
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
        InitiatorGoneLocked();
        return ND_CONNECTION_ABORTED;
    }
    HRESULT hr = requests().Begin(ov);
    if (hr != ND_PENDING) {
        qp->Unreserve();
        return hr;
    }
    qp_ = kit::ComPtr<QueuePair>(qp, true);
    StartAcceptingLocked(ov);
    accept_deadline_ms_ = NowMs() + AcceptTimeoutMs();
    if (watched_fd_ >= 0) engine_->WakeAt(watched_fd_, accept_deadline_ms_);  // OnReadable looks
    return ND_PENDING;
}

HRESULT Connector::RejectLocked(const void *private_data, ULONG private_size) {
    CmMessage m = NewCmMessage(CmType::Reject);
    if (!CopyPrivateData(&m, private_data, private_size)) return ND_ACCESS_VIOLATION;  // R116
    if (conn_->tcp)
        RejectTcpLocked(m);
    else
        CmSend(conn_->cm_fd, m);
    if (qp_) qp_->Close();
    StopWatchingLocked();
    conn_.reset();
    return ND_SUCCESS;
}

void Connector::DisconnectLocked() {
    if (conn_->tcp) {
        conn_->tcp->ordered_end = true;
        qp_->TcpShutdown();  // what is framed goes out, then FIN: the peer sees the end
    } else {
        CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
    }
}

// The initiator hears of it as of a disconnect (its CompleteConnect then
// fails), and its late answer finds no Accept to complete.
void Connector::AbandonAcceptLocked() {
    if (conn_->tcp)
        shutdown(conn_->tcp->fd, SHUT_RDWR);
    else
        CmSend(conn_->cm_fd, NewCmMessage(CmType::Disconnect));
}

}  // namespace soft
