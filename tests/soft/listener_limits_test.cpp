// A listener under a flood of connections that never send their request
// (a remote host over TCP, a same-host process over the CM socket): it
// keeps at most kMaxHandshakes of them, dropping the oldest, so the flood
// cannot use up the process's descriptors, and a real client still gets in.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "soft_limits.h"
#include "support/nd_session.h"

using namespace nd_session;

namespace {

opennd::net::IpAddress Addr(const char *text, uint16_t port) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

// A same-host connection to the listener's CM socket (its abstract name).
int ConnectCm(const opennd::net::IpAddress &dest) {
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    const std::string name = "opennd-cm/" + opennd::net::ToString(dest.sa()) + "/" + std::to_string(opennd::net::Port(dest.sa()));
    std::memcpy(un.sun_path + 1, name.data(), name.size());
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&un), len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int ConnectTcp(const opennd::net::IpAddress &dest) {
    const int fd = socket(dest.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, dest.sa(), dest.length()) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// How many of `fds` the listener has closed, waiting (bounded) until at
// least `want` have.
size_t DroppedWithin(const std::vector<int> &fds, size_t want, uint64_t timeout_ms) {
    std::vector<bool> gone(fds.size(), false);
    size_t dropped = 0;
    const uint64_t deadline = NowMs() + timeout_ms;
    while (dropped < want && NowMs() < deadline) {
        std::vector<pollfd> p;
        for (size_t i = 0; i < fds.size(); ++i)
            if (!gone[i]) p.push_back({fds[i], POLLIN | POLLRDHUP, 0});
        if (poll(p.data(), p.size(), 100) <= 0) continue;
        for (const pollfd &q : p) {
            if (!q.revents) continue;
            for (size_t i = 0; i < fds.size(); ++i)
                if (fds[i] == q.fd && !gone[i]) {
                    gone[i] = true;
                    ++dropped;
                }
        }
    }
    return dropped;
}

class ListenerLimits : public ::testing::TestWithParam<const char *> {
protected:
    void SetUp() override { ASSERT_EQ(NdStartup(), S_OK); }
    void TearDown() override { NdCleanup(); }
};

TEST_P(ListenerLimits, ConnectionsThatNeverSendARequestAreBoundedAndARealClientGetsIn) {
    Endpoint server, client;  // (released before TearDown's NdCleanup)
    uint16_t port = 0;
    ASSERT_TRUE(server.Open(Addr(GetParam(), 0)) && server.Listen(Addr(GetParam(), 0), &port)) << server.error;
    const opennd::net::IpAddress dest = Addr(GetParam(), port);
    // A burst past the hard bound (half of it and more per kind: TCP and
    // same-host CM): within their grace they are kept, never more than that.
    const size_t kHard = soft::HardHandshakes(), kEach = kHard / 2 + 100;
    std::vector<int> silent;
    auto open_pair = [&](size_t i) {
        const int tcp = ConnectTcp(dest), cm = ConnectCm(dest);
        ASSERT_GE(tcp, 0) << "TCP connect " << i;
        ASSERT_GE(cm, 0) << "CM connect " << i;
        silent.push_back(tcp);
        silent.push_back(cm);
    };
    for (size_t i = 0; i < kEach; ++i) open_pair(i);
    EXPECT_GE(DroppedWithin(silent, silent.size() - kHard, 20000), silent.size() - kHard) << "past the hard bound";
    // Once they have had their grace (counted from when the listener took
    // them, which a loaded machine delays), an arrival drops all but the
    // bound: a few arrivals, spaced, until it has (bounded).
    size_t want = 0, dropped = 0;
    for (int round = 0; round < 20 && (want == 0 || dropped < want); ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(round == 0 ? soft::kHandshakeGraceMs + 200 : 500));
        open_pair(kEach + round);
        want = silent.size() - soft::kMaxHandshakes;
        dropped = DroppedWithin(silent, want, 1000);
    }
    EXPECT_GE(dropped, want) << "after their grace";

    ASSERT_TRUE(client.Open(Addr(GetParam(), 0))) << client.error;
    std::thread accept([&] { EXPECT_TRUE(server.Accept()) << server.error; });
    EXPECT_TRUE(client.Connect(dest)) << client.error;
    accept.join();
    for (int fd : silent) close(fd);
}

INSTANTIATE_TEST_SUITE_P(Addresses, ListenerLimits, ::testing::Values("127.0.0.1", "::1"));

}  // namespace
