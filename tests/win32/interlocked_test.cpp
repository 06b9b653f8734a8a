// Interlocked*: Windows' return values, 64-bit and pointer forms, atomicity
// under contention and the full barrier each one is.
#include <climits>
#include <random>
#include <thread>
#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

TEST(Interlocked, ReturnValuesAsWindows) {
    LONG v = 5;
    EXPECT_EQ(InterlockedIncrement(&v), 6);  // the new value
    EXPECT_EQ(InterlockedDecrement(&v), 5);
    EXPECT_EQ(InterlockedExchangeAdd(&v, 10), 5);  // the old value
    EXPECT_EQ(v, 15);
    EXPECT_EQ(InterlockedAdd(&v, -5), 10);  // the new value
    EXPECT_EQ(InterlockedExchange(&v, 7), 10);  // the old value
    EXPECT_EQ(v, 7);
    // CompareExchange returns the initial value, whether or not it stored.
    EXPECT_EQ(InterlockedCompareExchange(&v, 9, 7), 7);
    EXPECT_EQ(v, 9);
    EXPECT_EQ(InterlockedCompareExchange(&v, 1, 7), 9);
    EXPECT_EQ(v, 9);
    // The bit operations return the old value.
    EXPECT_EQ(InterlockedOr(&v, 0x30), 9);
    EXPECT_EQ(v, 0x39);
    EXPECT_EQ(InterlockedAnd(&v, 0x0F), 0x39);
    EXPECT_EQ(v, 9);
    EXPECT_EQ(InterlockedXor(&v, 0xFF), 9);
    EXPECT_EQ(v, 0xF6);
    // LONG arithmetic wraps, as the 32-bit hardware operation does.
    v = INT32_MAX;
    EXPECT_EQ(InterlockedIncrement(&v), INT32_MIN);
    EXPECT_EQ(InterlockedDecrement(&v), INT32_MAX);
    static_assert(sizeof(LONG) == 4 && sizeof(LONG64) == 8, "Windows widths");
}

TEST(Interlocked, SixtyFourBit) {
    LONG64 v = 0xFFFFFFFFLL;
    EXPECT_EQ(InterlockedIncrement64(&v), 0x100000000LL);
    EXPECT_EQ(InterlockedDecrement64(&v), 0xFFFFFFFFLL);
    EXPECT_EQ(InterlockedExchangeAdd64(&v, 0x100000000LL), 0xFFFFFFFFLL);
    EXPECT_EQ(v, 0x1FFFFFFFFLL);
    EXPECT_EQ(InterlockedAdd64(&v, 1), 0x200000000LL);
    EXPECT_EQ(InterlockedExchange64(&v, -1), 0x200000000LL);
    EXPECT_EQ(InterlockedCompareExchange64(&v, 42, -1), -1);
    EXPECT_EQ(v, 42);
    EXPECT_EQ(InterlockedCompareExchange64(&v, 0, -1), 42);
    EXPECT_EQ(v, 42);
    v = 0x0F0F0F0F00000000LL;
    EXPECT_EQ(InterlockedOr64(&v, 0xFF), 0x0F0F0F0F00000000LL);
    EXPECT_EQ(InterlockedAnd64(&v, 0x0F000000000000FFLL), 0x0F0F0F0F000000FFLL);
    EXPECT_EQ(InterlockedXor64(&v, 0x0F00000000000000LL), 0x0F000000000000FFLL);
    EXPECT_EQ(v, 0xFFLL);
}

TEST(Interlocked, Pointers) {
    int a = 0, b = 0, c = 0;
    PVOID p = &a;
    EXPECT_EQ(InterlockedExchangePointer(&p, &b), &a);
    EXPECT_EQ(p, &b);
    EXPECT_EQ(InterlockedCompareExchangePointer(&p, &c, &a), &b);  // no match: unchanged
    EXPECT_EQ(p, &b);
    EXPECT_EQ(InterlockedCompareExchangePointer(&p, &c, &b), &b);  // match: stored
    EXPECT_EQ(p, &c);
    EXPECT_EQ(InterlockedCompareExchangePointer(&p, nullptr, &c), &c);
    EXPECT_EQ(p, nullptr);
}

