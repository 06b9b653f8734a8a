// Faults on the TCP path between two network namespaces (two "hosts"
// joined by veth): the network cut under a connection, a peer that stops
// answering (SIGSTOP: its kernel still acknowledges), a connection the
// peer's host resets, and a half-open one (the network goes while we have
// nothing to send: only keepalive can tell). Outstanding requests must
// complete (ND_CANCELED) within the TCP timeout, never hang, and
// NotifyDisconnect fires. Needs root for ip netns: skipped without it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "support/nd_session.h"

namespace {
using namespace nd_session;

constexpr uint64_t kTimeoutMs = 1500;  // OPENND_SOFT_TCP_TIMEOUT_MS for these tests

opennd::net::IpAddress Addr(const char *text, uint16_t port = 0) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

bool Sh(const std::string &cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

class TcpFault : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0 || !Sh("ip netns list")) GTEST_SKIP() << "needs root and ip netns";
        std::string id = std::to_string(getpid());
        a_ = "ondft-a-" + id;
        b_ = "ondft-b-" + id;
        ASSERT_TRUE(Sh("ip netns add " + a_) && Sh("ip netns add " + b_));
        ASSERT_TRUE(Sh("ip link add ondft-va netns " + a_ + " type veth peer name ondft-vb netns " + b_));
        for (auto [ns, dev, ip] : {std::tuple{a_, "ondft-va", "10.78.0.1"}, std::tuple{b_, "ondft-vb", "10.78.0.2"}}) {
            ASSERT_TRUE(Sh("ip -n " + ns + " link set lo up"));
            ASSERT_TRUE(Sh("ip -n " + ns + " addr add " + std::string(ip) + "/24 dev " + dev));
            ASSERT_TRUE(Sh("ip -n " + ns + " link set " + dev + " up"));
        }
        setenv("OPENND_SOFT_TCP_TIMEOUT_MS", std::to_string(kTimeoutMs).c_str(), 1);
    }
    void TearDown() override {
        if (a_.empty()) return;
        Sh("ip netns del " + a_);
        Sh("ip netns del " + b_);
        unsetenv("OPENND_SOFT_TCP_TIMEOUT_MS");
    }
    // Forks a child in namespace `ns` running fn; returns its pid.
    template <typename Fn>
    pid_t Spawn(const std::string &ns, Fn fn) {
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) _exit(100);
            _exit(fn());
        }
        return pid;
    }
    static int Reap(pid_t pid, uint64_t ms) {
        int status = 0;
        for (uint64_t t = 0; t < ms; t += 10) {
            if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
            usleep(10000);
        }
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return 255;
    }
    // The server: accepts one connection, keeps one receive posted, answers
    // nothing else; lives until killed. Tells its port through `out`.
    static int Server(int out) {
        if (NdStartup() != S_OK) return 1;
        Endpoint ep;
        uint16_t port = 0;
        Buffer b(4096);
        if (!ep.Open(Addr("10.78.0.2")) || !ep.Listen(Addr("10.78.0.2"), &port) || !b.Register(ep)) return 2;
        ND2_SGE s = b.Sge();
        ep.qp->Receive(nullptr, &s, 1);
        if (write(out, &port, sizeof port) != sizeof port || !ep.Accept()) return 3;
        for (;;) pause();
    }
    // The client: connects, one Send goes through, then (after `go` says
    // the fault is in place) posts a Write (unless `idle`) and checks that
    // it and a posted receive complete ND_CANCELED within bounds and
    // NotifyDisconnect fires. Exit 0 on success, else a code saying which
    // step failed.
    static int Client(uint16_t port, int ready, int go, bool idle) {
        if (NdStartup() != S_OK) return 10;
        Endpoint ep;
        Buffer b(4096);
        if (!ep.Open(Addr("10.78.0.1")) || !b.Register(ep)) return 11;
        if (!ep.Connect(Addr("10.78.0.2", port))) return 12;
        ND2_SGE s = b.Sge(0, 64);
        if (ep.qp->Send(nullptr, &s, 1, 0) != ND_SUCCESS || ep.Next().Status != ND_SUCCESS) return 13;
        ND2_SGE r = b.Sge(1024, 64);
        if (ep.qp->Receive(&b, &r, 1) != ND_SUCCESS) return 14;
        OVERLAPPED notify{};
        if (ep.connector->NotifyDisconnect(&notify) != ND_PENDING) return 15;
        char c = 1;
        if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1) return 16;
        uint64_t t0 = NowMs();
        if (!idle && ep.qp->Write(nullptr, &s, 1, 0x1000, 0, 0) != ND_SUCCESS) return 17;
        int done = 0, outstanding = idle ? 1 : 2;
        for (int i = 0; i < outstanding; ++i) {
            ND2_RESULT res = ep.Next(kTimeoutMs * 4 + 5000);
            if (res.Status == ND_IO_TIMEOUT && res.RequestContext == nullptr && res.RequestType == Nd2RequestTypeReceive)
                return 18;  // nothing came: a hang
            if (res.Status == ND_SUCCESS) return 19;  // a cut network cannot have taken it
            ++done;
        }
        if (done != outstanding || NowMs() - t0 > kTimeoutMs * 4 + 5000) return 20;
        if (ep.Wait(ep.connector, &notify, ND_PENDING, 5000) != ND_SUCCESS) return 21;
        return 0;
    }
    // Runs the client against a server, applying `fault` when the client is ready.
    int Scenario(const std::function<void(pid_t server)> &fault, bool idle = false) {
        int port_pipe[2], ready[2], go[2];
        if (pipe(port_pipe) || pipe(ready) || pipe(go)) return 200;
        pid_t server = Spawn(b_, [&] { return Server(port_pipe[1]); });
        uint16_t port = 0;
        if (read(port_pipe[0], &port, sizeof port) != sizeof port) return 201;
        pid_t client = Spawn(a_, [&] { return Client(port, ready[1], go[0], idle); });
        char c;
        int result = 202;
        if (read(ready[0], &c, 1) == 1) {
            fault(server);
            if (write(go[1], &c, 1) == 1) result = Reap(client, 30000);
        } else {
            result = Reap(client, 1000);
        }
        kill(server, SIGCONT);
        kill(server, SIGKILL);
        Reap(server, 5000);
        for (int fd : {port_pipe[0], port_pipe[1], ready[0], ready[1], go[0], go[1]}) close(fd);
        return result;
    }
    std::string a_, b_;
};

