// WaitForSingleObject / WaitForMultipleObjects: timeouts, any, all, errors.
#include <thread>
#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

TEST(Wait, SingleObjectTimesOutAfterTheTimeout) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    for (DWORD timeout : {1u, 50u, 200u}) {
        auto start = Clock::now();
        EXPECT_EQ(WaitForSingleObject(ev, timeout), WAIT_TIMEOUT);
        int64_t elapsed = MsSince(start);
        EXPECT_GE(elapsed, static_cast<int64_t>(timeout));
        EXPECT_LT(elapsed, static_cast<int64_t>(timeout) + 2000);
    }
    auto start = Clock::now();
    EXPECT_EQ(WaitForSingleObjectEx(ev, 0, TRUE), WAIT_TIMEOUT);
    EXPECT_LT(MsSince(start), 1000);
}

TEST(Wait, MultipleTimesOut) {
    Handle a(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle b(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    HANDLE hs[] = {a, b};
    for (BOOL all : {FALSE, TRUE}) {
        auto start = Clock::now();
        EXPECT_EQ(WaitForMultipleObjects(2, hs, all, 100), WAIT_TIMEOUT);
        EXPECT_GE(MsSince(start), 100);
        EXPECT_LT(MsSince(start), 2100);
    }
}

TEST(Wait, AnyReturnsLowestSignalledIndex) {
    std::vector<Handle> evs;
    HANDLE hs[4];
    for (int i = 0; i < 4; ++i) {
        evs.emplace_back(CreateEventA(nullptr, FALSE, FALSE, nullptr));
        hs[i] = evs.back();
    }
    ASSERT_TRUE(SetEvent(hs[3]));
    ASSERT_TRUE(SetEvent(hs[1]));
    EXPECT_EQ(WaitForMultipleObjects(4, hs, FALSE, 0), WAIT_OBJECT_0 + 1);
    EXPECT_EQ(WaitForMultipleObjects(4, hs, FALSE, 0), WAIT_OBJECT_0 + 3);  // 1 was consumed
    EXPECT_EQ(WaitForMultipleObjectsEx(4, hs, FALSE, 0, FALSE), WAIT_TIMEOUT);
}

TEST(Wait, AnyWakesWhenAnotherThreadSignals) {
    Handle a(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle b(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    HANDLE hs[] = {a, b};
    std::thread setter([&] { SetEvent(b); });
    EXPECT_EQ(WaitForMultipleObjects(2, hs, FALSE, 10000), WAIT_OBJECT_0 + 1);
    setter.join();
}

TEST(Wait, AllNeedsEverySignalAndConsumesOnlyThen) {
    Handle manual(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle a(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle b(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    HANDLE hs[] = {manual, a, b};
    ASSERT_TRUE(SetEvent(manual));
    ASSERT_TRUE(SetEvent(a));
    EXPECT_EQ(WaitForMultipleObjects(3, hs, TRUE, 20), WAIT_TIMEOUT);
    // Nothing was taken by the failed wait-all.
    EXPECT_EQ(WaitForSingleObject(a, 0), WAIT_OBJECT_0);
    ASSERT_TRUE(SetEvent(a));
    ASSERT_TRUE(SetEvent(b));
    EXPECT_EQ(WaitForMultipleObjects(3, hs, TRUE, 0), WAIT_OBJECT_0);
    // Auto-reset events were consumed, the manual one stays signalled.
    EXPECT_EQ(WaitForSingleObject(a, 0), WAIT_TIMEOUT);
    EXPECT_EQ(WaitForSingleObject(b, 0), WAIT_TIMEOUT);
    EXPECT_EQ(WaitForSingleObject(manual, 0), WAIT_OBJECT_0);
}

TEST(Wait, AllWakesWhenTheLastObjectIsSignalled) {
    Handle a(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle b(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    HANDLE hs[] = {a, b};
    DWORD result = 0xDEAD;
    std::thread waiter([&] { result = WaitForMultipleObjects(2, hs, TRUE, 20000); });
    ASSERT_TRUE(SetEvent(a));
    ASSERT_TRUE(SetEvent(b));
    waiter.join();
    EXPECT_EQ(result, WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(a, 0), WAIT_TIMEOUT);
    EXPECT_EQ(WaitForSingleObject(b, 0), WAIT_TIMEOUT);
}

// Two wait-all threads compete for the same pair of auto-reset events: each
// pair of signals releases exactly one of them.
TEST(Wait, AllIsAtomicAgainstCompetingWaiters) {
    Handle a(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle b(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    Handle done(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    HANDLE hs[] = {a, b};
    DWORD results[2] = {0xDEAD, 0xDEAD};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
        threads.emplace_back([&, i] {
            results[i] = WaitForMultipleObjects(2, hs, TRUE, 20000);
            SetEvent(done);
        });
    for (int round = 0; round < 2; ++round) {
        ASSERT_TRUE(SetEvent(b));
        ASSERT_TRUE(SetEvent(a));
        ASSERT_EQ(WaitForSingleObject(done, 10000), WAIT_OBJECT_0);
        EXPECT_EQ(WaitForSingleObject(done, 50), WAIT_TIMEOUT);
    }
    for (auto &t : threads) t.join();
    EXPECT_EQ(results[0], WAIT_OBJECT_0);
    EXPECT_EQ(results[1], WAIT_OBJECT_0);
}

TEST(Wait, BadCountsAndDuplicates) {
    Handle ev(CreateEventA(nullptr, TRUE, TRUE, nullptr));
    HANDLE hs[MAXIMUM_WAIT_OBJECTS + 1];
    for (auto &h : hs) h = ev;
    SetLastError(0);
    EXPECT_EQ(WaitForMultipleObjects(0, hs, FALSE, 0), WAIT_FAILED);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    SetLastError(0);
    EXPECT_EQ(WaitForMultipleObjects(MAXIMUM_WAIT_OBJECTS + 1, hs, FALSE, 0), WAIT_FAILED);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    SetLastError(0);
    EXPECT_EQ(WaitForMultipleObjects(1, nullptr, FALSE, 0), WAIT_FAILED);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    // The maximum is allowed; duplicates are fine for wait-any, not wait-all.
    EXPECT_EQ(WaitForMultipleObjects(MAXIMUM_WAIT_OBJECTS, hs, FALSE, 0), WAIT_OBJECT_0);
    SetLastError(0);
    EXPECT_EQ(WaitForMultipleObjects(2, hs, TRUE, 0), WAIT_FAILED);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
}

TEST(Wait, PortAndOverlappedFileHandlesAreWaitable) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    Handle file(OpenNdCreateOverlappedFile());
    ASSERT_NE(port.get(), nullptr);
    ASSERT_NE(file.get(), nullptr);
    EXPECT_EQ(WaitForSingleObject(port, 0), WAIT_TIMEOUT);
    EXPECT_EQ(WaitForSingleObject(file, 0), WAIT_TIMEOUT);
    ASSERT_TRUE(PostQueuedCompletionStatus(port, 1, 2, nullptr));
    EXPECT_EQ(WaitForSingleObject(port, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(port, 0), WAIT_OBJECT_0);  // not dequeued by the wait
    DWORD bytes;
    ULONG_PTR key;
    OVERLAPPED *ov;
    EXPECT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 0));
    EXPECT_EQ(WaitForSingleObject(port, 0), WAIT_TIMEOUT);

    OpenNdCompletionTarget *target = OpenNdAcquireCompletionTarget(file);
    ASSERT_NE(target, nullptr);
    OVERLAPPED o = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &o, 0, 0);
    EXPECT_EQ(WaitForSingleObject(file, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(file, 0), WAIT_OBJECT_0);
    OpenNdReleaseCompletionTarget(target);
}
