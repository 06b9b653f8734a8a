// The overlapped model through a provider built with the kit (SPI §4.2,
// COMPAT "Overlapped model"): skip-on-success, exactly one completion per
// pending request, hEvent with and without bit 0, cancellation order,
// GetOverlappedResult, ports shared by many threads.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "support/loopback_adapter.h"

using namespace testing_support;

namespace {

class Overlapped : public LoopbackAdapterTest {};

TEST_F(Overlapped, InlineSuccessPostsNothing) {  // R021, R024
    IND2MemoryRegion *mr = NewMr();
    char buf[64];
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    EXPECT_EQ(mr->Register(buf, sizeof buf, ND_MR_FLAG_ALLOW_LOCAL_WRITE | loopback::kLoopbackInline, &ov), ND_SUCCESS);
    EXPECT_TRUE(PortIsEmpty());
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 0), WAIT_TIMEOUT);
    CloseHandle(ov.hEvent);
    mr->Release();
}

TEST_F(Overlapped, PendingRequestCompletesExactlyOnce) {  // R023, R026
    IND2MemoryRegion *mr = NewMr();
    char buf[64];
    OVERLAPPED ov{};
    ASSERT_EQ(mr->Register(buf, sizeof buf, ND_MR_FLAG_ALLOW_LOCAL_WRITE, &ov), ND_PENDING);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(mr->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
    EXPECT_EQ(mr->GetOverlappedResult(&ov, TRUE), ND_SUCCESS);
    EXPECT_EQ(static_cast<HRESULT>(ov.Internal), ND_SUCCESS);
    EXPECT_TRUE(PortIsEmpty());
    EXPECT_NE(mr->GetLocalToken(), 0u);
    ASSERT_EQ(mr->Deregister(&ov), ND_PENDING);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_TRUE(PortIsEmpty());
    mr->Release();
}

TEST_F(Overlapped, ImmediateErrorPostsNothing) {  // R022
    IND2MemoryRegion *mr = NewMr();
    OVERLAPPED ov{};
    EXPECT_EQ(mr->Deregister(&ov), ND_INVALID_DEVICE_STATE);  // nothing registered
    EXPECT_EQ(mr->Register(nullptr, 64, 0, &ov), ND_ACCESS_VIOLATION);
    EXPECT_TRUE(PortIsEmpty());
    mr->Release();
}

TEST_F(Overlapped, EventWithoutTagSignalsAndPosts) {
    IND2MemoryRegion *mr = NewMr();
    char buf[8];
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, FALSE, FALSE, nullptr);
    ASSERT_EQ(mr->Register(buf, sizeof buf, 0, &ov), ND_PENDING);
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 5000), WAIT_OBJECT_0);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(mr->GetOverlappedResult(&ov, TRUE), ND_SUCCESS);
    CloseHandle(ov.hEvent);
    mr->Release();
}

TEST_F(Overlapped, EventWithBitZeroSignalsButDoesNotPost) {
    IND2MemoryRegion *mr = NewMr();
    char buf[8];
    HANDLE event = CreateEvent(nullptr, FALSE, FALSE, nullptr);
    OVERLAPPED ov{};
    ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(event) | 1);
    ASSERT_EQ(mr->Register(buf, sizeof buf, 0, &ov), ND_PENDING);
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 5000), WAIT_OBJECT_0);
    EXPECT_EQ(mr->GetOverlappedResult(&ov, TRUE), ND_SUCCESS);
    EXPECT_TRUE(PortIsEmpty());
    EXPECT_TRUE(CloseHandle(ov.hEvent));  // applications close the tagged value
    mr->Release();
}

// As the I/O manager does, a request that starts resets its event: a signal
// left from an earlier request does not satisfy a wait on this one. A
// request refused (its OVERLAPPED is still in flight) leaves the event alone.
TEST_F(Overlapped, ARequestResetsItsEventAsItBegins) {
    IND2CompletionQueue *cq = NewCq(4);
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, TRUE, nullptr);  // manual reset, signalled
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 0), WAIT_TIMEOUT);
    ASSERT_TRUE(SetEvent(ov.hEvent));
    EXPECT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_INVALID_PARAMETER);  // still in flight
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 0), WAIT_OBJECT_0);
    ASSERT_TRUE(ResetEvent(ov.hEvent));
    ASSERT_EQ(cq->CancelOverlappedRequests(), ND_SUCCESS);
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 5000), WAIT_OBJECT_0);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_CANCELED);
    CloseHandle(ov.hEvent);
    cq->Release();
}

