// The standard headers first, then <ndspi.h> without NOMINMAX, then more
// standard headers: every order compiles.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include <ndspi.h>
#include <ndsupport.h>

#include <bitset>
#include <deque>
#include <random>
#include <valarray>

#include <gtest/gtest.h>

TEST(IncludeOrder, StandardHeadersThenNdspi) {
    EXPECT_EQ(std::min<int>(4, 2), 2);
    EXPECT_EQ((std::max)(4, 2), 4);
    EXPECT_EQ(std::numeric_limits<int>::max(), 2147483647);
    EXPECT_EQ(std::numeric_limits<double>::max(), 1.7976931348623157e308);
    std::valarray<double> v{1.5, 0.5};
    EXPECT_EQ(v.max(), 1.5);
    std::uniform_int_distribution<int> d(0, 9);
    EXPECT_EQ(d.max(), 9);
    std::deque<int> q{3, 4};
    EXPECT_EQ(std::accumulate(q.begin(), q.end(), 0), 7);
    EXPECT_EQ(std::bitset<8>(0xF0).count(), 4u);
    EXPECT_EQ(max(1, 2), 2);
    EXPECT_EQ(min(1u, 2u), 1u);
}
