// The kit CQ's notification rules (SPI §3.4), driven by the loopback QP
// whose Sends land in its own Receives.
#include <gtest/gtest.h>

#include "loopback_cq_test.h"

using namespace testing_support;

namespace {

using CompletionQueue = LoopbackCqTest;

TEST_F(CompletionQueue, NewCqIsDisarmed) {  // R052
    Exchange();
    EXPECT_TRUE(PortIsEmpty());
}

TEST_F(CompletionQueue, AnyCompletesOnTheNextCompletion) {  // R053
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    EXPECT_FALSE(Completed(ov));
    Exchange();
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
}

TEST_F(CompletionQueue, ResultsCarryContextsTypesAndBytes) {  // R063, R064
    Exchange();
    ND2_RESULT r[4];
    ASSERT_EQ(cq->GetResults(r, 4), 2u);
    EXPECT_EQ(r[0].RequestType, Nd2RequestTypeReceive);
    EXPECT_EQ(r[0].RequestContext, &recv_context);
    EXPECT_EQ(r[0].QueuePairContext, &qp_context);
    EXPECT_EQ(r[0].BytesTransferred, sizeof sbuf);
    EXPECT_EQ(r[0].Status, ND_SUCCESS);
    EXPECT_EQ(r[1].RequestType, Nd2RequestTypeSend);
    EXPECT_EQ(r[1].RequestContext, &send_context);
    EXPECT_STREQ(rbuf, "hello");
    EXPECT_EQ(cq->GetResults(r, 4), 0u);
}

TEST_F(CompletionQueue, SolicitedIgnoresOrdinaryCompletions) {  // R054
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_SOLICITED, &ov), ND_PENDING);
    Exchange();
    EXPECT_FALSE(Completed(ov));
    Exchange(ND_OP_FLAG_SEND_AND_SOLICIT_EVENT);
    EXPECT_EQ(NextPacket(), &ov);
}

TEST_F(CompletionQueue, ErrorsSatisfyEveryType) {  // R055
    OVERLAPPED errors{}, solicited{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ERRORS, &errors), ND_PENDING);
    Exchange();  // successes do not satisfy ERRORS
    EXPECT_FALSE(Completed(errors));
    Drain();
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_SOLICITED, &solicited), ND_PENDING);
    ND2_SGE ssge{sbuf, sizeof sbuf, 0};
    ASSERT_EQ(qp->Send(&send_context, &ssge, 1, 0), ND_SUCCESS);  // no Receive posted: error completion
    EXPECT_EQ(NextPacket(), &errors);
    EXPECT_EQ(NextPacket(), &solicited);
}

TEST_F(CompletionQueue, ArmingAnyUpgradesAPendingSolicited) {  // R056, R057
    OVERLAPPED solicited{}, any{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_SOLICITED, &solicited), ND_PENDING);
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &any), ND_PENDING);
    Exchange();
    // One trigger releases every outstanding request.
    EXPECT_EQ(NextPacket(), &solicited);
    EXPECT_EQ(NextPacket(), &any);
}

TEST_F(CompletionQueue, AnEntryTriggersAtMostOnce) {  // R058
    OVERLAPPED first{}, second{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &first), ND_PENDING);
    Exchange(ND_OP_FLAG_SILENT_SUCCESS);  // one entry: the receive
    EXPECT_EQ(NextPacket(), &first);
    // The entry that fired `first` is still queued but must not fire again.
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &second), ND_PENDING);
    EXPECT_TRUE(PortIsEmpty());
    Exchange(ND_OP_FLAG_SILENT_SUCCESS);
    EXPECT_EQ(NextPacket(), &second);
}

TEST_F(CompletionQueue, NoLostWakeupForAnEntryQueuedBeforeNotify) {  // R059 variant A
    EXPECT_EQ(Drain(), 0u);
    Exchange();
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(Drain(), 2u);
}

