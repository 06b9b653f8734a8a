// Helpers for tests that run an ND peer in a child process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "support/nd_session.h"

#include <csignal>

namespace two_process {

inline opennd::net::IpAddress Addr(const char *text) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    return a;
}

// Runs `server` in a child process; returns its pid and, in *port, the
// port it listens on (0 if it never said). The child writes the port into
// the pipe it is given and exits 0 on success.
template <class F>
pid_t Spawn(uint16_t *port, F server) {
    *port = 0;
    int p[2];
    if (pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        alarm(30);  // never outlive the test
        NdStartup();
        int rc = server(p[1]) ? 0 : 1;
        NdCleanup();
        _exit(rc);
    }
    close(p[1]);
    if (read(p[0], port, sizeof *port) != sizeof *port) *port = 0;
    close(p[0]);
    return pid;
}

// The child's half of Spawn: tells the parent its port, once, and closes
// the pipe.
inline bool TellPort(int port_fd, uint16_t port) {
    bool ok = write(port_fd, &port, sizeof port) == sizeof port;
    close(port_fd);
    return ok;
}

inline opennd::net::IpAddress Addr(const char *text, uint16_t port) {
    opennd::net::IpAddress a = Addr(text);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

// The child's exit status (128: killed; 255: still running after 30 s, then killed).
inline int Reap(pid_t pid) {
    int status = 0;
    for (int i = 0; i < 3000; ++i) {  // 30 s at most
        if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return 255;
}

}  // namespace two_process
