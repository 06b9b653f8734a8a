// The kit's reference counting: references for the application, holds for
// provider threads that must keep an object alive for a moment; the
// application's last Release() returns 0 whatever a hold does (COMPAT:
// programs check it).
#include <gtest/gtest.h>

#include <thread>

#include "opennd/kit/com.h"

namespace {
struct ITestThing : IUnknown {};
const GUID IID_ITestThing = {0x4f70656e, 0x7465, 0x7374, {1, 2, 3, 4, 5, 6, 7, 8}};
}  // namespace

namespace opennd::kit {
OPENND_KIT_IIDS(ITestThing, &IID_ITestThing);
}

namespace {

struct Thing : opennd::kit::Unknown<ITestThing> {
    explicit Thing(int *finals, int *deleted) : finals_(finals), deleted_(deleted) {}
    ~Thing() override { ++*deleted_; }
    void OnFinalRelease() override { ++*finals_; }
    int *finals_, *deleted_;
};

TEST(Unknown, TheLastReleaseReturnsZeroWhileAProviderThreadHoldsTheObject) {
    int finals = 0, deleted = 0;
    Thing *t = new Thing(&finals, &deleted);
    EXPECT_EQ(t->AddRef(), 2u);
    ASSERT_TRUE(t->TryHold());
    EXPECT_EQ(t->Release(), 1u);
    EXPECT_EQ(t->Release(), 0u) << "the application's last Release, a hold still out";
    EXPECT_EQ(finals, 1) << "the implicit actions ran at the last Release";
    EXPECT_EQ(deleted, 0) << "the holder may still use it";
    EXPECT_FALSE(t->TryHold()) << "no new hold on an object on its way out";
    EXPECT_FALSE(t->TryAddRef());
    t->Unhold();
    EXPECT_EQ(deleted, 1);
    EXPECT_EQ(finals, 1);
}

TEST(Unknown, WithoutHoldsTheLastReleaseDeletes) {
    int finals = 0, deleted = 0;
    Thing *t = new Thing(&finals, &deleted);
    ASSERT_TRUE(t->TryAddRef());
    EXPECT_EQ(t->Release(), 1u);
    EXPECT_EQ(t->Release(), 0u);
    EXPECT_EQ(finals, 1);
    EXPECT_EQ(deleted, 1);
}

// Holds taken and given back on other threads while the application
// releases: one final release, one delete, every time.
TEST(Unknown, HoldsRacingTheLastReleaseDeleteOnce) {
    for (int round = 0; round < 200; ++round) {
        int finals = 0, deleted = 0;
        Thing *t = new Thing(&finals, &deleted);
        std::thread holder([t] {
            for (int i = 0; i < 100; ++i) {
                if (!t->TryHold()) return;
                t->Unhold();
            }
        });
        ASSERT_TRUE(t->TryHold());  // so the holder's object outlives its loop
        EXPECT_EQ(t->Release(), 0u);
        holder.join();
        t->Unhold();
        EXPECT_EQ(finals, 1);
        EXPECT_EQ(deleted, 1);
    }
}

}  // namespace
