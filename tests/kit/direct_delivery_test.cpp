// GetResults' polling path: entries a poller pushes on the polling thread
// while the CQ is empty and nothing is armed go straight into the caller's
// array (no lock, no ring). Order and notifications must be as if they had
// gone through the ring.
#include <gtest/gtest.h>

#include <vector>

#include "opennd/kit/completion_queue.h"
#include "support/loopback_adapter.h"

using namespace testing_support;
namespace kit = opennd::kit;

namespace {

ND2_RESULT Entry(uintptr_t id, HRESULT status = ND_SUCCESS) {
    return ND2_RESULT{status, 0, nullptr, reinterpret_cast<void *>(id), Nd2RequestTypeReceive};
}

// Pushes its entries when polled, as a queue pair moves incoming data.
struct Poller : kit::CqPoller {
    kit::CompletionQueue *cq = nullptr;
    std::vector<ND2_RESULT> next;
    void PollForCq() override {
        for (const ND2_RESULT &r : next) cq->Push(r);
        next.clear();
    }
};

class DirectDelivery : public LoopbackAdapterTest {
protected:
    // The kit CQ itself (the loopback provider's CQs live in its own copy of
    // the kit), on the adapter's overlapped file.
    kit::CompletionQueue *NewKitCq() { return new kit::CompletionQueue(file, 16, 1024, 0); }
    void SetUp() override {
        LoopbackAdapterTest::SetUp();
        cq = NewKitCq();
        poller.cq = cq;
        cq->AddPoller(&poller);
    }
    void TearDown() override {
        if (cq) {
            cq->RemovePoller(&poller);
            cq->Release();
        }
        LoopbackAdapterTest::TearDown();
    }
    std::vector<uintptr_t> Get(ULONG n) {
        std::vector<ND2_RESULT> r(n);
        ULONG got = cq->GetResults(r.data(), n);
        std::vector<uintptr_t> ids;
        for (ULONG i = 0; i < got; ++i) ids.push_back(reinterpret_cast<uintptr_t>(r[i].RequestContext));
        return ids;
    }

    kit::CompletionQueue *cq = nullptr;
    Poller poller;
};

TEST_F(DirectDelivery, APollersEntriesComeBackInOrderAndOnlyOnce) {
    poller.next = {Entry(1), Entry(2), Entry(3)};
    EXPECT_EQ(Get(8), (std::vector<uintptr_t>{1, 2, 3}));
    EXPECT_TRUE(Get(8).empty());
}

TEST_F(DirectDelivery, AnEntryAlreadyQueuedComesFirst) {
    ASSERT_TRUE(cq->Push(Entry(1)));  // from another thread, say: in the ring
    poller.next = {Entry(2), Entry(3)};
    EXPECT_EQ(Get(8), (std::vector<uintptr_t>{1, 2, 3}));
    EXPECT_TRUE(Get(8).empty());
}

TEST_F(DirectDelivery, WhatTheArrayCannotTakeWaitsInOrder) {
    poller.next = {Entry(1), Entry(2), Entry(3)};
    EXPECT_EQ(Get(1), (std::vector<uintptr_t>{1}));
    poller.next = {Entry(4)};
    EXPECT_EQ(Get(8), (std::vector<uintptr_t>{2, 3, 4}));
}

TEST_F(DirectDelivery, AnArmedNotifyStillFires) {
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    poller.next = {Entry(1)};
    EXPECT_EQ(Get(8), (std::vector<uintptr_t>{1}));
    EXPECT_EQ(NextPacket(), &ov) << "an entry that skipped the ring skipped the notification too";
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
}

TEST_F(DirectDelivery, AnotherCqsEntriesAreNotTaken) {
    kit::CompletionQueue *other = NewKitCq();
    poller.cq = other;  // polled through cq, pushes to other (a QP's send CQ, say)
    poller.next = {Entry(7)};
    EXPECT_TRUE(Get(8).empty());
    ND2_RESULT r{};
    EXPECT_EQ(other->GetResults(&r, 1), 1u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.RequestContext), 7u);
    poller.cq = cq;
    other->Release();
}

