// ComPtr's ownership rules and Status's text, without a provider.
#include <gtest/gtest.h>

#include "common/com_ptr.h"
#include "common/status.h"

namespace {

using opennd::client::ComPtr;
using opennd::client::Status;

struct Counted {
    int refs = 1;
    ULONG AddRef() { return ++refs; }
    ULONG Release() { return --refs; }
};

TEST(ClientComPtr, ReleasesOnceWhenItGoes) {
    Counted c;
    { ComPtr<Counted> p(&c); }
    EXPECT_EQ(c.refs, 0);
}

TEST(ClientComPtr, MoveTransfersTheReference) {
    Counted c;
    ComPtr<Counted> a(&c);
    ComPtr<Counted> b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);
    EXPECT_EQ(c.refs, 1);
    b = ComPtr<Counted>();
    EXPECT_EQ(c.refs, 0);
    static_assert(!std::is_copy_constructible_v<ComPtr<Counted>>);
    static_assert(!std::is_copy_assignable_v<ComPtr<Counted>>);
}

TEST(ClientComPtr, ShareTakesASecondReference) {
    Counted c;
    ComPtr<Counted> a(&c);
    {
        ComPtr<Counted> b = a.Share();
        EXPECT_EQ(c.refs, 2);
    }
    EXPECT_EQ(c.refs, 1);
}

TEST(ClientComPtr, PutReleasesTheOldObjectFirst) {
    Counted old_one, new_one;
    ComPtr<Counted> p(&old_one);
    *p.put() = &new_one;
    EXPECT_EQ(old_one.refs, 0);
    EXPECT_EQ(p.get(), &new_one);
    EXPECT_EQ(p.detach(), &new_one);
    EXPECT_EQ(new_one.refs, 1) << "detach hands the reference over";
}

TEST(ClientStatus, NamesTheCallAndTheStatus) {
    EXPECT_EQ(Status(ND_INVALID_ADDRESS, "NdOpenAdapter").message(), "NdOpenAdapter: ND_INVALID_ADDRESS");
    EXPECT_TRUE(Status().ok());
    EXPECT_FALSE(Status(ND_PENDING, "Connect").ok()) << "pending is not a final status";
    Status t = Status::TimedOut("GetConnectionRequest");
    EXPECT_FALSE(t.ok());
    EXPECT_TRUE(t.timed_out());
    EXPECT_EQ(t.hr(), ND_IO_TIMEOUT);
    EXPECT_EQ(t.message(), "GetConnectionRequest: timed out");
}

TEST(ClientStatus, DescriptionAddsTheMeaning) {
    EXPECT_EQ(opennd::client::StatusDescription(ND_CONNECTION_REFUSED).rfind("ND_CONNECTION_REFUSED (", 0), 0u);
    EXPECT_EQ(opennd::client::StatusText(ND_CONNECTION_REFUSED), "ND_CONNECTION_REFUSED");
}

}  // namespace
