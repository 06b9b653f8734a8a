// The NDK callback model: requests answer once on the adapter's thread, CQ
// notifications fire once per arm (at once if completions are queued),
// connect events deliver new connectors, posts need no lock.
#include <atomic>

#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

class NdkCallbacks : public ConnectedPair {
protected:

    // Posts n receives on the server and n small sends from the client. The
    // software provider moves a Send when the receiving side polls its CQ or
    // has it armed, so nothing here waits for completions.
    void Exchange(int n, ULONG flags = 0) {
        for (int i = 0; i < n; ++i) {
            NDK_SGE rs = pair_.server.region.Sge(size_t(i) * 256, 256);
            ASSERT_EQ(pair_.server.qp->Dispatch->NdkReceive(pair_.server.qp, nullptr, &rs, 1), STATUS_SUCCESS);
        }
        for (int i = 0; i < n; ++i) {
            NDK_SGE ss = pair_.client.region.Sge(0, 32);
            ASSERT_EQ(pair_.client.qp->Dispatch->NdkSend(pair_.client.qp, nullptr, &ss, 1, flags), STATUS_SUCCESS);
        }
    }
    // Reaps n receive completions on the server and the n sends on the client.
    void Reap(int n) {
        for (int i = 0; i < n; ++i) ASSERT_EQ(pair_.server.Next().Status, STATUS_SUCCESS);
        for (int i = 0; i < n; ++i) ASSERT_EQ(pair_.client.Next().Status, STATUS_SUCCESS);
    }
    // Waits for the client's n sends (the server's CQ must be armed or polled).
    void SendsDone(int n) {
        for (int i = 0; i < n; ++i) ASSERT_EQ(pair_.client.Next().Status, STATUS_SUCCESS);
    }
    void Arm(ULONG type) { pair_.server.cq->Dispatch->NdkArmCq(pair_.server.cq, type); }
    static void Settle() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }
};

}  // namespace

