// Completion ports: post/get, timeouts, batches, many threads, closing.
#include <poll.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "ndstatus.h"
#include "win32_test_util.h"

using namespace win32_test;

TEST(Port, PostThenGet) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    ASSERT_NE(port.get(), nullptr);
    OVERLAPPED ov{};
    ASSERT_TRUE(PostQueuedCompletionStatus(port, 123, 0xABC, &ov));
    DWORD bytes = 0;
    ULONG_PTR key = 0;
    OVERLAPPED *got = nullptr;
    ASSERT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &got, 1000));
    EXPECT_EQ(bytes, 123u);
    EXPECT_EQ(key, 0xABCu);
    EXPECT_EQ(got, &ov);
}

TEST(Port, PacketsComeOutInOrder) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    for (ULONG_PTR k = 0; k < 10; ++k) ASSERT_TRUE(PostQueuedCompletionStatus(port, 0, k, nullptr));
    for (ULONG_PTR k = 0; k < 10; ++k) {
        DWORD bytes;
        ULONG_PTR key;
        OVERLAPPED *ov;
        ASSERT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 0));
        EXPECT_EQ(key, k);
        EXPECT_EQ(ov, nullptr);
    }
}

TEST(Port, GetTimesOut) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    DWORD bytes;
    ULONG_PTR key;
    OVERLAPPED *ov = reinterpret_cast<OVERLAPPED *>(1);
    SetLastError(0);
    EXPECT_FALSE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 0));
    EXPECT_EQ(ov, nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(WAIT_TIMEOUT));

    auto start = Clock::now();
    EXPECT_FALSE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 100));
    EXPECT_GE(MsSince(start), 100);
    EXPECT_LT(MsSince(start), 2100);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(WAIT_TIMEOUT));

    OVERLAPPED_ENTRY entries[4];
    ULONG n = 9;
    SetLastError(0);
    start = Clock::now();
    EXPECT_FALSE(GetQueuedCompletionStatusEx(port, entries, 4, &n, 50, FALSE));
    EXPECT_GE(MsSince(start), 50);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(WAIT_TIMEOUT));
}

TEST(Port, GetExTakesABatch) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    OVERLAPPED ovs[10]{};
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(PostQueuedCompletionStatus(port, 100 + i, i, &ovs[i]));
    OVERLAPPED_ENTRY entries[16];
    ULONG n = 0;
    ASSERT_TRUE(GetQueuedCompletionStatusEx(port, entries, 4, &n, 0, FALSE));
    ASSERT_EQ(n, 4u);
    ASSERT_TRUE(GetQueuedCompletionStatusEx(port, entries + 4, 16, &n, 1000, TRUE));
    ASSERT_EQ(n, 6u);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(entries[i].lpCompletionKey, static_cast<ULONG_PTR>(i));
        EXPECT_EQ(entries[i].lpOverlapped, &ovs[i]);
        EXPECT_EQ(entries[i].dwNumberOfBytesTransferred, static_cast<DWORD>(100 + i));
        EXPECT_EQ(entries[i].Internal, 0u);
    }
    SetLastError(0);
    EXPECT_FALSE(GetQueuedCompletionStatusEx(port, entries, 0, &n, 0, FALSE));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
}

TEST(Port, GetWakesWhenAnotherThreadPosts) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    std::thread poster([&] { PostQueuedCompletionStatus(port, 7, 8, nullptr); });
    DWORD bytes = 0;
    ULONG_PTR key = 0;
    OVERLAPPED *ov;
    EXPECT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 10000));
    EXPECT_EQ(bytes, 7u);
    EXPECT_EQ(key, 8u);
    poster.join();
}

