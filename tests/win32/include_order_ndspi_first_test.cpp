// <ndspi.h> (without NOMINMAX) first, then the standard headers that use
// min/max: they must compile, and std::min, std::max and
// std::numeric_limits<T>::max() behave as always.
#include <ndspi.h>
#include <ndsupport.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <valarray>
#include <vector>

#include <gtest/gtest.h>

#include <ws2spi.h>
#include <opennd/ndkstatus.h>

TEST(IncludeOrder, NdspiThenStandardHeaders) {
    EXPECT_EQ(std::min(4, 2), 2);
    EXPECT_EQ(std::max<long>(4, 2L), 4);
    EXPECT_EQ(std::numeric_limits<int>::max(), 2147483647);
    EXPECT_EQ(std::numeric_limits<unsigned short>::min(), 0);
    std::valarray<int> v{3, 1, 2};
    EXPECT_EQ(v.max(), 3);
    EXPECT_EQ(v.min(), 1);
    std::vector<int> w{5, 9, 1};
    EXPECT_EQ(*std::max_element(w.begin(), w.end()), 9);
    auto [lo, hi] = std::minmax({4, 8, 6});
    EXPECT_EQ(lo, 4);
    EXPECT_EQ(hi, 8);
    EXPECT_EQ(std::chrono::milliseconds::max().count(), std::numeric_limits<int64_t>::max());
    std::mt19937 gen(1);
    EXPECT_EQ(gen.min(), 0u);
    EXPECT_EQ(min(2, 9), 2);  // Windows' min is still there
    EXPECT_EQ(max(2, 9), 9);
    EXPECT_EQ(STATUS_CANCELLED, ND_CANCELED);
}