// R060, COMPAT: a CQ of depth 2 holds 3 (rounded up as hardware does); the
// fourth completion overruns it: Notify reports it, the three queued before
// it are still handed out, nothing after it is.
TEST_F(CompletionQueue, OverrunIsReportedAndTheCqIsDead) {
    IND2CompletionQueue *small = NewCq(2);
    IND2QueuePair *q = nullptr;
    ASSERT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, small, small, nullptr, 8, 8, 1, 1, 0,
                                       reinterpret_cast<void **>(&q)),
              ND_SUCCESS);  // a QP deeper than its CQ is legal
    OVERLAPPED ov{};
    ASSERT_EQ(small->Notify(ND_CQ_NOTIFY_ERRORS, &ov), ND_PENDING);
    ND2_SGE rsge{rbuf, sizeof rbuf, 0}, ssge{sbuf, sizeof sbuf, 0};
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(q->Receive(nullptr, &rsge, 1), ND_SUCCESS);
        ASSERT_EQ(q->Send(nullptr, &ssge, 1, 0), ND_SUCCESS);
    }
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(small->GetOverlappedResult(&ov, FALSE), ND_BUFFER_OVERFLOW);
    ND2_RESULT r[8];
    EXPECT_EQ(small->GetResults(r, 8), 3u) << "the completions queued before the overrun";
    EXPECT_EQ(small->GetResults(r, 8), 0u);
    ASSERT_EQ(q->Receive(nullptr, &rsge, 1), ND_SUCCESS);
    ASSERT_EQ(q->Send(nullptr, &ssge, 1, 0), ND_SUCCESS);
    EXPECT_EQ(small->GetResults(r, 8), 0u) << "nothing after the overrun";
    OVERLAPPED again{};
    EXPECT_EQ(small->Notify(ND_CQ_NOTIFY_ANY, &again), ND_BUFFER_OVERFLOW);
    q->Release();
    small->Release();
}

// COMPAT: a CQ sized to exactly what one QP has posted, shared with that
// QP's sends, holds both (depth 4: 7 entries), and every one comes out.
TEST_F(CompletionQueue, ACqHoldsMoreThanItsDepthAsHardwareDoes) {
    IND2CompletionQueue *four = NewCq(4);
    IND2QueuePair *q = nullptr;
    ASSERT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, four, four, nullptr, 8, 8, 1, 1, 0,
                                       reinterpret_cast<void **>(&q)),
              ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(four->Notify(ND_CQ_NOTIFY_ERRORS, &ov), ND_PENDING);
    ND2_SGE rsge{rbuf, sizeof rbuf, 0}, ssge{sbuf, sizeof sbuf, 0};
    for (int i = 0; i < 4; ++i) ASSERT_EQ(q->Receive(nullptr, &rsge, 1), ND_SUCCESS);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(q->Send(nullptr, &ssge, 1, 0), ND_SUCCESS);
    ND2_RESULT r[8];
    EXPECT_EQ(four->GetResults(r, 8), 6u) << "3 receives and 3 sends";
    EXPECT_EQ(four->CancelOverlappedRequests(), ND_SUCCESS);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(static_cast<HRESULT>(ov.Internal), ND_CANCELED) << "no overrun was reported";
    q->Release();
    four->Release();
}

TEST_F(CompletionQueue, DestroyingTheCqCancelsItsNotifies) {  // R061
    IND2CompletionQueue *other = NewCq(4);
    OVERLAPPED ov{};
    ASSERT_EQ(other->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    other->Release();
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(static_cast<HRESULT>(ov.Internal), ND_CANCELED);
}

TEST_F(CompletionQueue, AnEntryAfterTheTriggerSatisfiesTheNextNotify) {  // R058, R059
    OVERLAPPED first{}, second{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &first), ND_PENDING);
    Exchange();  // the receive fires `first`; the send completion comes after it
    EXPECT_EQ(NextPacket(), &first);
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &second), ND_PENDING);
    EXPECT_EQ(NextPacket(), &second);
}