// What a device provider arms its device for (ndverbs): read from the
// requests outstanding, so a re-arm never downgrades to solicited-only
// while an ANY or ERRORS request waits.
TEST_F(DirectDelivery, ArmedForNamesWhatTheOutstandingRequestsWaitFor) {
    using Arming = kit::CompletionQueue::Arming;
    EXPECT_EQ(cq->ArmedFor(), Arming::kNone);
    OVERLAPPED solicited{}, errors{}, any{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_SOLICITED, &solicited), ND_PENDING);
    EXPECT_EQ(cq->ArmedFor(), Arming::kSolicited);
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ERRORS, &errors), ND_PENDING);
    EXPECT_EQ(cq->ArmedFor(), Arming::kEvery) << "ERRORS: any completion may be an error";
    poller.next = {Entry(1, ND_IO_TIMEOUT)};
    EXPECT_EQ(Get(8).size(), 1u);
    EXPECT_EQ(cq->ArmedFor(), Arming::kNone) << "the error fired both";
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &any), ND_PENDING);
    EXPECT_EQ(cq->ArmedFor(), Arming::kEvery);
    EXPECT_EQ(cq->CancelOverlappedRequests(), ND_SUCCESS);
    EXPECT_EQ(cq->ArmedFor(), Arming::kNone);
    for (int i = 0; i < 3; ++i) EXPECT_NE(NextPacket(), nullptr);
}

}  // namespace

// A receive that invalidated a token: GetResultsEx reports the type and the
// token, GetResults an ordinary receive; on the ring and on the direct path
// alike, and both calls take from the one queue.
TEST_F(DirectDelivery, AnInvalidatingReceiveIsAReceiveExceptThroughGetResultsEx) {
    IOpenNdCompletionQueueExt *ext = nullptr;
    ASSERT_EQ(cq->QueryInterface(IID_IOpenNdCompletionQueueExt, reinterpret_cast<void **>(&ext)), S_OK);
    for (bool direct : {false, true}) {
        SCOPED_TRACE(direct ? "direct" : "ring");
        struct Invalidating : kit::CqPoller {
            kit::CompletionQueue *cq;
            bool due = false;
            void PollForCq() override {
                if (due) cq->PushInvalidated(Entry(7), 0x1234abcd);
                due = false;
            }
        } inv;
        inv.cq = cq;
        cq->AddPoller(&inv);
        auto push = [&] {
            if (direct)
                inv.due = true;
            else
                ASSERT_TRUE(cq->PushInvalidated(Entry(7), 0x1234abcd));
        };
        push();
        OPENND_RESULT_EX ex[4] = {};
        ASSERT_EQ(ext->GetResultsEx(ex, 4), 1u);
        EXPECT_EQ(ex[0].RequestType, OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE);
        EXPECT_EQ(ex[0].InvalidatedToken, 0x1234abcdu);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(ex[0].RequestContext), 7u);

        push();
        ND2_RESULT r[4] = {};
        ASSERT_EQ(cq->GetResults(r, 4), 1u);
        EXPECT_EQ(r[0].RequestType, Nd2RequestTypeReceive);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(r[0].RequestContext), 7u);
        EXPECT_EQ(ext->GetResultsEx(ex, 4), 0u);  // taken once

        // An ordinary entry through GetResultsEx carries no token.
        ASSERT_TRUE(cq->Push(Entry(8)));
        ASSERT_EQ(ext->GetResultsEx(ex, 4), 1u);
        EXPECT_EQ(ex[0].RequestType, Nd2RequestTypeReceive);
        EXPECT_EQ(ex[0].InvalidatedToken, 0u);
        cq->RemovePoller(&inv);
    }
    ext->Release();
}
