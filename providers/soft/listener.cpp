#include "listener.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "cm_socket.h"
#include "opennd/log.h"
#include "soft_limits.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/params.h"

namespace soft {
namespace kit = opennd::kit;

Listener::Listener(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file)
    : kit::Listener<ConnRequest, Connector>(file), adapter_(adapter, true), engine_(std::move(engine)) {}

Listener::~Listener() {
    if (port_fd_ >= 0) close(port_fd_);
}

void Listener::CloseLocked() {
    if (cm_fd_ >= 0) {
        engine_->Unwatch(cm_fd_);
        close(cm_fd_);
        cm_fd_ = -1;
    }
    while (!handshaking_.empty()) DropHandshakeLocked(handshaking_.begin());
    if (tcp_listening_) {
        engine_->Unwatch(port_fd_);  // closed with the listener
        tcp_listening_ = false;
    }
    DropRequestsLocked();  // their CM sockets close: the active sides see a refusal
}

void Listener::OnFinalRelease() {
    std::lock_guard<std::mutex> guard(lock());
    CloseLocked();
}

HRESULT Listener::BindLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(kit::LocalIpAddresses(), want)) return ND_INVALID_ADDRESS;
    HRESULT hr;
    int fd = ReservePort(want, &local_, &hr);
    if (fd < 0) return hr;
    port_fd_ = fd;
    return ND_SUCCESS;
}

HRESULT Listener::ListenLocked() {
    HRESULT hr;
    int fd = CmListen(local_, 128, &hr);
    if (fd < 0) return hr == kit::kStatusAddressAlreadyAssociated ? hr : ND_INSUFFICIENT_RESOURCES;
    if (!ListenTcpLocked()) {
        close(fd);
        return ND_INSUFFICIENT_RESOURCES;
    }
    cm_fd_ = fd;
    engine_->Watch(cm_fd_, this);
    return ND_SUCCESS;
}

Connector *Listener::OwnConnector(IUnknown *connector_unknown) {
    Connector *connector = Connector::Find(connector_unknown);
    return connector && connector->engine() == engine_.get() ? connector : nullptr;
}

void Listener::OnReadable(int fd) {
    std::lock_guard<std::mutex> guard(lock());
    if (fd == cm_fd_)
        AcceptAllLocked();
    else if (tcp_listening_ && fd == port_fd_)
        AcceptTcpLocked();
    else if (auto it = handshaking_.find(fd); it != handshaking_.end())
        it->second.link ? ReadTcpRequestLocked(fd) : ReadRequestLocked(fd);
}

namespace {
// Half-open connections (accepted, request not read yet) a listener keeps
// before it drops any, and a peer's share of them (kMaxHandshakes).
// OPENND_SOFT_MAX_HANDSHAKES lowers the bound (tests: a burst many times
// over it must still get in).
size_t MaxHandshakes() {
    const long n = opennd::ParamLong("OPENND_SOFT_MAX_HANDSHAKES", 0);
    return n > 0 && static_cast<size_t>(n) < kMaxHandshakes ? static_cast<size_t>(n) : kMaxHandshakes;
}
}  // namespace

// A same-host client sends its request with the connect, and it is read at
// once; a TCP client sends its MPA request a moment after, so a burst of
// them is half-open for that moment. Over the bound, or over a peer's
// share, the oldest of that peer (or of the peer holding the most) goes,
// but only once it has had kHandshakeGraceMs to speak: a client about to
// send is never dropped for one that said nothing (COMPAT). Past
// HardHandshakes() the oldest goes all the same, so silent peers hold at
// most that many descriptors (a quarter of this process's, 256 to 1024),
// and none past kHandshakeTimeoutMs.
void Listener::AdmitLocked(int fd, std::shared_ptr<TcpLink> link, uint64_t peer) {
    const auto now = std::chrono::steady_clock::now();
    const auto too_old = now - std::chrono::milliseconds(kHandshakeTimeoutMs);
    const auto spoke_late = now - std::chrono::milliseconds(kHandshakeGraceMs);
    std::map<uint64_t, size_t> per_peer;
    for (auto it = handshaking_.begin(); it != handshaking_.end();) {
        auto next = std::next(it);
        if (it->second.since < too_old)
            DropHandshakeLocked(it);
        else
            ++per_peer[it->second.peer];
        it = next;
    }
    const size_t bound = MaxHandshakes(), share = std::max<size_t>(1, bound / 4), hard = HardHandshakes();
    while (!handshaking_.empty() && (per_peer[peer] >= share || handshaking_.size() >= bound)) {
        uint64_t victim = peer;
        if (per_peer[peer] < share)
            for (const auto &[who, n] : per_peer)
                if (n > per_peer[victim]) victim = who;
        const bool forced = handshaking_.size() >= hard;
        auto oldest = handshaking_.end();
        for (auto it = handshaking_.begin(); it != handshaking_.end(); ++it)
            if (it->second.peer == victim && (forced || it->second.since < spoke_late) &&
                (oldest == handshaking_.end() || it->second.since < oldest->second.since))
                oldest = it;
        if (oldest == handshaking_.end()) break;  // all still within their grace: kept
        --per_peer[victim];
        DropHandshakeLocked(oldest);
    }
    handshaking_[fd] = Handshake{now, std::move(link), peer};
    engine_->Watch(fd, this);
}