TEST_F(CompletionQueue, SilentSuccessAddsNoEntry) {  // R098
    Exchange(ND_OP_FLAG_SILENT_SUCCESS);
    ND2_RESULT r[4];
    ASSERT_EQ(cq->GetResults(r, 4), 1u);
    EXPECT_EQ(r[0].RequestType, Nd2RequestTypeReceive);
}

TEST_F(CompletionQueue, GetResultsHonoursTheArraySize) {  // R062
    Exchange();
    Exchange();
    ND2_RESULT r[3];
    EXPECT_EQ(cq->GetResults(r, 3), 3u);
    EXPECT_EQ(cq->GetResults(r, 3), 1u);
}

TEST_F(CompletionQueue, ResizeKeepsEveryEntry) {  // R067, R068
    for (int i = 0; i < 5; ++i) Exchange();  // 10 entries
    EXPECT_EQ(cq->Resize(9), ND_BUFFER_OVERFLOW);
    EXPECT_EQ(cq->Resize(0), ND_INVALID_PARAMETER);
    EXPECT_EQ(cq->Resize(loopback::kMaxCqDepth + 1), ND_INVALID_PARAMETER);
    EXPECT_EQ(cq->Resize(10), ND_SUCCESS);
    EXPECT_EQ(cq->Resize(1000), ND_SUCCESS);
    ND2_RESULT r[16];
    ASSERT_EQ(cq->GetResults(r, 16), 10u);
    for (int i = 0; i < 10; ++i)
        EXPECT_EQ(r[i].RequestType, i % 2 ? Nd2RequestTypeSend : Nd2RequestTypeReceive) << i;
}

TEST_F(CompletionQueue, NotifyAffinityIsReported) {  // R069
    USHORT group = 7;
    KAFFINITY affinity = 0;
    EXPECT_EQ(cq->GetNotifyAffinity(&group, &affinity), ND_SUCCESS);
    EXPECT_EQ(group, 0);
    EXPECT_NE(affinity, 0u);
    EXPECT_EQ(cq->GetNotifyAffinity(nullptr, &affinity), ND_INVALID_PARAMETER);
}

TEST_F(CompletionQueue, CreationLimits) {  // R041
    void *p = nullptr;
    EXPECT_EQ(adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, 0, 0, 0, &p), ND_INVALID_PARAMETER_3);
    EXPECT_EQ(adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, loopback::kMaxCqDepth + 1, 0, 0, &p),
              ND_INVALID_PARAMETER_3);
    EXPECT_EQ(adapter->CreateCompletionQueue(IID_IND2QueuePair, file, 4, 0, 0, &p), E_NOINTERFACE);
    IUnknown *unk = nullptr;
    ASSERT_EQ(adapter->CreateCompletionQueue(IID_IUnknown, file, 4, 0, 0, reinterpret_cast<void **>(&unk)), ND_SUCCESS);
    IND2Overlapped *base = nullptr;
    EXPECT_EQ(unk->QueryInterface(IID_IND2Overlapped, reinterpret_cast<void **>(&base)), S_OK);
    base->Release();
    unk->Release();
}

TEST_F(CompletionQueue, QueuePairRefusesSomethingThatIsNotOneOfItsCqs) {  // R044
    void *p = nullptr;
    IND2MemoryRegion *mr = NewMr();
    EXPECT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, mr, cq, nullptr, 4, 4, 1, 1, 0, &p), ND_INVALID_PARAMETER_2);
    EXPECT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, cq, mr, nullptr, 4, 4, 1, 1, 0, &p), ND_INVALID_PARAMETER_3);
    EXPECT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, nullptr, 1u << 20, 4, 1, 1, 0, &p),
              ND_INVALID_PARAMETER_5);
    mr->Release();
}

}  // namespace
