// Peers on another machine (remote_peer.h): the server that starts them
// there, and the test side's requests to it.
#include "support/remote_peer.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <set>

#include "opennd/ip_address.h"
#include "support/peer.h"

namespace ndc {

namespace {

opennd::net::IpAddress g_host;  // the peer server (family 0: none)

// One line (without its '\n'), read a byte at a time so that nothing after
// it (the peer's first reply) is taken; false on EOF, error or `ms` spent.
bool ReadLine(int fd, std::string *line, int ms) {
    line->clear();
    while (line->size() < 128) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, ms) != 1) return false;
        char c;
        if (recv(fd, &c, 1, 0) != 1) return false;
        if (c == '\n') return true;
        *line += c;
    }
    return false;
}

bool WriteAll(int fd, const std::string &s) {
    return send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

void Serve(int fd, const std::vector<std::string> &peer_args, std::set<pid_t> *peers) {
    std::string line;
    if (!ReadLine(fd, &line, 5000)) return;
    if (line == "peer" || line == "peer isolated") {
        const pid_t pid = SpawnPeer(peer_args, fd, -1, line != "peer");  // the connection is its channel
        if (pid > 0) peers->insert(pid);
        WriteAll(fd, pid > 0 ? "pid " + std::to_string(pid) + "\n" : "err\n");
        return;
    }
    int pid = 0, sig = 0;
    if (std::sscanf(line.c_str(), "signal %d %d", &pid, &sig) == 2 && peers->count(pid) && sig > 0 && sig < 65) {
        const bool ok = kill(pid, sig) == 0;
        if (ok && sig == SIGKILL) {
            waitpid(pid, nullptr, 0);
            peers->erase(pid);
        }
        WriteAll(fd, ok ? "ok\n" : "err\n");
        return;
    }
    WriteAll(fd, "err\n");
}

}  // namespace

int ServePeers(uint16_t port, const std::vector<std::string> &peer_args) {
    signal(SIGPIPE, SIG_IGN);
    const int lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int off = 0, on = 1;
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_any;
    any.sin6_port = htons(port);
    if (lfd < 0 || setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) != 0 ||
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(lfd, reinterpret_cast<sockaddr *>(&any), sizeof any) != 0 || listen(lfd, 16) != 0) {
        std::fprintf(stderr, "ndconformance: cannot serve peers on port %u: %s\n", port, std::strerror(errno));
        return 3;
    }
    std::printf("ndconformance: serving peers on port %u\n", port);
    std::fflush(stdout);
    std::set<pid_t> peers;
    for (;;) {
        for (pid_t p; (p = waitpid(-1, nullptr, WNOHANG)) > 0;) peers.erase(p);
        pollfd p{lfd, POLLIN, 0};
        if (poll(&p, 1, 200) != 1) continue;
        const int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        Serve(fd, peer_args, &peers);
        close(fd);  // a peer has its own copy
    }
}

std::string SetPeerHost(const std::string &host_port) {
    if (!opennd::net::ParseAddress(host_port, &g_host) || opennd::net::Port(g_host.sa()) == 0)
        return "--peer-host wants ADDRESS:PORT or [V6]:PORT, not " + host_port;
    return "";
}

bool PeerHostSet() { return g_host.family() != 0; }

int AskPeerHost(const std::string &request, std::string *answer, std::string *why) {
    // Connected within 10 s (a silent host would hold a blocking connect
    // for minutes), then blocking again for the peer's channel.
    const int fd = socket(g_host.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    bool up = fd >= 0 && (connect(fd, g_host.sa(), g_host.length()) == 0 || errno == EINPROGRESS);
    if (up) {
        pollfd p{fd, POLLOUT, 0};
        int err = 0;
        socklen_t len = sizeof err;
        up = poll(&p, 1, 10000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 &&
             fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0;
        if (!up && err) errno = err;
        if (!up && !err) errno = ETIMEDOUT;
    }
    if (!up) {
        *why = "cannot reach the peer server at " + opennd::net::ToString(g_host.sa(), true) + ": " +
               std::strerror(errno);
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!WriteAll(fd, request + "\n") || !ReadLine(fd, answer, 10000)) {
        *why = "no answer from the peer server to '" + request + "'";
        close(fd);
        return -1;
    }
    return fd;
}

}  // namespace ndc