TEST_F(NdkCallbacks, PendingRequestsAnswerOnceOnTheAdapterThread) {
    NDK_MR *mr = nullptr;
    ASSERT_EQ(pair_.server.pd->Dispatch->NdkCreateMr(pair_.server.pd, FALSE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    std::vector<char> buffer(4096);
    MDL mdl;
    MmInitializeMdl(&mdl, buffer.data(), buffer.size());
    Completion c;
    ASSERT_EQ(mr->Dispatch->NdkRegisterMr(mr, &mdl, buffer.size(), 0, Completion::Request, &c), STATUS_PENDING);
    ASSERT_TRUE(c.Wait());
    Settle();
    EXPECT_EQ(c.Count(), 1);
    EXPECT_EQ(c.status, STATUS_SUCCESS);
    EXPECT_NE(c.thread, std::this_thread::get_id());
    // Inline error: no callback, ever.
    Completion none;
    EXPECT_EQ(mr->Dispatch->NdkRegisterMr(mr, nullptr, 1, 0, Completion::Request, &none), STATUS_INVALID_PARAMETER);
    EXPECT_TRUE(Closes(Close(mr)));
    Settle();
    EXPECT_EQ(none.Count(), 0);
}

TEST_F(NdkCallbacks, CqNotificationFiresOncePerArm) {
    Completion &n = pair_.server.notified;
    Arm(NDK_CQ_NOTIFY_ANY);
    Exchange(3);
    ASSERT_TRUE(n.Wait(1));
    Settle();
    EXPECT_EQ(n.Count(), 1);  // three completions, one arm: one callback
    EXPECT_EQ(n.status, STATUS_SUCCESS);
    EXPECT_NE(n.thread, std::this_thread::get_id());
    Reap(3);
    Exchange(2);  // not armed: nothing
    Settle();
    EXPECT_EQ(n.Count(), 1);
    // Arming with those two still queued (and never notified) fires at once.
    Arm(NDK_CQ_NOTIFY_ANY);
    ASSERT_TRUE(n.Wait(2));
    Reap(2);
    Settle();
    EXPECT_EQ(n.Count(), 2);
}

TEST_F(NdkCallbacks, ArmWithCompletionsAlreadyQueuedFiresAtOnce) {
    Completion &n = pair_.server.notified;
    // A SOLICITED arm makes the provider deliver the unsolicited receive into
    // the CQ without notifying: the entry is then queued and not yet notified.
    Arm(NDK_CQ_NOTIFY_SOLICITED);
    Exchange(1);
    SendsDone(1);
    Settle();
    EXPECT_EQ(n.Count(), 0);
    Arm(NDK_CQ_NOTIFY_ANY);  // nothing new will happen: it must fire because of the queued entry
    ASSERT_TRUE(n.Wait(1, std::chrono::seconds(2)));
    Settle();
    EXPECT_EQ(n.Count(), 1);
    NDK_RESULT r[2];
    EXPECT_EQ(pair_.server.cq->Dispatch->NdkGetCqResults(pair_.server.cq, r, 2), 1u);
}

TEST_F(NdkCallbacks, ArmsBeforeAnEventMergeIntoOneCallback) {
    Completion &n = pair_.server.notified;
    Arm(NDK_CQ_NOTIFY_SOLICITED);
    Arm(NDK_CQ_NOTIFY_ANY);  // ANY dominates
    Arm(NDK_CQ_NOTIFY_ANY);
    Exchange(1);
    ASSERT_TRUE(n.Wait(1));
    Settle();
    EXPECT_EQ(n.Count(), 1);
    Reap(1);
}

TEST_F(NdkCallbacks, SolicitedAndErrorArms) {
    Completion &n = pair_.server.notified;
    Arm(NDK_CQ_NOTIFY_SOLICITED);
    Exchange(1);  // not solicited
    SendsDone(1);
    Settle();
    EXPECT_EQ(n.Count(), 0);
    Exchange(1, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT);
    ASSERT_TRUE(n.Wait(1));
    for (int i = 0; i < 2; ++i) ASSERT_EQ(pair_.server.Next().Status, STATUS_SUCCESS);
    SendsDone(1);
    // ERRORS: successes do not fire, a failed request does.
    Completion &cn = pair_.client.notified;
    pair_.client.cq->Dispatch->NdkArmCq(pair_.client.cq, NDK_CQ_NOTIFY_ERRORS);
    NDK_SGE sge = pair_.client.region.Sge(0, 64);
    const UINT32 token = pair_.server.region.mr->Dispatch->NdkGetRemoteTokenFromMr(pair_.server.region.mr);
    ASSERT_EQ(pair_.client.qp->Dispatch->NdkRead(pair_.client.qp, nullptr, &sge, 1, pair_.server.region.Address(),
                                                 token, 0),
              STATUS_SUCCESS);
    Settle();
    EXPECT_EQ(cn.Count(), 0);
    ASSERT_EQ(pair_.client.Next().Status, STATUS_SUCCESS);
    ASSERT_EQ(pair_.client.qp->Dispatch->NdkRead(pair_.client.qp, nullptr, &sge, 1, pair_.server.region.Address(),
                                                 token ^ 0x5A5A0000, 0),
              STATUS_SUCCESS);
    ASSERT_TRUE(cn.Wait(1));
    EXPECT_EQ(pair_.client.Next().Status, STATUS_ACCESS_VIOLATION);
}

TEST(NdkConnectEvents, EachConnectDeliversANewConnector) {
    Pair pair;
    ASSERT_TRUE(pair.Open());
    constexpr int kClients = 3;
    std::vector<Side> clients(kClients);
    std::vector<Completion> connected(kClients);
    for (int i = 0; i < kClients; ++i) {
        ASSERT_TRUE(clients[i].Create(pair.adapter, 4096, 4));
        sockaddr_in src = Loopback(), dst = Loopback(pair.port);
        NDK_CONNECTOR *c = clients[i].connector;
        NTSTATUS s = c->Dispatch->NdkConnect(c, clients[i].qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 1, 1,
                                             nullptr, 0, Completion::Request, &connected[i]);
        ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS);
    }
    std::vector<NDK_CONNECTOR *> delivered;
    for (int i = 0; i < kClients; ++i) {
        NDK_CONNECTOR *c = pair.NextIncoming();
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->Header.ObjectType, NdkObjectTypeConnector);
        EXPECT_EQ(c->Header.Version.Minor, 2);
        for (NDK_CONNECTOR *d : delivered) EXPECT_NE(c, d);
        delivered.push_back(c);
        EXPECT_EQ(c->Dispatch->NdkReject(c, nullptr, 0), STATUS_SUCCESS);
    }
    for (int i = 0; i < kClients; ++i) EXPECT_EQ(Finish(STATUS_PENDING, connected[i]), STATUS_CONNECTION_REFUSED);
    for (NDK_CONNECTOR *c : delivered) EXPECT_EQ(Close(c), STATUS_SUCCESS);
    for (Side &s : clients) s.Release();
    pair.Release();
}

