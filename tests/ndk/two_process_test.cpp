// NDK between two processes over the software provider: a fresh process
// (this test binary in its server role, see EchoServerRole) echoes every
// message and exposes a buffer for RDMA; it waits with CQ notifications, the client
// polls. Covers both data paths (ring copies up to 4 KiB, cross-memory
// attach above) and one-sided Read/Write.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "ndk_test_util.h"

extern char **environ;

using namespace ndk_test;

namespace {

struct Advert {
    UINT64 address;
    UINT32 token;
    UINT32 length;
};
constexpr size_t kBuffer = 1 << 20;

// The server: reports its port on `fd`, serves one client until it
// disconnects.
void ServeEcho(int fd) {
    Pair pair;  // listener + server side used; the client side stays idle
    ASSERT_TRUE(pair.Open());
    Side &s = pair.server;
    Region rdma;
    ASSERT_TRUE(rdma.Register(s.pd, kBuffer));
    for (size_t i = 0; i < kBuffer; ++i) rdma.bytes[i] = static_cast<char>(i * 7);
    NDK_SGE rs = s.region.Sge();
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs, &rs, 1), STATUS_SUCCESS);
    ASSERT_EQ(write(fd, &pair.port, sizeof pair.port), ssize_t(sizeof pair.port));
    close(fd);
    ASSERT_EQ(Close(s.connector), STATUS_SUCCESS);
    s.connector = pair.NextIncoming(std::chrono::seconds(20));
    ASSERT_NE(s.connector, nullptr);
    Completion accepted;
    ASSERT_EQ(Finish(s.connector->Dispatch->NdkAccept(s.connector, s.qp, 8, 8, nullptr, 0, Completion::Event,
                                                      &s.disconnected, Completion::Request, &accepted),
                     accepted),
              STATUS_SUCCESS);
    int arms = 0;
    for (;;) {
        // Wait for the next notification, then drain.
        s.cq->Dispatch->NdkArmCq(s.cq, NDK_CQ_NOTIFY_ANY);
        ++arms;
        ASSERT_TRUE(s.notified.Wait(arms, std::chrono::seconds(20)));
        NDK_RESULT_EX r;
        while (s.cq->Dispatch->NdkGetCqResultsEx(s.cq, &r, 1) == 1) {
            if (r.Status == STATUS_CANCELLED) {  // the client disconnected: queues flushed
                EXPECT_TRUE(s.disconnected.Wait());
                rdma.Release();  // before its PD: the PD's close would wait for it
                pair.Release();
                return;
            }
            ASSERT_EQ(r.Status, STATUS_SUCCESS);
            if (r.Type != NdkOperationTypeReceive) continue;
            ULONG n = r.BytesTransferred;
            if (n == 4 && std::memcmp(s.region.bytes.data(), "RDMA", 4) == 0) {
                Advert a{rdma.Address(), rdma.mr->Dispatch->NdkGetRemoteTokenFromMr(rdma.mr), kBuffer};
                std::memcpy(s.region.bytes.data(), &a, sizeof a);
                n = sizeof a;
            }
            NDK_SGE ss = s.region.Sge(0, n);
            ASSERT_EQ(s.qp->Dispatch->NdkSend(s.qp, nullptr, &ss, n ? 1 : 0, 0), STATUS_SUCCESS);
            NDK_RESULT_EX sent = s.Next();  // the client polls, so the send completes
            ASSERT_EQ(sent.Status, STATUS_SUCCESS);
            ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs, &rs, 1), STATUS_SUCCESS);
        }
    }
}

// Started by the test below with OPENND_NDK_ECHO_FD, this binary serves
// before any test runs and exits with the verdict (assertion failures are
// printed as they happen). Not a test of its own, so no skipped entry.
class EchoServerRole : public ::testing::Environment {
public:
    void SetUp() override {
        const char *fd_text = std::getenv("OPENND_NDK_ECHO_FD");
        if (!fd_text) return;
        alarm(60);  // never outlive the client
        ServeEcho(std::atoi(fd_text));
        std::fflush(stdout);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
};
[[maybe_unused]] ::testing::Environment *const g_echo_server_role =
    ::testing::AddGlobalTestEnvironment(new EchoServerRole);

}  // namespace