TEST(Interlocked, FourThreadsCountEveryIncrement) {
    constexpr int kThreads = 4, kPerThread = 100000;
    LONG count = 0, added = 0;
    LONG64 count64 = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < kPerThread; ++i) {
                InterlockedIncrement(&count);
                InterlockedIncrement64(&count64);
                InterlockedExchangeAdd(&added, 2);
            }
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(count, kThreads * kPerThread);
    EXPECT_EQ(count64, kThreads * kPerThread);
    EXPECT_EQ(added, 2 * kThreads * kPerThread);
}

// Every value handed out once: the old values InterlockedCompareExchange
// loops see are a total order, as a ticket counter relies on.
TEST(Interlocked, CompareExchangeLoopHandsOutEachTicketOnce) {
    constexpr int kThreads = 4, kPerThread = 20000;
    LONG next = 0;
    std::vector<std::vector<LONG>> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                LONG seen, old = next;
                while ((seen = InterlockedCompareExchange(&next, old + 1, old)) != old) old = seen;
                got[t].push_back(old);
            }
        });
    for (auto &t : threads) t.join();
    std::vector<char> taken(kThreads * kPerThread, 0);
    for (const auto &g : got)
        for (LONG ticket : g) {
            ASSERT_GE(ticket, 0);
            ASSERT_LT(ticket, kThreads * kPerThread);
            EXPECT_EQ(taken[ticket]++, 0) << "ticket " << ticket << " handed out twice";
        }
    EXPECT_EQ(next, kThreads * kPerThread);
}

namespace {

// The store-buffering litmus: in each round both threads meet, wait a random
// few cycles (so their next steps overlap now and then), store their own flag,
// pass the barrier under test and load the other's flag. Without a full
// barrier both may load 0 (x86 lets a load pass an earlier store still in the
// store buffer; here that shows in a few rounds per thousand); with one, at
// least one thread sees the other's store. Bounded in rounds and in time.
template <class Barrier>
void StoreBufferingNeverLosesBothStores(Barrier barrier) {
    constexpr LONG kRounds = 50000;
    LONG x = 0, y = 0, arrived = 0, stop = 0, r1 = 0, r2 = 0;
    int both_zero = 0;
    auto meet = [&](LONG target) {
        __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
        for (int spins = 0; __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < target; ++spins) {
            if (spins < 10000)
                YieldProcessor();
            else
                Sleep(0);  // the other thread is not running: let it
        }
    };
    auto jitter = [](std::minstd_rand &g) {
        volatile int sink = 0;
        for (int i = static_cast<int>(g() % 64); i > 0; --i) sink = sink + 1;
    };
    std::thread other([&] {
        std::minstd_rand g(2);
        for (LONG round = 0;; ++round) {
            meet(4 * round + 2);
            if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) return;
            jitter(g);
            __atomic_store_n(&y, 1, __ATOMIC_RELAXED);
            barrier();
            __atomic_store_n(&r2, __atomic_load_n(&x, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
            meet(4 * round + 4);
        }
    });
    std::minstd_rand g(1);
    auto start = Clock::now();
    for (LONG round = 0;; ++round) {
        __atomic_store_n(&x, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&y, 0, __ATOMIC_RELAXED);
        bool last = round >= kRounds || MsSince(start) >= 2000;
        if (last) __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        meet(4 * round + 2);
        if (last) break;
        jitter(g);
        __atomic_store_n(&x, 1, __ATOMIC_RELAXED);
        barrier();
        __atomic_store_n(&r1, __atomic_load_n(&y, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
        meet(4 * round + 4);
        if (r1 == 0 && __atomic_load_n(&r2, __ATOMIC_RELAXED) == 0) ++both_zero;
    }
    other.join();
    EXPECT_EQ(both_zero, 0);
}

}  // namespace

TEST(Interlocked, IsAFullBarrier) {
    LONG dummy = 0;
    StoreBufferingNeverLosesBothStores([&] { InterlockedIncrement(&dummy); });
    LONG64 dummy64 = 0;
    StoreBufferingNeverLosesBothStores([&] { InterlockedExchange64(&dummy64, 1); });
}

TEST(Interlocked, MemoryBarrierIsAFullBarrier) {
    StoreBufferingNeverLosesBothStores([] { MemoryBarrier(); });
}