// NdkControlCqInterruptModeration: one callback per `count` completions
// under a steady stream, every completion delivered once.
TEST_F(NdkCallbacks, InterruptModerationByCountOneCallbackPerThatManyCompletions) {
    constexpr int kMessages = 48, kCount = 8;
    NDK_CQ *cq = pair_.server.cq;
    Completion &n = pair_.server.notified;
    ASSERT_EQ(cq->Dispatch->NdkControlCqInterruptModeration(cq, MAXULONG, kCount), STATUS_SUCCESS);
    for (int i = 0; i < kMessages; ++i) {
        NDK_SGE rs = pair_.server.region.Sge(size_t(i) * 256, 256);
        ASSERT_EQ(pair_.server.qp->Dispatch->NdkReceive(pair_.server.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    }
    Arm(NDK_CQ_NOTIFY_ANY);
    int received = 0;
    for (int k = 1; k <= kMessages; ++k) {
        NDK_SGE ss = pair_.client.region.Sge(0, 32);
        ASSERT_EQ(pair_.client.qp->Dispatch->NdkSend(pair_.client.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
        SendsDone(1);
        if (k == kCount - 1) {  // one short of the count: no callback yet
            Settle();
            EXPECT_EQ(n.Count(), 0);
        }
        if (k % kCount) continue;
        ASSERT_TRUE(n.Wait(k / kCount));
        NDK_RESULT r[kMessages];
        const ULONG got = cq->Dispatch->NdkGetCqResults(cq, r, kMessages);
        EXPECT_EQ(got, ULONG(kCount));
        for (ULONG i = 0; i < got; ++i) EXPECT_EQ(r[i].Status, STATUS_SUCCESS);
        received += static_cast<int>(got);
        Arm(NDK_CQ_NOTIFY_ANY);
    }
    EXPECT_EQ(received, kMessages);
    Settle();
    EXPECT_EQ(n.Count(), kMessages / kCount);  // 6 callbacks for 48 completions, the last arm still waiting
}

// ... and by time: a lone completion is notified once the interval is over.
TEST_F(NdkCallbacks, InterruptModerationByTimeBoundsTheDelay) {
    constexpr auto kInterval = std::chrono::milliseconds(200);
    NDK_CQ *cq = pair_.server.cq;
    Completion &n = pair_.server.notified;
    ASSERT_EQ(cq->Dispatch->NdkControlCqInterruptModeration(cq, static_cast<ULONG>(kInterval.count() * 1000), 16),
              STATUS_SUCCESS);
    Arm(NDK_CQ_NOTIFY_ANY);
    const auto t0 = Clock::now();
    Exchange(1);
    ASSERT_TRUE(n.Wait(1, std::chrono::seconds(5)));
    const auto waited = Clock::now() - t0;
    EXPECT_GE(waited, kInterval);
    EXPECT_LT(waited, std::chrono::seconds(4));
    Reap(1);
    // Off again: the next arm fires on the first completion.
    ASSERT_EQ(cq->Dispatch->NdkControlCqInterruptModeration(cq, 0, 0), STATUS_SUCCESS);
    Arm(NDK_CQ_NOTIFY_ANY);
    const auto t1 = Clock::now();
    Exchange(1);
    ASSERT_TRUE(n.Wait(2, std::chrono::seconds(5)));
    EXPECT_LT(Clock::now() - t1, kInterval);
    Reap(1);
}

TEST_F(NdkCallbacks, SendAndReceivePostsFromTwoThreadsWithoutLocks) {
    // NDK consumers serialise posts per queue, not per QP: on each side one
    // thread posts the receives and another the sends, at the same time, with
    // no lock; this thread reaps both CQs.
    constexpr int kCount = 500, kWindow = 32;
    Side *sides[2] = {&pair_.client, &pair_.server};
    std::atomic<int> reaped[2] = {0, 0}, failures{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 2; ++k) {
        Side *side = sides[k];
        threads.emplace_back([&, side, k] {  // receives, at most kWindow ahead of the reaper
            for (int i = 0; i < kCount; ++i) {
                while (i - reaped[k].load() >= kWindow) std::this_thread::yield();
                NDK_SGE rs = side->region.Sge(size_t(i % kWindow) * 64, 64);
                if (side->qp->Dispatch->NdkReceive(side->qp, nullptr, &rs, 1) != STATUS_SUCCESS) ++failures;
            }
        });
        threads.emplace_back([&, side] {  // sends (silent: only failures reach the CQ)
            for (int i = 0; i < kCount; ++i) {
                NDK_SGE ss = side->region.Sge(65536, 8);
                NTSTATUS st;
                while ((st = side->qp->Dispatch->NdkSend(side->qp, nullptr, &ss, 1, NDK_OP_FLAG_SILENT_SUCCESS)) ==
                       STATUS_NO_MORE_ENTRIES)
                    std::this_thread::yield();
                if (st != STATUS_SUCCESS) ++failures;
            }
        });
    }
    auto deadline = Clock::now() + std::chrono::seconds(60);
    while ((reaped[0].load() < kCount || reaped[1].load() < kCount) && Clock::now() < deadline && !failures.load()) {
        for (int k = 0; k < 2; ++k) {
            NDK_RESULT_EX r[16];
            ULONG n = sides[k]->cq->Dispatch->NdkGetCqResultsEx(sides[k]->cq, r, 16);
            for (ULONG i = 0; i < n; ++i)
                if (r[i].Status != STATUS_SUCCESS || r[i].Type != NdkOperationTypeReceive) ++failures;
            reaped[k] += static_cast<int>(n);
        }
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(reaped[0].load(), kCount);
    EXPECT_EQ(reaped[1].load(), kCount);
    if (failures.load() || reaped[0].load() < kCount || reaped[1].load() < kCount) {
        reaped[0] = reaped[1] = kCount * 2;  // release the posting threads
        pair_.client.qp->Dispatch->NdkFlush(pair_.client.qp);
        pair_.server.qp->Dispatch->NdkFlush(pair_.server.qp);
    }
    for (std::thread &t : threads) t.join();
}
