// What a hostile same-host peer controls (the shared channel's bytes, the
// descriptors and pid its CM messages carry) must not reach outside the
// checks: a message running past the end of the ring is malformed, the
// peer's pid is the kernel's, its wake descriptor must be an eventfd that
// does not block.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "channel.h"
#include "cm_socket.h"
#include "connection.h"

namespace soft {
namespace {

// Writes a published message header the way a peer could, any values.
void Forge(Channel &ch, int ring, uint64_t pos, MsgType type, uint16_t slots, uint32_t length) {
    MsgHeader *m = ch.At(ring, pos);
    m->type = type;
    m->slots = slots;
    m->length = length;
    m->flags = 0;
    m->seq.store(static_cast<uint32_t>(pos + 1), std::memory_order_release);
}

TEST(HostilePeer, AMessageRunningPastTheRingEndIsMalformed) {
    std::string error;
    auto ch = Channel::Create(&error);
    ASSERT_TRUE(ch) << error;
    // A Pad to the last slot, then a two-slot message there: past the end.
    Forge(*ch, 0, 0, MsgType::Pad, kRingSlots - 1, 0);
    Forge(*ch, 0, kRingSlots - 1, MsgType::SendInline, 2, 8);
    RingConsumer c(ch.get(), 0);
    MsgInfo info;
    MsgHeader *m = c.Peek(&info);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(info.slots, 0) << "a message past the end of the ring was accepted";
    // One slot there is fine, and the header is what Peek read.
    Forge(*ch, 0, kRingSlots - 1, MsgType::SendInline, 1, 8);
    m = c.Peek(&info);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(info.slots, 1);
    EXPECT_EQ(info.length, 8u);
    m->length = 1 << 30;  // rewritten afterwards: the copy does not change
    EXPECT_EQ(info.length, 8u);
}

TEST(HostilePeer, APadOfNoSlotsOrPastTheEndIsMalformed) {
    std::string error;
    auto ch = Channel::Create(&error);
    ASSERT_TRUE(ch) << error;
    RingConsumer c(ch.get(), 0);
    MsgInfo info;
    Forge(*ch, 0, 0, MsgType::Pad, 0, 0);
    ASSERT_NE(c.Peek(&info), nullptr);
    EXPECT_EQ(info.slots, 0);
    Forge(*ch, 0, 0, MsgType::Pad, kRingSlots + 1, 0);
    ASSERT_NE(c.Peek(&info), nullptr);
    EXPECT_EQ(info.slots, 0);
}

TEST(HostilePeer, ThePeersPidIsTheKernels) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    EXPECT_EQ(CmPeerPid(sv[0]), getpid());
    close(sv[0]);
    close(sv[1]);
    EXPECT_EQ(CmPeerPid(-1), -1);
}

TEST(HostilePeer, TheWakeDescriptorMustBeAnEventfdThatDoesNotBlock) {
    PeerEngines engines;
    std::string error;
    int pipefd[2];
    ASSERT_EQ(pipe2(pipefd, O_CLOEXEC), 0);
    EXPECT_EQ(engines.Get(pipefd[1], -1, &error), nullptr);  // takes and closes the descriptor
    EXPECT_NE(error.find("eventfd"), std::string::npos) << error;
    close(pipefd[0]);
    const int blocking = eventfd(0, EFD_CLOEXEC);
    ASSERT_GE(blocking, 0);
    const int copy = dup(blocking);
    auto peer = engines.Get(blocking, -1, &error);
    ASSERT_NE(peer, nullptr) << error;
    EXPECT_TRUE(fcntl(copy, F_GETFL) & O_NONBLOCK) << "a blocking eventfd would block our writes";
    close(copy);
}

}  // namespace
}  // namespace soft
