// Connector over TCP: the MPA handshake (RFC 5044 / RFC 6581) carries ND's
// private data and read limits (IRD/ORD); the RTR the initiator sends at
// CompleteConnect is what completes the responder's Accept. Afterwards the
// socket belongs to the queue pair's TcpPath; this side watches it for the
// connection's end (EOF, reset) and to let the progress thread serve it.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "cm_socket.h"
#include "connector.h"
#include "soft_limits.h"
#include "opennd/kit/connection_rules.h"

namespace soft {
namespace kit = opennd::kit;
HRESULT Connector::ConnectTcpLocked(QueuePair *qp, const kit::IpAddress &dest, ULONG inbound, ULONG outbound,
                                    const VOID *private_data, ULONG private_size, OVERLAPPED *ov) {
    CmMessage m = NewCmMessage(CmType::Request);
    if (!CopyPrivateData(&m, private_data, private_size)) {
        qp->Unreserve();
        return ND_ACCESS_VIOLATION;  // R116
    }
    HRESULT hr = TcpConnect(port_fd_, dest);
    if (hr != ND_SUCCESS && hr != ND_PENDING) {
        qp->Unreserve();
        EndsSoon(port_fd_);
        close(port_fd_);
        port_fd_ = RebindPort(local_, shared_);  // retryable: still bound
        if (port_fd_ < 0) state_ = State::Closed;
        return requests().CompleteNow(ov, hr);
    }
    auto conn = std::make_shared<Connection>();
    conn->tcp = std::make_shared<TcpLink>(port_fd_);
    port_fd_ = -1;  // the link owns it now
    hr = requests().Begin(ov);
    if (hr != ND_PENDING) {
        qp->Unreserve();
        EndsSoon(conn->tcp->fd);
        port_fd_ = RebindPort(local_, shared_);
        return hr;
    }
    inbound_ = inbound;  // what we asked for (clamped by the kit), until the reply says more
    outbound_ = outbound;
    iwarp::MpaConfig config = MpaConfigFor(inbound_, outbound_);
    conn->tcp->initiator =
        std::make_unique<iwarp::Initiator>(config, std::span<const uint8_t>(m.private_data, m.private_len));
    conn->tcp->out = conn->tcp->initiator->request();
    const int fd = conn->tcp->fd;
    StartConnectingLocked(std::move(conn), qp, dest, ov, fd);
    return ND_PENDING;
}

void Connector::OnTcpLocked() {
    TcpLink &link = *conn_->tcp;
    switch (state_) {
    case State::Connecting: TcpHandshakeLocked(); return;
    case State::Requested: {
        // The initiator sends nothing before our reply: only its end matters.
        std::vector<uint8_t> in;
        if (!link.ReadSome(&in) || !in.empty()) {
            InitiatorGoneLocked();  // Accept and Reject now report ND_CONNECTION_ABORTED
            StopWatchingLocked();
        }
        return;
    }
    case State::Accepting:
    case State::Replied:
    case State::Connected: {
        TcpPath::Event e = qp_->TcpProgress();
        if (state_ == State::Accepting && qp_->TcpEstablished()) {  // the RTR is in: the initiator completed
            qp_->SetConnected();
            AcceptedLocked();
        }
        if (e == TcpPath::Event::Closed) HandleClosedLocked();
        return;
    }
    default: return;
    }
}

void Connector::TcpHandshakeLocked() {
    TcpLink &link = *conn_->tcp;
    if (!link.connected) {
        HRESULT hr = TcpConnectResult(link.fd);
        if (hr == ND_PENDING) return;
        if (FAILED(hr)) return ConnectFailedLocked(hr);
        link.connected = true;
        kit::IpAddress me;
        socklen_t len = sizeof me.storage;
        if (getsockname(link.fd, me.sa(), &len) == 0) local_ = me;
    }
    if (!link.Flush()) return ConnectFailedLocked(ND_CONNECTION_REFUSED);
    std::vector<uint8_t> in;
    bool open = link.ReadSome(&in);
    size_t used = 0;
    iwarp::HandshakeStatus st = in.empty() ? link.initiator->status() : link.initiator->Feed(in, &used);
    switch (st) {
    case iwarp::HandshakeStatus::Connected: {
        const iwarp::MpaFrame &reply = link.initiator->reply();
        const iwarp::Negotiated &n = link.initiator->negotiated();
        ULONG inbound = inbound_, outbound = outbound_;
        if (reply.enhanced) {  // what the responder will serve is what we may issue, and the reverse
            inbound = std::min<ULONG>(inbound, reply.ord);
            outbound = std::min<ULONG>(outbound, n.ord);
        }
        std::vector<uint8_t> after(in.begin() + static_cast<ptrdiff_t>(used), in.end());
        qp_->AttachTcp(conn_, n, std::move(after), true);  // nothing leaves before CompleteConnect
        const std::span<const uint8_t> pd = link.initiator->peer_private_data();
        RepliedLocked(pd.data(), static_cast<ULONG>(std::min<size_t>(pd.size(), kMaxPrivateData)), inbound, outbound);
        if (!open) HandleClosedLocked();
        return;
    }
    case iwarp::HandshakeStatus::Rejected: {
        const std::span<const uint8_t> pd = link.initiator->peer_private_data();
        return RejectedLocked(pd.data(), static_cast<ULONG>(std::min<size_t>(pd.size(), kMaxPrivateData)));
    }
    case iwarp::HandshakeStatus::Failed: {
        link.out = link.initiator->TakeOutput();  // a Terminate, if one fits
        link.Flush();
        return ConnectFailedLocked(ND_CONNECTION_REFUSED);
    }
    default:
        if (!open) ConnectFailedLocked(ND_CONNECTION_REFUSED);
        return;
    }
}

HRESULT Connector::AcceptTcpLocked(QueuePair *qp, const CmMessage &m, OVERLAPPED *ov) {
    TcpLink &link = *conn_->tcp;
    iwarp::MpaConfig limits = MpaConfigFor(inbound_, outbound_);
    link.responder->SetReadLimits(limits.ird, limits.ord);
    link.out = link.responder->Accept(std::span<const uint8_t>(m.private_data, m.private_len));
    HRESULT hr = AcceptSentLocked(qp, !link.out.empty() && link.Flush(), ov);
    if (hr != ND_PENDING) return hr;
    const iwarp::Negotiated &n = link.responder->negotiated();
    qp->AttachTcp(conn_, n, {}, false);
    // Without an RTR (a peer that did not ask for one) nothing tells us when
    // the initiator is ready: the Accept completes now; the engine still
    // sends nothing before the initiator's first FPDU (RFC 5044).
    if (n.rtr == iwarp::RtrType::None || qp->TcpEstablished()) {
        qp->SetConnected();
        AcceptedLocked();
    }
    return ND_PENDING;
}

void Connector::RejectTcpLocked(const CmMessage &m) {
    TcpLink &link = *conn_->tcp;
    if (state_ == State::Requested && link.responder) {
        link.out = link.responder->Reject(std::span<const uint8_t>(m.private_data, m.private_len));
        link.Flush();
    }
    shutdown(link.fd, SHUT_WR);
}

}  // namespace soft
