// Large Sends between two processes, copied from both ends (wire.h,
// PushRequest): the receiver pulls the first half while the sender, if it
// is polling, pushes the rest. Every byte must be in place when the
// receive completes, whoever copied it, and a sender that is not polling
// must cost the receiver nothing but the try.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/nd_session.h"
#include "two_process.h"

using namespace nd_session;
using namespace two_process;

namespace {

constexpr size_t kSize = 4u << 20;  // far above kPushMin: split in two
constexpr int kMessages = 24;

char Pattern(int message, size_t i) { return static_cast<char>((i * 131 + message * 7 + (i >> 12)) | 1); }

// The child: listens, then sends kMessages large messages, each with its
// own pattern. `poll`: waits for each Send's completion by polling (so it
// serves the receiver's push requests); otherwise it sits in read() on
// `go` until the parent has the message, and only then polls.
bool LargeSender(int port_fd, bool poll, int go) {
    Endpoint ep;
    if (!ep.Open(Addr("127.0.0.1"))) return false;
    Buffer out(kSize);
    if (!out.Register(ep)) return false;
    uint16_t port = 0;
    if (!ep.Listen(Addr("127.0.0.1"), &port)) return false;
    if (!TellPort(port_fd, port)) return false;
    if (!ep.Accept()) return false;
    for (int m = 0; m < kMessages; ++m) {
        for (size_t i = 0; i < kSize; ++i) out.bytes[i] = Pattern(m, i);
        ND2_SGE s = out.Sge();
        if (FAILED(ep.qp->Send(nullptr, &s, 1, 0))) return false;
        char c;
        if (!poll && read(go, &c, 1) != 1) return false;  // the parent took message m
        ND2_RESULT r = ep.Next(20000);
        if (r.Status != ND_SUCCESS || r.RequestType != Nd2RequestTypeSend) return false;
    }
    return true;
}

// `delay_us`: the sender waits that long after taking each push request
// (OPENND_SOFT_PUSH_DELAY_US), so its part lands well after the receiver's.
void ReceiveAll(bool sender_polls, int delay_us = 0) {
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(NdStartup(), S_OK);
    uint16_t port = 0;
    pid_t child = Spawn(&port, [&](int fd) {
        close(go[1]);
        if (delay_us) setenv("OPENND_SOFT_PUSH_DELAY_US", std::to_string(delay_us).c_str(), 1);
        return LargeSender(fd, sender_polls, go[0]);
    });
    close(go[0]);
    ASSERT_GT(child, 0);
    ASSERT_NE(port, 0);
    Endpoint ep;
    ASSERT_TRUE(ep.Open(Addr("127.0.0.1"))) << ep.error;
    Buffer in(kSize);
    ASSERT_TRUE(in.Register(ep)) << ep.error;
    ASSERT_TRUE(ep.Connect(Addr("127.0.0.1", port))) << ep.error;
    std::vector<char> want(kSize);
    for (int m = 0; m < kMessages; ++m) {
        std::memset(in.bytes.data(), 0, kSize);  // no pattern byte is 0
        ND2_SGE rs = in.Sge();
        ASSERT_EQ(ep.qp->Receive(nullptr, &rs, 1), ND_SUCCESS);
        ND2_RESULT r = ep.Next(20000);
        // The last bytes first, at once: the sender's part ends there, and a
        // receive completed before that part is in shows it here.
        const char last = in.bytes[kSize - 1];
        ASSERT_EQ(r.Status, ND_SUCCESS) << "message " << m;
        ASSERT_EQ(r.BytesTransferred, kSize);
        EXPECT_EQ(last, Pattern(m, kSize - 1)) << "message " << m << " completed before its last byte arrived";
        for (size_t i = 0; i < kSize; ++i) want[i] = Pattern(m, i);
        ASSERT_EQ(std::memcmp(in.bytes.data(), want.data(), kSize), 0) << "message " << m << " arrived damaged";
        if (!sender_polls) {
            ASSERT_EQ(write(go[1], "g", 1), 1);
        }
    }
    close(go[1]);
    OVERLAPPED dv{};
    ep.Wait(ep.connector, &dv, ep.connector->Disconnect(&dv));
    EXPECT_EQ(Reap(child), 0);
    NdCleanup();
}

// The sender polls: it pushes the second half of each message.
TEST(LargeSend, CopiedFromBothEndsEveryByteIsInPlaceAtCompletion) { ReceiveAll(true); }

// A sender slow to copy its part (3 ms after taking the request): the
// receiver waits for it, and completes nothing before its last byte.
TEST(LargeSend, TheReceiverWaitsForASlowSendersPart) { ReceiveAll(true, 3000); }

// The sender sits in read() while its Send is received: nobody serves the
// push request, and the receiver must take the whole message itself.
TEST(LargeSend, ASenderThatIsNotPollingLeavesTheWholeCopyToTheReceiver) { ReceiveAll(false); }

}  // namespace
