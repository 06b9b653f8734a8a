// Listener: peers that come over TCP (other hosts, or forced). The bound
// port's reservation socket listens; each accepted socket is read until its
// MPA request is complete, then queued like a same-host request.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "cm_socket.h"
#include "opennd/log.h"
#include "listener.h"
#include "soft_limits.h"

namespace soft {
namespace kit = opennd::kit;

namespace {
// Who a remote peer is, for its share of half-open handshakes: its IP.
uint64_t PeerKey(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) != 0) return 0;
    const auto *b = reinterpret_cast<const unsigned char *>(&ss);
    const size_t from = ss.ss_family == AF_INET6 ? offsetof(sockaddr_in6, sin6_addr) : offsetof(sockaddr_in, sin_addr);
    const size_t n = ss.ss_family == AF_INET6 ? 16 : 4;
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the address bytes
    for (size_t i = from; i < from + n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}
}  // namespace

bool Listener::ListenTcpLocked() {
    // Its connections inherit SO_REUSEADDR, so the TIME_WAIT sockets they
    // leave do not keep the port from the next Bind (ReservePort).
    int one = 1;
    setsockopt(port_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (listen(port_fd_, 128) != 0) return false;
    TcpTune(port_fd_);
    tcp_listening_ = true;
    engine_->Watch(port_fd_, this);
    return true;
}

void Listener::AcceptTcpLocked() {
    for (;;) {
        int fd = accept4(port_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && DropOldestHandshakeLocked())
            continue;  // out of descriptors: a silent peer's go first
        if (fd < 0) return;
        TcpTune(fd);
        auto link = std::make_shared<TcpLink>(fd);
        link->connected = true;
        link->responder = std::make_unique<iwarp::Responder>(BaseMpaConfig());
        AdmitLocked(fd, std::move(link), PeerKey(fd));
        ReadTcpRequestLocked(fd);  // as soon as accepted (AcceptAllLocked)
    }
}

void Listener::ReadTcpRequestLocked(int fd) {
    std::shared_ptr<TcpLink> link = handshaking_[fd].link;
    std::vector<uint8_t> in;
    bool open = link->ReadSome(&in);
    size_t used = 0;
    iwarp::HandshakeStatus st = in.empty() ? link->responder->status() : link->responder->Feed(in, &used);
    if (st == iwarp::HandshakeStatus::NeedMore && open) return;
    engine_->Unwatch(fd);
    const uint64_t who = handshaking_[fd].peer;
    handshaking_.erase(fd);
    if (st != iwarp::HandshakeStatus::RequestReceived) {  // bad request or gone: that connection only
        link->out = link->responder->TakeOutput();
        link->Flush();
        return;
    }
    // The initiator sends nothing after its request until our reply (RFC
    // 5044): bytes already behind it are a broken handshake, not data to
    // drop unseen. That connection only; its socket closes with the link.
    if (used < in.size()) {
        OPENND_LOG(Warn, "ndsoft: refused an MPA request followed by %zu bytes before our reply", in.size() - used);
        return;
    }
    if (QueueFullLocked(who)) {  // backlog full: refused (retryable)
        link->out = link->responder->Reject({});
        link->Flush();
        return;
    }
    const iwarp::MpaFrame &request = link->responder->request();
    CmMessage m = NewCmMessage(CmType::Request);
    SetPrivateData(&m, link->responder->peer_private_data());
    // The initiator's IRD is what it will serve (our outbound), its ORD what it will issue.
    m.inbound_read_limit = request.enhanced ? std::min<uint32_t>(request.ird, kMaxReadLimit) : kMaxReadLimit;
    m.outbound_read_limit = request.enhanced ? std::min<uint32_t>(request.ord, kMaxReadLimit) : kMaxReadLimit;
    socklen_t len = sizeof m.peer_address;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(m.peer_address), &len) == 0) m.peer_address_len = len;
    auto conn = std::make_shared<Connection>();
    conn->side = 1;
    conn->tcp = std::move(link);
    ConnRequest req{std::move(conn), m, local_, who};
    kit::IpAddress local;
    len = sizeof local.storage;
    if (getsockname(fd, local.sa(), &len) == 0) req.local = local;  // the address it was made to
    QueueRequestLocked(std::move(req));
}

}  // namespace soft
