#include "cm_socket.h"
#include "opennd/kit/memory_region.h"

#include "soft_limits.h"
#include "opennd/kit/connection_rules.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace soft {
namespace kit = opennd::kit;

namespace {

constexpr uint16_t kEphemeralFirst = 49152;
constexpr uint16_t kEphemeralLast = 65535;

socklen_t CmAddress(const kit::IpAddress &a, sockaddr_un *un) {
    std::memset(un, 0, sizeof *un);
    un->sun_family = AF_UNIX;
    std::string name = "opennd-cm/" + kit::ToString(a.sa()) + "/" + std::to_string(kit::Port(a.sa()));
    // Abstract namespace: sun_path[0] = 0, the name follows, no terminator.
    std::memcpy(un->sun_path + 1, name.data(), std::min(name.size(), sizeof(un->sun_path) - 2));
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

HRESULT BindError(int err) {
    switch (err) {
    case EADDRINUSE: return opennd::kit::kStatusAddressAlreadyAssociated;
    case EADDRNOTAVAIL:
    case EAFNOSUPPORT:
    case EINVAL: return ND_INVALID_ADDRESS;
    case ENOMEM:
    case ENOBUFS: return ND_NO_MEMORY;
    default: return ND_INSUFFICIENT_RESOURCES;
    }
}

}  // namespace

namespace {

int PortSocket(int family) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && family == AF_INET6) {
        int one = 1;  // an IPv6 wildcard reserves IPv6 only; IPv4 is its own space
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    }
    return fd;
}

// A port named by the caller. Connections leave TIME_WAIT sockets on their
// port when they end; on Windows the ND port is free as soon as the
// listener is released (COMPAT). So when the plain bind finds the port in
// use, bind again with SO_REUSEADDR, which passes over sockets that have it
// too and are not listening: only those whose connection is ending have it
// (EndsSoon, tcp_link.h); a reservation clears it once bound, so a
// reservation, a listener or a live connection still refuses the port. The
// plain bind comes first, so a port no socket holds is bound without the
// flag (a bind bucket made with it would let later ones in unchecked).
// Serialised in the process; two processes binding the same port in the
// moment the flag is set could both get it (a known limit).
int BindNamedPort(int fd, const kit::IpAddress &a, HRESULT *hr) {
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    if (bind(fd, a.sa(), a.length()) == 0) return fd;
    if (errno != EADDRINUSE) {
        *hr = BindError(errno);
        close(fd);
        return -1;
    }
    close(fd);
    fd = PortSocket(a.family());
    int on = 1, off = 0;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, a.sa(), a.length()) != 0) {
        *hr = fd < 0 ? BindError(errno) : opennd::kit::kStatusAddressAlreadyAssociated;
        if (fd >= 0) close(fd);
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &off, sizeof off);
    return fd;
}

}  // namespace

int ReservePort(const kit::IpAddress &want, kit::IpAddress *bound, HRESULT *hr, bool shared) {
    int fd = PortSocket(want.family());
    if (fd < 0) {
        *hr = BindError(errno);
        return -1;
    }
    kit::IpAddress a = want;
    const int on = 1;
    if (kit::Port(a.sa()) != 0 && shared) {
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 || bind(fd, a.sa(), a.length()) != 0) {
            *hr = errno == EADDRINUSE ? opennd::kit::kStatusAddressAlreadyAssociated : BindError(errno);
            close(fd);
            return -1;
        }
    } else if (kit::Port(a.sa()) != 0) {
        fd = BindNamedPort(fd, a, hr);
        if (fd < 0) return -1;
    } else {
        uint32_t span = kEphemeralLast - kEphemeralFirst + 1, start = 0;
        if (getrandom(&start, sizeof start, 0) != sizeof start) start = static_cast<uint32_t>(getpid());
        bool ok = false;
        for (uint32_t i = 0; i < span && !ok; ++i) {
            kit::SetPort(a.sa(), static_cast<uint16_t>(kEphemeralFirst + (start + i) % span));
            if (bind(fd, a.sa(), a.length()) == 0) ok = true;
            else if (errno != EADDRINUSE) break;
        }
        if (!ok) {
            *hr = errno == EADDRINUSE ? ND_TOO_MANY_ADDRESSES : BindError(errno);
            close(fd);
            return -1;
        }
        // Bound plainly, so the port was free; from now on shared
        // reservations of it pass (the kernel checks the flag of the
        // sockets already bound when another binds).
        if (shared && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
            *hr = BindError(errno);
            close(fd);
            return -1;
        }
    }
    *bound = a;
    *hr = ND_SUCCESS;
    return fd;
}

