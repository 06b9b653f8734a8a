// With NOMINMAX defined before <ndspi.h>, as on Windows, there is no global
// min or max: this file declares its own (which would conflict with ours).
#define NOMINMAX
#include <ndspi.h>

#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

static int min = 1;
static int max = 2;

TEST(IncludeOrder, NominmaxLeavesMinAndMaxUndefined) {
    EXPECT_EQ(min, 1);
    EXPECT_EQ(max, 2);
    EXPECT_EQ(std::min(min, max), 1);
    EXPECT_EQ(std::numeric_limits<int>::max(), 2147483647);
    // The rest of the surface is there.
    LONG v = 0;
    EXPECT_EQ(InterlockedIncrement(&v), 1);
    EXPECT_EQ(STATUS_SUCCESS, ND_SUCCESS);
}
