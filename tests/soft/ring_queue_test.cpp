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

// Moved, copied and moved-from queues keep working: each knows its own
// capacity (a moved-from one is empty and grows again from nothing).
TEST(RingQueue, MovedAndCopiedQueuesStayUsable) {
    soft::RingQueue<int> a;
    for (int i = 0; i < 11; ++i) a.push_back(i);  // grown past its first size
    a.pop_front();
    soft::RingQueue<int> b(std::move(a));
    EXPECT_TRUE(a.empty());
    for (int i = 0; i < 20; ++i) a.push_back(100 + i);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(a[i], 100 + i);
    ASSERT_EQ(b.size(), 10u);
    soft::RingQueue<int> c = b;
    for (int i = 11; i < 40; ++i) {
        b.push_back(i);
        c.push_back(i);
    }
    for (size_t i = 0; i < b.size(); ++i) {
        ASSERT_EQ(b[i], static_cast<int>(i) + 1);
        ASSERT_EQ(c[i], static_cast<int>(i) + 1);
    }
}

}  // namespace