int CmListen(const kit::IpAddress &bound, int backlog, HRESULT *hr) {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *hr = ND_INSUFFICIENT_RESOURCES;
        return -1;
    }
    sockaddr_un un;
    socklen_t len = CmAddress(bound, &un);
    if (bind(fd, reinterpret_cast<sockaddr *>(&un), len) != 0 || listen(fd, backlog) != 0) {
        *hr = BindError(errno);
        close(fd);
        return -1;
    }
    *hr = ND_SUCCESS;
    return fd;
}

int CmConnect(const kit::IpAddress &dest, HRESULT *hr) {
    kit::IpAddress candidates[3] = {dest, {}, {}};
    int n = 1;
    kit::IpAddress any4, any6;
    kit::ParseAddress("0.0.0.0", &any4);
    kit::ParseAddress("::", &any6);
    kit::SetPort(any4.sa(), kit::Port(dest.sa()));
    kit::SetPort(any6.sa(), kit::Port(dest.sa()));
    candidates[n++] = dest.family() == AF_INET ? any4 : any6;
    for (int i = 0; i < n; ++i) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0) break;
        sockaddr_un un;
        socklen_t len = CmAddress(candidates[i], &un);
        if (connect(fd, reinterpret_cast<sockaddr *>(&un), len) == 0) {
            *hr = ND_SUCCESS;
            return fd;
        }
        close(fd);
    }
    *hr = ND_CONNECTION_REFUSED;
    return -1;
}

bool CopyPrivateData(CmMessage *m, const void *data, ULONG len) {
    m->private_len = 0;
    if (len == 0) return true;
    if (!data || len > kMaxPrivateData) return false;
    if (!opennd::kit::CopyFromApplication(m->private_data, data, len)) return false;
    m->private_len = len;
    return true;
}

pid_t CmPeerPid(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return -1;
    return cred.pid;
}

uid_t CmPeerUid(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return static_cast<uid_t>(-1);
    return cred.uid;
}

CmMessage NewCmMessage(CmType type) {
    CmMessage m{};
    m.magic = kCmMagic;
    m.version = kWireVersion;
    m.size = sizeof(CmMessage);
    m.type = type;
    m.pid = static_cast<uint32_t>(getpid());
    m.table_fd = -1;
    return m;
}

bool CmSend(int fd, const CmMessage &m, const int *fds, int nfds) {
    iovec iov{const_cast<CmMessage *>(&m), sizeof m};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)];
    if (nfds > 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    for (;;) {
        // Never blocks: a few messages per connection fit any socket buffer;
        // a full one means a peer that does not read (it is refused).
        ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r == static_cast<ssize_t>(sizeof m)) return true;
        if (r < 0 && errno == EINTR) continue;
        return false;
    }
}

int CmRecv(int fd, CmMessage *m, int *fds, int *nfds) {
    iovec iov{m, sizeof *m};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t r;
    do {
        r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (r < 0 && errno == EINTR);
    *nfds = 0;
    if (r < 0) return errno == EAGAIN ? -2 : -1;  // no control data to look at (msg_controllen is stale)
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int count = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < count; ++i) {
            int f;
            std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (*nfds < 3)
                fds[(*nfds)++] = f;
            else
                close(f);
        }
    }
    auto drop = [&] {
        for (int i = 0; i < *nfds; ++i) close(fds[i]);
        *nfds = 0;
        return -1;
    };
    if (r == 0) {  // closed (descriptors that came with the end are dropped)
        drop();
        return 0;
    }
    if (r != static_cast<ssize_t>(sizeof *m) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || m->magic != kCmMagic ||
        m->version != kWireVersion || m->size != sizeof *m || m->private_len > kMaxPrivateData ||
        m->peer_address_len > sizeof m->peer_address)
        return drop();
    return 1;
}

void SetPrivateData(CmMessage *m, std::span<const uint8_t> data) {
    m->private_len = static_cast<uint32_t>(std::min<size_t>(data.size(), kMaxPrivateData));
    if (m->private_len) std::memcpy(m->private_data, data.data(), m->private_len);
}

}  // namespace soft
