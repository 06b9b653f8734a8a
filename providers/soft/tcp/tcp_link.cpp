#include "tcp_link.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cm_socket.h"
#include "soft_limits.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/params.h"

namespace soft {
namespace kit = opennd::kit;

TcpLink::~TcpLink() {
    if (fd < 0) return;
    // A stream Disconnect shut down in order whose bytes the peer has not
    // all acknowledged yet closes in order too: a reset would drop Sends
    // that already completed here (COMPAT). Any other ends with a reset.
    int unacked = 0;
    const bool ending_in_order = ordered_end.load() && ioctl(fd, TIOCOUTQ, &unacked) == 0 && unacked > 0;
    EndsSoon(fd);
    if (abortive_close && !ending_in_order) {
        linger l{1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(fd);
}

bool TcpLink::Flush() {
    while (!out.empty()) {
        ssize_t n = send(fd, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        out.erase(out.begin(), out.begin() + n);
    }
    return true;
}

bool TcpLink::ReadSome(std::vector<uint8_t> *in) {
    uint8_t buf[4096];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) return false;
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        in->insert(in->end(), buf, buf + n);
        if (static_cast<size_t>(n) < sizeof buf) return true;
    }
}

bool UseTcp(bool dest_is_local) {
    const char *t = opennd::ParamText("OPENND_SOFT_TRANSPORT");  // read per connection: tests switch it
    if (t && std::strcmp(t, "tcp") == 0) return true;
    return !dest_is_local;
}

namespace {
HRESULT ConnectError(int err) {
    switch (err) {
    case 0: return ND_SUCCESS;
    case EINPROGRESS:
    case EALREADY: return ND_PENDING;
    case ECONNREFUSED:
    case ECONNRESET: return ND_CONNECTION_REFUSED;
    case ENETUNREACH: return ND_NETWORK_UNREACHABLE;
    case EHOSTUNREACH:
    case EHOSTDOWN: return ND_HOST_UNREACHABLE;
    case ETIMEDOUT: return ND_IO_TIMEOUT;
    case EADDRINUSE:
    case EADDRNOTAVAIL: return opennd::kit::kStatusAddressAlreadyAssociated;
    default: return ND_CONNECTION_REFUSED;
    }
}
}  // namespace

int RebindPort(const kit::IpAddress &local, bool shared) {
    HRESULT hr;
    kit::IpAddress bound;
    return ReservePort(local, &bound, &hr, shared);  // passes over the old socket, which has SO_REUSEADDR (EndsSoon)
}

void EndsSoon(int fd) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
}

uint32_t TcpTimeoutMs() {
    const long v = opennd::ParamLong("OPENND_SOFT_TCP_TIMEOUT_MS", 15000);  // read each time: tests set it per case
    return static_cast<uint32_t>(std::clamp<long>(v, 100, 3600 * 1000));
}

uint32_t MpaHoldMs(bool dest_is_local) {
    if (const long v = opennd::ParamLong("OPENND_SOFT_MPA_HOLD_MS", -1); v >= 0)
        return static_cast<uint32_t>(std::min<long>(v, 10000));
    return dest_is_local ? 0 : 300;
}

void TcpTune(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    unsigned timeout = TcpTimeoutMs();
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout, sizeof timeout);
    // Keepalive finds a half-open connection (the peer's host went away
    // while we had nothing to send): probes after a third of the timeout.
    int idle = std::max(1, static_cast<int>(timeout / 3000)), interval = idle, count = 2;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

HRESULT TcpConnect(int fd, const kit::IpAddress &dest) {
    TcpTune(fd);
    if (connect(fd, dest.sa(), dest.length()) == 0) return ND_SUCCESS;
    return ConnectError(errno);
}

HRESULT TcpConnectResult(int fd) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return ND_CONNECTION_REFUSED;
    if (err != 0) return ConnectError(err);
    sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &plen) != 0)
        return errno == ENOTCONN ? ND_PENDING : ND_CONNECTION_REFUSED;
    return ND_SUCCESS;
}

iwarp::MpaConfig BaseMpaConfig() {
    iwarp::MpaConfig c;
    // CRC is used when either side asks; siw and we ask for none by default.
    // OPENND_SOFT_MPA_CRC=1: ask as initiator, insist as responder.
    const char *crc = opennd::ParamText("OPENND_SOFT_MPA_CRC");  // read per connection: tests switch it
    c.crc = crc && std::strcmp(crc, "1") == 0;
    return c;
}

iwarp::MpaConfig MpaConfigFor(uint32_t inbound_limit, uint32_t outbound_limit) {
    iwarp::MpaConfig c = BaseMpaConfig();
    c.ird = static_cast<uint16_t>(std::min(inbound_limit, kMaxReadLimit));
    c.ord = static_cast<uint16_t>(std::min(outbound_limit, kMaxReadLimit));
    return c;
}

}  // namespace soft