// 8 threads drain one port while 4 post 200,000 packets; half the consumers
// use the Ex call. Every packet must arrive exactly once. Each consumer stops
// at a sentinel packet (key 1) posted after everything was received.
TEST(Port, ManyThreadsReceiveEveryPacketExactlyOnce) {
    constexpr int kProducers = 4, kConsumers = 8, kPackets = 200000;
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    Handle file(OpenNdCreateOverlappedFile());
    ASSERT_EQ(CreateIoCompletionPort(file, port, 0, 0), port.get());
    OpenNdCompletionTarget *target = OpenNdAcquireCompletionTarget(file);
    ASSERT_NE(target, nullptr);
    auto ovs = std::make_unique<OVERLAPPED[]>(kPackets);
    auto seen = std::make_unique<std::atomic<uint8_t>[]>(kPackets);
    std::atomic<int> received{0}, bad{0};
    Handle all_received(CreateEventA(nullptr, TRUE, FALSE, nullptr));

    auto record = [&](OVERLAPPED *ov, ULONG_PTR key) {
        if (key == 1) return false;  // sentinel
        ptrdiff_t i = ov - ovs.get();
        if (key != 0 || i < 0 || i >= kPackets || seen[i].fetch_add(1) != 0) bad.fetch_add(1);
        if (received.fetch_add(1) + 1 == kPackets) SetEvent(all_received);
        return true;
    };
    std::vector<std::thread> consumers;
    for (int c = 0; c < kConsumers; ++c)
        consumers.emplace_back([&, c] {
            for (;;) {
                if (c % 2 == 0) {
                    DWORD bytes;
                    ULONG_PTR key;
                    OVERLAPPED *ov;
                    if (!GetQueuedCompletionStatus(port, &bytes, &key, &ov, 30000)) {
                        bad.fetch_add(1);
                        return;
                    }
                    if (!record(ov, key)) return;
                } else {
                    OVERLAPPED_ENTRY e[16];
                    ULONG n;
                    if (!GetQueuedCompletionStatusEx(port, e, 16, &n, 30000, FALSE)) {
                        bad.fetch_add(1);
                        return;
                    }
                    bool stop = false;
                    for (ULONG i = 0; i < n; ++i)
                        if (!record(e[i].lpOverlapped, e[i].lpCompletionKey)) stop = true;
                    // A batch may have swallowed other consumers' sentinels: repost them.
                    int extra = 0;
                    for (ULONG i = 0; i < n; ++i) extra += e[i].lpCompletionKey == 1;
                    for (int i = stop ? 1 : 0; i < extra; ++i) PostQueuedCompletionStatus(port, 0, 1, nullptr);
                    if (stop) return;
                }
            }
        });
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p)
        producers.emplace_back([&, p] {
            for (int i = p; i < kPackets; i += kProducers) {
                ovs[i].Internal = STATUS_PENDING;
                if (p % 2 == 0)
                    PostQueuedCompletionStatus(port, 0, 0, &ovs[i]);
                else
                    OpenNdCompleteOverlapped(target, &ovs[i], ND_SUCCESS, 0);
            }
        });
    for (auto &t : producers) t.join();
    EXPECT_EQ(WaitForSingleObject(all_received, 60000), WAIT_OBJECT_0);
    for (int c = 0; c < kConsumers; ++c) PostQueuedCompletionStatus(port, 0, 1, nullptr);
    for (auto &t : consumers) t.join();
    OpenNdReleaseCompletionTarget(target);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(received.load(), kPackets);
    int missing = 0;
    for (int i = 0; i < kPackets; ++i) missing += seen[i].load() != 1;
    EXPECT_EQ(missing, 0);
}

// Threads blocked in GetQueuedCompletionStatus(Ex) wake when the port is
// closed and fail with ERROR_ABANDONED_WAIT_0; queued packets are dropped.
TEST(Port, ClosingThePortWakesItsWaiters) {
    constexpr int kWaiters = 3;
    HANDLE port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0);
    ASSERT_NE(port, nullptr);
    std::atomic<pid_t> tids[kWaiters + 1] = {};
    DWORD errors[kWaiters + 1] = {};
    BOOL results[kWaiters + 1];
    OVERLAPPED *ovs[kWaiters + 1];
    std::vector<std::thread> threads;
    for (int i = 0; i < kWaiters; ++i)
        threads.emplace_back([&, i] {
            tids[i] = ThreadId();
            DWORD bytes;
            ULONG_PTR key;
            results[i] = GetQueuedCompletionStatus(port, &bytes, &key, &ovs[i], 30000);
            errors[i] = GetLastError();
        });
    threads.emplace_back([&] {
        tids[kWaiters] = ThreadId();
        OVERLAPPED_ENTRY e[4];
        ULONG n;
        results[kWaiters] = GetQueuedCompletionStatusEx(port, e, 4, &n, 30000, FALSE);
        ovs[kWaiters] = nullptr;
        errors[kWaiters] = GetLastError();
    });
    for (auto &tid : tids) {
        while (tid.load() == 0) Sleep(0);
        ASSERT_TRUE(WaitUntilThreadSleeps(tid.load()));
    }
    auto start = Clock::now();
    ASSERT_TRUE(CloseHandle(port));
    for (auto &t : threads) t.join();
    EXPECT_LT(MsSince(start), 10000);
    for (int i = 0; i <= kWaiters; ++i) {
        EXPECT_FALSE(results[i]);
        EXPECT_EQ(ovs[i], nullptr);
        EXPECT_EQ(errors[i], static_cast<DWORD>(ERROR_ABANDONED_WAIT_0));
    }
}

TEST(Port, DescriptorIsReadableWhilePacketsAreQueued) {
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    int fd = OpenNdHandleFd(port);
    ASSERT_GE(fd, 0);
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0);
    ASSERT_TRUE(PostQueuedCompletionStatus(port, 0, 0, nullptr));
    ASSERT_TRUE(PostQueuedCompletionStatus(port, 0, 0, nullptr));
    EXPECT_EQ(poll(&p, 1, 0), 1);
    DWORD bytes;
    ULONG_PTR key;
    OVERLAPPED *ov;
    ASSERT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 0));
    EXPECT_EQ(poll(&p, 1, 0), 1);
    ASSERT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &ov, 0));
    EXPECT_EQ(poll(&p, 1, 0), 0);
}
