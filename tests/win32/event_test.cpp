// Events: manual vs auto reset, waiters released, pollable descriptor.
#include <poll.h>

#include <atomic>
#include <thread>
#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

TEST(Event, ManualResetStaysSignalledUntilReset) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    ASSERT_NE(ev.get(), nullptr);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_TIMEOUT);
    ASSERT_TRUE(SetEvent(ev));
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);  // waiters do not consume
    ASSERT_TRUE(ResetEvent(ev));
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_TIMEOUT);
    ASSERT_TRUE(ResetEvent(ev));  // resetting a reset event is fine
}

TEST(Event, AutoResetIsConsumedByOneWait) {
    Handle ev(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    ASSERT_NE(ev.get(), nullptr);
    ASSERT_TRUE(SetEvent(ev));
    ASSERT_TRUE(SetEvent(ev));  // several sets before a wait are one signal
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_TIMEOUT);
    ASSERT_TRUE(SetEvent(ev));
    ASSERT_TRUE(ResetEvent(ev));
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_TIMEOUT);
}

TEST(Event, InitialState) {
    Handle manual(CreateEventA(nullptr, TRUE, TRUE, nullptr));
    Handle autoev(CreateEventW(nullptr, FALSE, TRUE, nullptr));
    EXPECT_EQ(WaitForSingleObject(manual, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(manual, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(autoev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(autoev, 0), WAIT_TIMEOUT);
}

TEST(Event, NamedEventsAreNotSupported) {
    SetLastError(0);
    EXPECT_EQ(CreateEventA(nullptr, TRUE, FALSE, "name"), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    SetLastError(0);
    EXPECT_EQ(CreateEventW(nullptr, TRUE, FALSE, L"name"), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    Handle unnamed(CreateEventA(nullptr, TRUE, FALSE, ""));  // empty name == no name
    EXPECT_NE(unnamed.get(), nullptr);
    Handle unnamed_w(CreateEventW(nullptr, TRUE, FALSE, L""));
    EXPECT_NE(unnamed_w.get(), nullptr);
}

// N threads wait on one auto-reset event; each SetEvent releases exactly one.
// Released threads report on a second (auto-reset) event; after each release
// a bounded wait on that event must time out (no second waiter got through).
TEST(Event, AutoResetReleasesExactlyOneWaiterPerSet) {
    constexpr int kWaiters = 4;
    Handle gate(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle released(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    std::atomic<int> count{0};
    std::vector<std::thread> threads;
    std::vector<DWORD> results(kWaiters, 0xDEAD);
    for (int i = 0; i < kWaiters; ++i)
        threads.emplace_back([&, i] {
            results[i] = WaitForSingleObject(gate, 20000);
            count.fetch_add(1);
            SetEvent(released);
        });
    for (int round = 1; round <= kWaiters; ++round) {
        ASSERT_TRUE(SetEvent(gate));
        ASSERT_EQ(WaitForSingleObject(released, 10000), WAIT_OBJECT_0);
        EXPECT_EQ(WaitForSingleObject(released, 100), WAIT_TIMEOUT);
        EXPECT_EQ(count.load(), round);
    }
    for (auto &t : threads) t.join();
    for (DWORD r : results) EXPECT_EQ(r, WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(gate, 0), WAIT_TIMEOUT);  // every signal was consumed
}

TEST(Event, ManualResetReleasesAllWaiters) {
    constexpr int kWaiters = 4;
    Handle gate(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    std::vector<std::thread> threads;
    std::vector<DWORD> results(kWaiters, 0xDEAD);
    for (int i = 0; i < kWaiters; ++i) threads.emplace_back([&, i] { results[i] = WaitForSingleObject(gate, 20000); });
    auto start = Clock::now();
    ASSERT_TRUE(SetEvent(gate));
    for (auto &t : threads) t.join();
    EXPECT_LT(MsSince(start), 10000);
    for (DWORD r : results) EXPECT_EQ(r, WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(gate, 0), WAIT_OBJECT_0);
}

TEST(Event, DescriptorIsReadableExactlyWhileSignalled) {
    Handle ev(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    int fd = OpenNdHandleFd(ev);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(OpenNdHandleFd(Tag(ev)), fd);
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0);
    ASSERT_TRUE(SetEvent(ev));
    EXPECT_EQ(poll(&p, 1, 5000), 1);
    EXPECT_TRUE(p.revents & POLLIN);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);  // consumes the auto-reset signal
    p.revents = 0;
    EXPECT_EQ(poll(&p, 1, 0), 0);
}

TEST(Event, WaitReturnsWhenSetFromAnotherThread) {
    Handle ev(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    std::thread setter([&] { SetEvent(ev); });
    EXPECT_EQ(WaitForSingleObject(ev, 10000), WAIT_OBJECT_0);
    setter.join();
}
