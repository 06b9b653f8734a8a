// The NDK layer when an allocation fails: NdkArmCq returns nothing, so an
// arm whose request cannot be allocated is lost, but it must not swallow
// the next arm; a close whose antecedent became ready must complete without
// memory for the packet that tells the dispatcher.
//
// This binary replaces the nothrow operator new (what the NDK layer uses)
// with one that a test can make fail on its own thread.
#include <new>

#include "ndk_test_util.h"

using namespace ndk_test;

namespace {
thread_local int t_fail_nothrow = 0;  // nothrow allocations on this thread still to fail
}

void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
    if (t_fail_nothrow > 0) {
        --t_fail_nothrow;
        return nullptr;
    }
    try {
        return ::operator new(size);  // the same allocator as delete's (sanitizers track it)
    } catch (...) {
        return nullptr;
    }
}

namespace {

class NdkOutOfMemory : public ConnectedPair {
protected:
    void TearDown() override {
        t_fail_nothrow = 0;
        ConnectedPair::TearDown();
    }
};

TEST_F(NdkOutOfMemory, AnArmWithoutMemoryDoesNotSwallowTheNext) {
    Side &s = pair_.server, &c = pair_.client;
    t_fail_nothrow = 1;
    s.cq->Dispatch->NdkArmCq(s.cq, NDK_CQ_NOTIFY_ANY);  // lost: no memory for its request
    ASSERT_EQ(t_fail_nothrow, 0) << "the arm allocated nothing";
    s.cq->Dispatch->NdkArmCq(s.cq, NDK_CQ_NOTIFY_ANY);
    NDK_SGE rs = s.region.Sge(0, 64);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss = c.region.Sge(0, 64);
    ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
    EXPECT_TRUE(s.notified.Wait(1)) << "the second arm was merged into the lost one";
    EXPECT_EQ(s.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(c.Next().Status, STATUS_SUCCESS);
}

// MR -> MW (bind) is an antecedent link: the MR's close pends until the
// window closes, and the window's close tells the dispatcher to finish it.
TEST_F(NdkOutOfMemory, APendingCloseCompletesWithoutMemoryForTheDispatchersPacket) {
    Side &s = pair_.server;
    NDK_MW *mw = s.BindWindow(4096);
    ASSERT_NE(mw, nullptr);
    Completion mr_closed;
    ASSERT_EQ(Close(s.region.mr, &mr_closed), STATUS_PENDING);
    s.region.mr = nullptr;
    t_fail_nothrow = 1;
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
    t_fail_nothrow = 0;
    EXPECT_TRUE(mr_closed.Wait()) << "the region's close never completed";
}

}  // namespace
