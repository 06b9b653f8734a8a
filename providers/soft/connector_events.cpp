// Connector: what arrives on the CM socket (run by the engine's progress
// thread), and handing a listener's request to a connector.
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "cm_socket.h"
#include "opennd/log.h"
#include "connector.h"
#include "soft_clock.h"
#include "soft_limits.h"

namespace soft {

void Connector::Adopt(ConnRequest request) {
    std::lock_guard<std::mutex> guard(lock());
    conn_ = std::move(request.conn);
    const CmMessage &m = request.message;
    opennd::kit::IpAddress peer;
    opennd::kit::FromSockaddr(reinterpret_cast<const sockaddr *>(m.peer_address), m.peer_address_len, &peer);
    RequestedLocked(request.local, peer, m.private_data, m.private_len, m.inbound_read_limit, m.outbound_read_limit);
    if (conn_->tcp) {
        watched_fd_ = conn_->tcp->fd;
        engine_->WatchStream(watched_fd_, this);
    } else {
        watched_fd_ = conn_->cm_fd;
        engine_->Watch(watched_fd_, this);
    }
}

void Connector::OnReadable(int fd) {
    std::lock_guard<std::mutex> guard(lock());
    if (fd != watched_fd_ || !conn_) return;
    if (conn_->tcp)
        OnTcpLocked();
    else
        ReadCmLocked(fd);
    // An initiator that never completes (never sends Ready, or the RTR)
    // must not hold the Accept, its QP and channel for as long as it keeps
    // the socket open (R: ND_IO_TIMEOUT "eventually"; lenient to slow ones).
    if (state_ != State::Accepting) return;
    if (NowMs() < accept_deadline_ms_) {
        engine_->WakeAt(watched_fd_, accept_deadline_ms_);  // (a wake-up before it is due used it)
        return;
    }
    OPENND_LOG(Warn, "ndsoft: the initiator did not complete the connection in %u ms: Accept fails", AcceptTimeoutMs());
    OVERLAPPED *ov = EndAcceptLocked();
    shutdown(fd, SHUT_RDWR);  // fd was watched_fd_: the initiator sees the end now, whoever holds it
    conn_.reset();
    requests().Complete(ov, ND_IO_TIMEOUT);
}

// The peer says (its Accept or Ready) whether it reaches our memory by
// cross-memory attach: its copies are then waited for by Deregister's
// barrier, unless this process already stalled one (Engine::StalledPeer).
bool Connector::PeerReachesUsLocked(const CmMessage &m) {
    return (m.flags & kCmFlagCanAccessPeer) != 0 && !engine_->StalledPeer(conn_->peer_pid);
}

void Connector::ReadCmLocked(int fd) {
    for (;;) {
        CmMessage m;
        int fds[3], nfds = 0;
        int r = CmRecv(fd, &m, fds, &nfds);
        if (r == -2) return;  // nothing more for now
        if (r <= 0) {
            HandleClosedLocked();
            return;
        }
        HandleMessageLocked(m, fds, nfds);
        for (int i = 0; i < nfds; ++i)
            if (fds[i] >= 0) close(fds[i]);
        if (watched_fd_ < 0) return;
    }
}

// A message from the peer. Descriptors the handler keeps are set to -1.
void Connector::HandleMessageLocked(const CmMessage &m, int *fds, int nfds) {
    switch (state_) {
    case State::Connecting:
        if (m.type == CmType::Accept && nfds == 1) {
            std::string error;
            const bool woken = conn_->AdoptPeerWake(engine_, fds[0], &error);
            fds[0] = -1;  // owned by conn_ now
            const pid_t pid = woken ? CmPeerPid(conn_->cm_fd) : -1;
            const bool cma = pid > 0 && ProbeCma(pid, CmPeerUid(conn_->cm_fd), m.probe_address);
            const int table = cma ? FetchPeerFd(pid, m.table_fd) : -1;
            const bool ok = pid > 0 && conn_->SetPeer(engine_->peers(), pid, m.qp_id, table, &error);
            if (!ok) {
                OPENND_LOG(Warn, "ndsoft: refused the peer's accept: %s",
                                error.empty() ? "the kernel does not name the peer's process" : error.c_str());
                ConnectFailedLocked(ND_CONNECTION_REFUSED);
                return;
            }
            conn_->SetTimeouts((m.flags & kCmFlagUsesSrq) != 0);
            conn_->can_access_peer = cma && conn_->peer->mrs.valid();  // one-sided checks need its table
            conn_->peer_can_access_us = PeerReachesUsLocked(m);
            qp_->Attach(conn_);
            // The passive side's final limits: what it serves is what we may issue.
            RepliedLocked(m.private_data, m.private_len, m.outbound_read_limit, m.inbound_read_limit);
        } else if (m.type == CmType::Reject) {
            RejectedLocked(m.private_data, m.private_len);
        } else {
            ConnectFailedLocked(ND_CONNECTION_REFUSED);
        }
        return;
    case State::Accepting:
        if (m.type == CmType::Ready) {
            conn_->peer_can_access_us = PeerReachesUsLocked(m);
            qp_->SetConnected();
            AcceptedLocked();
        } else {
            // The active side rejected our reply (D31) or sent something else.
            requests().Complete(EndAcceptLocked(),
                                m.type == CmType::Reject ? ND_CONNECTION_REFUSED : ND_CONNECTION_ABORTED);
        }
        return;
    case State::Connected:
    case State::Replied:
        if (m.type == CmType::Disconnect) {
            PeerGoneLocked();
        } else if (m.type == CmType::Terminate) {
            qp_->Fail();  // the peer's request failed: the connection is over
        }
        return;
    default: return;
    }
}

// The peer closed the CM socket: it released its connector or died.
void Connector::HandleClosedLocked() {
    switch (state_) {
    case State::Connecting: ConnectFailedLocked(ND_CONNECTION_REFUSED); return;
    case State::Requested:
        InitiatorGoneLocked();  // Accept and Reject now report ND_CONNECTION_ABORTED
        StopWatchingLocked();
        return;
    case State::Accepting:
        // The initiator released its connector or exited before
        // CompleteConnect: it turned our reply down (COMPAT), on every path.
        requests().Complete(EndAcceptLocked(), ND_CONNECTION_REFUSED);
        return;
    case State::Replied:
    case State::Connected: PeerGoneLocked(); return;
    default: StopWatchingLocked(); return;
    }
}

// The attempt failed or was abandoned: the QP is as it was; a refused or
// rejected attempt may be retried on this connector (still bound).
void Connector::ConnectOverLocked(HRESULT *status) {
    StopWatchingLocked();
    if (qp_) qp_->Unreserve();
    qp_.reset();
    bool spent = conn_ && conn_->tcp && port_fd_ < 0;  // the attempt's socket held our port
    if (spent && *status == ND_CONNECTION_REFUSED) {
        // Bind again while the old socket still holds the port (marked as
        // ending): once it is closed another connector could take it.
        EndsSoon(conn_->tcp->fd);
        port_fd_ = RebindPort(local_, shared_);
        if (port_fd_ < 0) *status = ND_CONNECTION_ABORTED;
    }
    conn_.reset();
}

void Connector::AcceptOverLocked() {
    qp_->Close();
    StopWatchingLocked();
}

// The connection is over (either side): everything on the QP completes
// ND_CANCELED (COMPAT); the kit completes NotifyDisconnect.
void Connector::ConnectionOverLocked() {
    StopWatchingLocked();
    if (qp_) qp_->Close();
}

}  // namespace soft
