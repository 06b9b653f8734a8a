// The shadow ring: the queue pair's record of what it posted, which gives
// each completion (failed and flushed ones too) its ND request back and
// knows when the queue is full without asking the device.
#include <gtest/gtest.h>

#include "queue_pair.h"

namespace opennd::verbs {
namespace {

Slot Part(bool last, bool signaled = true) { return Slot{nullptr, 0, 0, Nd2RequestTypeSend, signaled, last, 0, 0, false}; }

TEST(ShadowRing, FullAfterDepthRequests) {
    ShadowRing r(4, 1);
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(r.Room(1)) << i;
        r.Push(Part(true));
        r.EndRequest();
    }
    EXPECT_FALSE(r.Room(1));
    r.RetireThrough(0);
    EXPECT_TRUE(r.Room(1));
}

// An unsignaled request completes with the next signaled one: retiring a
// later slot frees every earlier one.
TEST(ShadowRing, RetiringALaterSlotFreesTheUnsignaledBeforeIt) {
    ShadowRing r(3, 1);
    for (bool signaled : {false, false, true}) {
        r.Push(Part(true, signaled));
        r.EndRequest();
    }
    EXPECT_FALSE(r.Room(1));
    r.RetireThrough(2);
    EXPECT_EQ(r.outstanding(), 0u);
    EXPECT_TRUE(r.Room(1));
}

// A request split into parts counts once against the depth, each part once
// against the work requests; it is done only when its last part is.
TEST(ShadowRing, SplitRequestCountsOnceAndEndsWithItsLastPart) {
    ShadowRing r(2, 3);
    uint64_t seqs[3];
    for (int i = 0; i < 3; ++i) seqs[i] = r.Push(Part(i == 2));
    r.EndRequest();
    EXPECT_EQ(r.At(seqs[0]).request, r.At(seqs[2]).request);
    EXPECT_TRUE(r.Room(3));  // one more request of three parts
    EXPECT_FALSE(r.Room(4));  // but not more work requests than depth x parts
    r.Push(Part(true));
    r.EndRequest();
    EXPECT_FALSE(r.Room(1));  // two requests: the depth
    r.RetireThrough(seqs[1]);  // a part, not the end: the request is still outstanding
    EXPECT_FALSE(r.Room(1));
    r.RetireThrough(seqs[2]);
    EXPECT_TRUE(r.Room(1));
}

}  // namespace
}  // namespace opennd::verbs
