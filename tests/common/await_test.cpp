// Await's bound: a request nobody satisfies comes back as a timeout within
// its deadline, cancelled and collected (nothing left pointing at the
// caller's OVERLAPPED), and the object still works afterwards.
#include <gtest/gtest.h>

#include "client_fixture.h"
#include "common/await.h"
#include "common/com_ptr.h"
#include "common/connection.h"

namespace {

using namespace opennd::client;
using client_test::Addr;
using client_test::ClientTest;

constexpr uint64_t kShortMs = 300;
// Scheduling slack on a loaded two-core machine; far below kCancelGraceMs,
// so a cancel that never completes cannot pass for a slow one.
constexpr uint64_t kSlackMs = 1500;

TEST_F(ClientTest, AwaitOfAFinishedCallReturnsItsStatus) {
    ComPtr<IND2CompletionQueue> cq;
    ASSERT_EQ(node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 8, 0, 0, cq.put_void()),
              ND_SUCCESS);
    Overlapped ov;
    Status s = Await(cq, ov, ND_INVALID_PARAMETER, Deadline::After(kShortMs), "Notify");
    EXPECT_EQ(s.hr(), ND_INVALID_PARAMETER);
    EXPECT_FALSE(s.timed_out());
}

TEST_F(ClientTest, NotifyNothingSatisfiesTimesOutAndIsCollected) {
    ComPtr<IND2CompletionQueue> cq;
    ASSERT_EQ(node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 8, 0, 0, cq.put_void()),
              ND_SUCCESS);
    Overlapped ov;
    const uint64_t start = NowMs();
    Status s = Await(cq, ov, cq->Notify(ND_CQ_NOTIFY_ANY, &ov), Deadline::After(kShortMs), "Notify");
    const uint64_t took = NowMs() - start;
    EXPECT_TRUE(s.timed_out()) << s.message();
    EXPECT_FALSE(s.abandoned());
    EXPECT_GE(took, kShortMs - 10);
    EXPECT_LT(took, kShortMs + kSlackMs);
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_CANCELED) << "the request is no longer the provider's";
    // The CQ takes a new Notify: the old one is not still armed.
    Overlapped again;
    HRESULT hr = cq->Notify(ND_CQ_NOTIFY_ANY, &again);
    EXPECT_EQ(hr, ND_PENDING);
    EXPECT_TRUE(Await(cq, again, hr, Deadline::After(50), "Notify").timed_out());
}

TEST_F(ClientTest, GetConnectionRequestNobodySatisfiesTimesOut) {
    Listener listener;
    ASSERT_TRUE(listener.Listen(node.adapter, node.file, Addr("127.0.0.1"), 0).ok());
    ComPtr<IND2Connector> c;
    ASSERT_EQ(node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()), ND_SUCCESS);
    Overlapped ov;
    const uint64_t start = NowMs();
    Status s = Await(listener.get(), ov, listener.get()->GetConnectionRequest(c, &ov), Deadline::After(kShortMs),
                     "GetConnectionRequest");
    const uint64_t took = NowMs() - start;
    EXPECT_TRUE(s.timed_out()) << s.message();
    EXPECT_FALSE(s.abandoned());
    EXPECT_EQ(s.message(), "GetConnectionRequest: timed out");
    EXPECT_LT(took, kShortMs + kSlackMs);
    EXPECT_EQ(listener.get()->GetOverlappedResult(&ov, FALSE), ND_CANCELED);
}

// A listener that never takes the request: the initiator's Connect stays
// pending at the provider, so only our deadline ends it.
TEST_F(ClientTest, ConnectNobodyAcceptsTimesOutWithinTheDeadline) {
    Listener listener;
    ASSERT_TRUE(listener.Listen(node.adapter, node.file, Addr("127.0.0.1"), 0).ok());
    Connection conn;
    ASSERT_TRUE(conn.Open(node.adapter, node.file, QueueShape{}).ok());
    const uint64_t start = NowMs();
    Status s = conn.Connect(Addr("127.0.0.1", listener.port()), ConnectParams{}, Deadline::After(kShortMs));
    const uint64_t took = NowMs() - start;
    EXPECT_TRUE(s.timed_out()) << s.message();
    EXPECT_EQ(s.call(), "Connect");
    EXPECT_FALSE(s.abandoned());
    EXPECT_LT(took, kShortMs + kSlackMs);
}

}  // namespace
