// The kit CQ tests' fixture: a loopback adapter, a CQ of 64 and a queue
// pair on it whose Sends land in its own Receives (completion_queue_test,
// cq_moderation_test).
#pragma once

#include <gtest/gtest.h>

#include "support/loopback_adapter.h"

namespace testing_support {

class LoopbackCqTest : public LoopbackAdapterTest {
protected:
    void SetUp() override {
        LoopbackAdapterTest::SetUp();
        cq = NewCq(64);
        ASSERT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, &qp_context, 32, 32, 2, 2, 0,
                                           reinterpret_cast<void **>(&qp)),
                  ND_SUCCESS);
    }
    void TearDown() override {
        if (qp) qp->Release();
        if (cq) cq->Release();
        LoopbackAdapterTest::TearDown();
    }
    // One Send into one posted Receive: two completions (receive, send).
    void Exchange(ULONG flags = 0) {
        ND2_SGE rsge{rbuf, sizeof rbuf, 0};
        ASSERT_EQ(qp->Receive(&recv_context, &rsge, 1), ND_SUCCESS);
        ND2_SGE ssge{sbuf, sizeof sbuf, 0};
        ASSERT_EQ(qp->Send(&send_context, &ssge, 1, flags), ND_SUCCESS);
    }
    ULONG Drain() {
        ND2_RESULT r[8];
        ULONG total = 0, n;
        while ((n = cq->GetResults(r, 8)) > 0) total += n;
        return total;
    }
    bool Completed(OVERLAPPED &ov) { return static_cast<HRESULT>(ov.Internal) != ND_PENDING; }

    IND2CompletionQueue *cq = nullptr;
    IND2QueuePair *qp = nullptr;
    int qp_context = 0, recv_context = 0, send_context = 0;
    char rbuf[32], sbuf[16] = "hello";
};

}  // namespace testing_support
