// soft::RingQueue: FIFO order across wrap-around and growth, with the
// elements kept intact when it grows while wrapped.
#include <gtest/gtest.h>

#include <deque>

#include "ring_queue.h"

namespace {

TEST(RingQueue, KeepsOrderAcrossWrapAndGrowth) {
    soft::RingQueue<int> q;
    std::deque<int> model;
    int next = 0;
    // Pushes and pops in uneven bursts so the head wraps at several sizes
    // and growth happens while the contents are split across the end.
    for (int round = 0; round < 200; ++round) {
        for (int k = 0; k < round % 7 + 1; ++k) {
            q.push_back(next);
            model.push_back(next++);
        }
        for (int k = 0; k < round % 5 && !model.empty(); ++k) {
            ASSERT_EQ(q.front(), model.front());
            q.pop_front();
            model.pop_front();
        }
        ASSERT_EQ(q.size(), model.size());
        for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(q[i], model[i]) << "round " << round << " at " << i;
    }
    std::vector<int> seen;
    q.ForEach([&](int v) { seen.push_back(v); });
    EXPECT_EQ(seen, std::vector<int>(model.begin(), model.end()));
    q.clear();
    EXPECT_TRUE(q.empty());
    q.push_back(7);
    EXPECT_EQ(q.front(), 7);
}

}  // namespace