bool Listener::DropOldestHandshakeLocked() {
    if (handshaking_.empty()) return false;
    DropHandshakeLocked(std::min_element(handshaking_.begin(), handshaking_.end(), [](const auto &a, const auto &b) {
        return a.second.since < b.second.since;
    }));
    return true;
}

void Listener::DropHandshakeLocked(std::map<int, Handshake>::iterator it) {
    const int fd = it->first;
    engine_->Unwatch(fd);
    if (!it->second.link) close(fd);  // a TcpLink closes its own socket
    handshaking_.erase(it);
}

// Each request is read as soon as its connection is accepted (a client
// sends it with the connect): accepting a burst first and reading later
// let well-behaved clients wait among the half-open, and be dropped (COMPAT).
void Listener::AcceptAllLocked() {
    for (;;) {
        int fd = accept4(cm_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && DropOldestHandshakeLocked())
            continue;  // out of descriptors: a silent peer's go first
        if (fd < 0) return;
        ucred cred{};
        socklen_t len = sizeof cred;
        const uint64_t uid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.uid : ~0ull;
        AdmitLocked(fd, nullptr, uid);
        ReadRequestLocked(fd);
    }
}

void Listener::ReadRequestLocked(int fd) {
    CmMessage m;
    int fds[3], nfds = 0;
    int r = CmRecv(fd, &m, fds, &nfds);
    if (r == -2) return;
    engine_->Unwatch(fd);
    const uint64_t who = handshaking_[fd].peer;
    handshaking_.erase(fd);
    auto drop = [&] {
        for (int i = 0; i < nfds; ++i) close(fds[i]);
        close(fd);
    };
    if (r != 1 || m.type != CmType::Request || nfds != 2) return drop();
    if (QueueFullLocked(who)) {
        CmSend(fd, NewCmMessage(CmType::Reject));  // backlog full: refused (retryable)
        return drop();
    }
    std::string error;
    auto conn = std::make_shared<Connection>();
    conn->cm_fd = fd;
    conn->side = 1;
    conn->channel = Channel::Attach(fds[0], &error);
    if (conn->channel) conn->channel->CloseFd();  // mapped: the descriptor is no longer needed
    // Refused from here on: conn closes the socket (the active side sees a
    // refusal) and owns fds[1]; a failed channel closed fds[0].
    auto refuse = [&] { OPENND_LOG(Warn, "ndsoft: refused a same-host connection request: %s", error.c_str()); };
    if (!conn->channel || !conn->AdoptPeerWake(engine_, fds[1], &error)) {
        if (!conn->channel) close(fds[1]);
        return refuse();
    }
    const pid_t pid = CmPeerPid(fd);
    if (pid < 0) {
        error = "the kernel does not name the peer's process";
        return refuse();
    }
    const bool cma = ProbeCma(pid, CmPeerUid(fd), m.probe_address);
    const int table = cma ? FetchPeerFd(pid, m.table_fd) : -1;
    if (!conn->SetPeer(engine_->peers(), pid, m.qp_id, table, &error)) return refuse();
    conn->SetTimeouts((m.flags & kCmFlagUsesSrq) != 0);
    conn->can_access_peer = cma && conn->peer->mrs.valid();  // one-sided checks need its table
    // The CM socket is blocking for the connector's sends from now on.
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    ConnRequest req{std::move(conn), m, local_, who};
    if (kit::IsWildcard(local_.sa())) {  // same host: the peer reached us on its own address
        kit::IpAddress peer;
        if (kit::FromSockaddr(reinterpret_cast<const sockaddr *>(m.peer_address), m.peer_address_len, &peer) &&
            peer.family() == local_.family()) {
            uint16_t port = kit::Port(local_.sa());
            req.local = peer;
            kit::SetPort(req.local.sa(), port);
        }
    }
    QueueRequestLocked(std::move(req));
}

}  // namespace soft