// The completion signals the event hEvent named when the request began. An
// application that closes that handle meanwhile (Linux then gives the next
// event the same value) must not have the new event signalled.
TEST_F(Overlapped, AnEventClosedInFlightIsNotConfusedWithItsSuccessor) {
    IND2CompletionQueue *cq = NewCq(4);
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    ASSERT_TRUE(CloseHandle(ov.hEvent));
    HANDLE successor = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_NE(successor, nullptr);
    ASSERT_EQ(cq->CancelOverlappedRequests(), ND_SUCCESS);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_CANCELED);
    EXPECT_EQ(WaitForSingleObject(successor, 0), WAIT_TIMEOUT);
    CloseHandle(successor);
    cq->Release();
}

TEST_F(Overlapped, CancelCompletesEveryRequestInIssueOrderBeforeReturning) {  // R031
    IND2Listener *listener = nullptr;
    ASSERT_EQ(adapter->CreateListener(IID_IND2Listener, file, reinterpret_cast<void **>(&listener)), ND_SUCCESS);
    auto a = Ip("127.0.0.1");
    ASSERT_EQ(listener->Bind(a.sa(), a.length()), ND_SUCCESS);
    ASSERT_EQ(listener->Listen(0), ND_SUCCESS);
    IND2Connector *connector = nullptr;
    ASSERT_EQ(adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&connector)), ND_SUCCESS);
    constexpr int kRequests = 100;
    std::vector<OVERLAPPED> ovs(kRequests);
    for (auto &ov : ovs) ASSERT_EQ(listener->GetConnectionRequest(connector, &ov), ND_PENDING);
    EXPECT_EQ(listener->GetOverlappedResult(&ovs[0], FALSE), ND_PENDING);  // R027
    EXPECT_TRUE(PortIsEmpty());
    EXPECT_EQ(listener->CancelOverlappedRequests(), ND_SUCCESS);
    for (auto &ov : ovs) EXPECT_EQ(static_cast<HRESULT>(ov.Internal), ND_CANCELED);  // before the call returned
    for (int i = 0; i < kRequests; ++i) {
        BOOL ok = TRUE;
        ASSERT_EQ(NextPacket(5000, nullptr, &ok), &ovs[i]) << "packet " << i << " out of issue order";
        EXPECT_FALSE(ok);
        EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_OPERATION_ABORTED));
        EXPECT_EQ(listener->GetOverlappedResult(&ovs[i], FALSE), ND_CANCELED);
    }
    EXPECT_TRUE(PortIsEmpty());
    connector->Release();
    listener->Release();
}

TEST_F(Overlapped, WaitingGetOverlappedResultReturnsOnlyAfterCompletion) {  // R028
    IND2Listener *listener = nullptr;
    ASSERT_EQ(adapter->CreateListener(IID_IND2Listener, file, reinterpret_cast<void **>(&listener)), ND_SUCCESS);
    IND2Connector *connector = nullptr;
    ASSERT_EQ(adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&connector)), ND_SUCCESS);
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_EQ(listener->GetConnectionRequest(connector, &ov), ND_PENDING);
    std::atomic<bool> returned{false};
    HRESULT result = S_OK;
    std::thread waiter([&] {
        result = listener->GetOverlappedResult(&ov, TRUE);
        returned = true;
    });
    // The waiter cannot have returned: the request is still pending.
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 50), WAIT_TIMEOUT);
    EXPECT_FALSE(returned.load());
    // Completing it (by cancelling) releases the waiter. The waiter uses the
    // listener, so the listener must stay referenced until it is done.
    EXPECT_EQ(listener->CancelOverlappedRequests(), ND_SUCCESS);
    waiter.join();
    EXPECT_EQ(result, ND_CANCELED);
    EXPECT_EQ(NextPacket(), &ov);
    CloseHandle(ov.hEvent);
    listener->Release();
    connector->Release();
}