TEST(NdkTwoProcess, EchoAndRdmaBetweenProcesses) {
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    std::string fd_env = "OPENND_NDK_ECHO_FD=" + std::to_string(p[1]);
    std::vector<std::string> env_strings{fd_env};
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "OPENND_NDK_ECHO_FD=", 19) != 0) env_strings.push_back(*e);
    std::vector<char *> envp;
    for (std::string &e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    // A filter that matches a test: gtest sets environments up only then.
    std::string filter = "--gtest_filter=NdkTwoProcess.EchoAndRdmaBetweenProcesses";
    char exe[] = "/proc/self/exe";
    char *argv[] = {exe, filter.data(), nullptr};
    pid_t child = -1;
    ASSERT_EQ(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv, envp.data()), 0);
    close(p[1]);
    uint16_t port = 0;
    ASSERT_EQ(read(p[0], &port, sizeof port), ssize_t(sizeof port));
    close(p[0]);

    Pair pair;
    pair.port = port;
    ASSERT_EQ(OpenLoopback(&pair.adapter), STATUS_SUCCESS);
    Side &c = pair.client;
    ASSERT_TRUE(c.Create(pair.adapter));
    Region in;
    ASSERT_TRUE(in.Register(c.pd, kBuffer));
    sockaddr_in src = Loopback(), dst = Loopback(port);
    Completion connected, completed;
    NTSTATUS cs = c.connector->Dispatch->NdkConnect(c.connector, c.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 8,
                                                    8, nullptr, 0, Completion::Request, &connected);
    ASSERT_EQ(Finish(cs, connected), STATUS_SUCCESS);
    ASSERT_EQ(Finish(c.connector->Dispatch->NdkCompleteConnect(c.connector, nullptr, nullptr, Completion::Request,
                                                               &completed),
                     completed),
              STATUS_SUCCESS);
    auto echo = [&](size_t size) {
        NDK_SGE rs = in.Sge();
        ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, &rs, &rs, 1), STATUS_SUCCESS);
        NDK_SGE ss = c.region.Sge(0, size);
        ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, &ss, &ss, size ? 1 : 0, 0), STATUS_SUCCESS);
        for (int got = 0; got < 2;) {
            NDK_RESULT_EX r = c.Next();
            ASSERT_EQ(r.Status, STATUS_SUCCESS) << size;
            ++got;
            if (r.Type == NdkOperationTypeReceive) {
                EXPECT_EQ(r.BytesTransferred, size == 4 ? sizeof(Advert) : size);
            }
        }
    };
    for (size_t size : {size_t(0), size_t(1), size_t(4096), size_t(4097), size_t(65536), kBuffer}) {
        for (size_t i = 0; i < size; ++i) c.region.bytes[i] = static_cast<char>(size + i * 13);
        echo(size);
        ASSERT_EQ(std::memcmp(in.bytes.data(), c.region.bytes.data(), size), 0) << size;
    }
    std::memcpy(c.region.bytes.data(), "RDMA", 4);
    echo(4);
    Advert a;
    std::memcpy(&a, in.bytes.data(), sizeof a);
    NDK_SGE rd = in.Sge(0, kBuffer);
    ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, nullptr, &rd, 1, a.address, a.token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    for (size_t i = 0; i < kBuffer; ++i) ASSERT_EQ(in.bytes[i], static_cast<char>(i * 7)) << i;
    for (size_t i = 0; i < kBuffer; ++i) c.region.bytes[i] = static_cast<char>(i * 3 + 1);
    NDK_SGE wr = c.region.Sge(0, kBuffer);
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &wr, 1, a.address, a.token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, nullptr, &rd, 1, a.address, a.token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(in.bytes.data(), c.region.bytes.data(), kBuffer), 0);
    Completion done;
    EXPECT_EQ(Finish(c.connector->Dispatch->NdkDisconnect(c.connector, Completion::Request, &done), done),
              STATUS_SUCCESS);
    in.Release();
    pair.Release();
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 3000 && !(reaped = waitpid(child, &status, WNOHANG) == child); ++i) usleep(10000);
    if (!reaped) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    EXPECT_TRUE(reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0) << "server process failed";
}