TEST_F(TcpFault, NetworkCutCompletesOutstandingRequestsWithinTheTimeout) {
    int r = Scenario([&](pid_t) { Sh("ip -n " + a_ + " link set ondft-va down"); });
    EXPECT_EQ(r, 0) << "client step that failed (see Client)";
}

// The server's host resets the connection (ss -K destroys its socket, which
// sends a RST): the client hears ECONNRESET.
TEST_F(TcpFault, ConnectionResetByThePeerCompletesOutstandingRequests) {
    if (!Sh("ss -h")) GTEST_SKIP() << "needs ss (iproute2)";
    bool reset = false;
    int r = Scenario([&](pid_t) { reset = Sh("ip netns exec " + b_ + " ss -K dst 10.78.0.1"); });
    if (!reset) GTEST_SKIP() << "ss -K cannot destroy sockets here (kernel without INET_DIAG_DESTROY)";
    EXPECT_EQ(r, 0) << "client step that failed (see Client)";
}

// Half-open: the network goes while the client has nothing to send, only a
// receive posted; keepalive (probes after a third of the TCP timeout) must
// find the connection dead.
TEST_F(TcpFault, HalfOpenIdleConnectionEndsByKeepalive) {
    int r = Scenario([&](pid_t) { Sh("ip -n " + a_ + " link set ondft-va down"); }, /*idle=*/true);
    EXPECT_EQ(r, 0) << "client step that failed (see Client)";
}

TEST_F(TcpFault, PeerThatStopsAnsweringEndsTheConnectionWithinTheTimeout) {
    int r = Scenario([](pid_t server) {
        kill(server, SIGSTOP);
        // SIGSTOP takes effect asynchronously: wait until every thread is
        // stopped, or the server may still answer the Write that follows.
        std::string path = "/proc/" + std::to_string(server) + "/stat";
        for (int i = 0; i < 500; ++i) {
            std::FILE *f = std::fopen(path.c_str(), "r");
            char state = 0;
            if (f) {
                int matched = std::fscanf(f, "%*d (%*[^)]) %c", &state);
                std::fclose(f);
                if (matched == 1 && state == 'T') return;
            }
            usleep(2000);
        }
    });
    EXPECT_EQ(r, 0) << "client step that failed (see Client)";
}

}  // namespace