TEST_F(Overlapped, ReleasingAListenerCancelsItsRequests) {  // L10, R150
    IND2Listener *listener = nullptr;
    ASSERT_EQ(adapter->CreateListener(IID_IND2Listener, file, reinterpret_cast<void **>(&listener)), ND_SUCCESS);
    IND2Connector *connector = nullptr;
    ASSERT_EQ(adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&connector)), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(listener->GetConnectionRequest(connector, &ov), ND_PENDING);
    listener->Release();
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(static_cast<HRESULT>(ov.Internal), ND_CANCELED);
    connector->Release();
}

TEST_F(Overlapped, ForeignOverlappedIsRefusedNotWaitedOn) {
    IND2MemoryRegion *mr = NewMr();
    OVERLAPPED ov{};
    ov.Internal = ND_PENDING;
    EXPECT_EQ(mr->GetOverlappedResult(&ov, TRUE), ND_INVALID_PARAMETER_1);
    mr->Release();
}

TEST_F(Overlapped, ClosingTheFileHandleEarlyIsHarmless) {  // R025
    IND2MemoryRegion *mr = NewMr();
    ASSERT_TRUE(CloseHandle(file));
    file = nullptr;
    char buf[8];
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_EQ(mr->Register(buf, sizeof buf, 0, &ov), ND_PENDING);
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 5000), WAIT_OBJECT_0);
    EXPECT_EQ(mr->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
    CloseHandle(ov.hEvent);
    mr->Release();
    IND2MemoryRegion *mr2 = nullptr;
    EXPECT_NE(adapter->CreateMemoryRegion(IID_IND2MemoryRegion, reinterpret_cast<HANDLE>(0x7770), reinterpret_cast<void **>(&mr2)),
              ND_SUCCESS);
}

// Many thousands of requests from several threads, completions drained by 8
// threads sharing one port: every request completes exactly once.
TEST_F(Overlapped, PortSharedByEightThreadsLosesNothing) {
    constexpr int kPosters = 4, kMrsPerPoster = 16, kRounds = 160;  // 4*16*160*2 = 20480 requests
    constexpr int kTotal = kPosters * kMrsPerPoster * kRounds * 2;
    std::vector<IND2MemoryRegion *> mrs;
    for (int i = 0; i < kPosters * kMrsPerPoster; ++i) mrs.push_back(NewMr());
    auto ovs = std::make_unique<OVERLAPPED[]>(kTotal);
    auto seen = std::make_unique<std::atomic<int>[]>(kTotal);
    for (int i = 0; i < kTotal; ++i) seen[i] = 0;
    std::atomic<int> received{0}, bad_status{0};
    std::vector<std::thread> drainers;
    for (int t = 0; t < 8; ++t)
        drainers.emplace_back([&] {
            while (received.load() < kTotal) {
                DWORD n;
                ULONG_PTR key;
                OVERLAPPED *ov = nullptr;
                if (!GetQueuedCompletionStatus(port, &n, &key, &ov, 100) && !ov) continue;
                if (key == 0) break;  // shutdown packet
                ptrdiff_t idx = ov - ovs.get();
                ASSERT_TRUE(idx >= 0 && idx < kTotal);
                seen[idx].fetch_add(1);
                if (static_cast<HRESULT>(ov->Internal) != ND_SUCCESS) bad_status++;
                received++;
            }
        });
    std::vector<std::thread> posters;
    char buf[64];
    for (int p = 0; p < kPosters; ++p)
        posters.emplace_back([&, p] {
            int next = p * kMrsPerPoster * kRounds * 2;
            for (int r = 0; r < kRounds; ++r)
                for (int m = 0; m < kMrsPerPoster; ++m) {
                    IND2MemoryRegion *mr = mrs[p * kMrsPerPoster + m];
                    ASSERT_EQ(mr->Register(buf, sizeof buf, 0, &ovs[next++]), ND_PENDING);
                    ASSERT_EQ(mr->Deregister(&ovs[next++]), ND_PENDING);
                }
        });
    for (auto &t : posters) t.join();
    for (int i = 0; i < 8; ++i) PostQueuedCompletionStatus(port, 0, 0, nullptr);
    for (auto &t : drainers) t.join();
    EXPECT_EQ(received.load(), kTotal);
    EXPECT_EQ(bad_status.load(), 0);
    for (int i = 0; i < kTotal; ++i) ASSERT_EQ(seen[i].load(), 1) << "request " << i;
    for (auto *mr : mrs) mr->Release();
}

}  // namespace
