// TCP over loopback: ping-pong (TCP_NODELAY; busy-polling non-blocking
// recv, or blocking recv with --blocking) and streaming bandwidth. The
// parent listens on 127.0.0.1 (or [::1] with --ipv6), the child connects.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "baselines.h"
#include "process.h"

namespace opennd::bench {

namespace {

[[noreturn]] void Fail(const std::string &what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

struct Fd {
    int fd = -1;
    explicit Fd(int f = -1) : fd(f) {}
    ~Fd() {
        if (fd >= 0) close(fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
};

struct Endpoint {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

int Listen(bool ipv6, Endpoint *ep) {
    int fd = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) Fail("socket");
    Fd guard(fd);
    if (ipv6) {
        auto *a = reinterpret_cast<sockaddr_in6 *>(&ep->addr);
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        ep->len = sizeof *a;
    } else {
        auto *a = reinterpret_cast<sockaddr_in *>(&ep->addr);
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ep->len = sizeof *a;
    }
    if (bind(fd, reinterpret_cast<sockaddr *>(&ep->addr), ep->len) != 0)
        Fail(ipv6 ? "bind [::1] (is IPv6 loopback available?)" : "bind 127.0.0.1");
    if (listen(fd, 1) != 0) Fail("listen");
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&ep->addr), &ep->len) != 0) Fail("getsockname");
    guard.fd = -1;
    return fd;
}

void Configure(int fd, bool nonblocking, double timeout_seconds) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) Fail("setsockopt TCP_NODELAY");
    timeval tv{static_cast<time_t>(timeout_seconds), 0};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        Fail("setsockopt SO_RCVTIMEO/SO_SNDTIMEO");
    if (nonblocking && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) Fail("fcntl O_NONBLOCK");
}

// Accepts the child's connection; if the child fails first, throws its error.
int Accept(int listener, Child &child, double seconds) {
    pollfd p[2] = {{listener, POLLIN, 0}, {child.status_fd(), POLLIN, 0}};
    if (poll(p, 2, static_cast<int>(seconds * 1000)) <= 0) throw std::runtime_error("the child did not connect");
    if (!(p[0].revents & POLLIN)) {
        child.Finish(2);  // throws the child's error
        throw std::runtime_error("the child exited without connecting");
    }
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) Fail("accept");
    return fd;
}

int Connect(const Endpoint &ep) {
    int fd = socket(ep.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) Fail("socket");
    if (connect(fd, reinterpret_cast<const sockaddr *>(&ep.addr), ep.len) != 0) {
        close(fd);
        Fail("connect");
    }
    return fd;
}

// Busy mode (non-blocking socket): spin on EAGAIN until the deadline.
// Blocking mode: the socket timeouts bound each call.
void SendAll(int fd, const char *p, std::size_t n, bool busy, const Deadline &d) {
    Spinner spin(d);
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= static_cast<std::size_t>(k);
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!busy || !spin.Pause()) throw std::runtime_error("send timed out");
        } else {
            Fail("send");
        }
    }
}

// False if the peer closed the connection before the first byte.
bool RecvAll(int fd, char *p, std::size_t n, bool busy, const Deadline &d) {
    Spinner spin(d);
    std::size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, p + got, n - got, 0);
        if (k > 0) {
            got += static_cast<std::size_t>(k);
        } else if (k == 0) {
            if (got == 0) return false;
            throw std::runtime_error("connection closed in the middle of a message");
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!busy || !spin.Pause()) throw std::runtime_error("recv timed out");
        } else {
            Fail("recv");
        }
    }
    return true;
}

std::string Family(const Options &o) { return o.ipv6 ? "tcp6" : "tcp4"; }

}  // namespace

Result TcpPingPong(const Options &o, uint64_t size) {
    bool busy = !o.blocking;
    Endpoint ep;
    Fd listener(Listen(o.ipv6, &ep));
    Mapping src(size, false), dst(size, false);

    Child child(
        [&](ChildSide &side) {
            Fd fd(Connect(ep));
            Configure(fd.fd, busy, ChildGuardSeconds(o));
            while (RecvAll(fd.fd, dst.data(), size, busy, side.deadline()))  // echo until EOF
                SendAll(fd.fd, dst.data(), size, busy, side.deadline());
        },
        ChildGuardSeconds(o));
    Fd conn(Accept(listener.fd, child, 10));
    Configure(conn.fd, busy, ReplyGuardSeconds(o));

    Deadline hard(ReplyGuardSeconds(o));
    uint64_t seq = 0;
    Measurement m = Measure(LatencyConfig(o), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            Stamp(src.data(), size, ++seq);
            SendAll(conn.fd, src.data(), size, busy, hard);
            if (!RecvAll(conn.fd, dst.data(), size, busy, hard)) throw std::runtime_error("the child closed the connection");
            CheckStamp(dst.data(), size, seq, "the parent");
        }
    });
    shutdown(conn.fd, SHUT_WR);  // the child sees EOF and exits
    child.Finish(2);

    Result r("tcp-pingpong", Family(o) + (busy ? "-busypoll" : "-blocking"), "half round trip, TCP_NODELAY", size);
    SetLatencySamples(r, m, 0.5);
    return r;
}

Result TcpStream(const Options &o, uint64_t size) {
    Endpoint ep;
    Fd listener(Listen(o.ipv6, &ep));
    Mapping src(size, false), dst(size, false);

    // Each batch: an 8-byte byte count, the messages, then a 1-byte ack so
    // the sample ends when the child has received everything.
    Child child(
        [&](ChildSide &side) {
            Fd fd(Connect(ep));
            Configure(fd.fd, false, ChildGuardSeconds(o));
            uint64_t count = 0;
            while (RecvAll(fd.fd, reinterpret_cast<char *>(&count), sizeof count, false, side.deadline())) {
                for (uint64_t left = count; left > 0;) {
                    std::size_t n = std::min<uint64_t>(left, size);
                    if (!RecvAll(fd.fd, dst.data(), n, false, side.deadline()))
                        throw std::runtime_error("connection closed mid-batch");
                    left -= n;
                }
                char ack = 'A';
                SendAll(fd.fd, &ack, 1, false, side.deadline());
            }
        },
        ChildGuardSeconds(o));
    Fd conn(Accept(listener.fd, child, 10));
    Configure(conn.fd, false, ReplyGuardSeconds(o));

    Deadline hard(ReplyGuardSeconds(o));
    Measurement m = Measure(BandwidthConfig(o, size), [&](uint64_t n) {
        uint64_t count = n * size;
        SendAll(conn.fd, reinterpret_cast<const char *>(&count), sizeof count, false, hard);
        for (uint64_t i = 0; i < n; ++i) SendAll(conn.fd, src.data(), size, false, hard);
        char ack = 0;
        if (!RecvAll(conn.fd, &ack, 1, false, hard) || ack != 'A') throw std::runtime_error("no ack from the child");
    });
    shutdown(conn.fd, SHUT_WR);
    child.Finish(2);

    Result r("tcp-stream", Family(o), "send/recv stream, blocking", size);
    SetBandwidthSamples(r, m, static_cast<double>(size));
    return r;
}

}  // namespace opennd::bench
