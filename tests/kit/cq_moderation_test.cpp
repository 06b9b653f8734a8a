// A kit CQ's interrupt moderation (opennd/cq_moderation.h): a satisfied
// Notify waits for the count or the interval, an error does not wait, and
// no entry is lost. Driven by the loopback QP, whose Sends land in its own
// Receives (two entries per exchange, at once).
#include <gtest/gtest.h>

#include <chrono>

#include "loopback_cq_test.h"
#include "opennd/cq_moderation.h"

using namespace testing_support;

namespace {

constexpr ULONG kNoLimit = 0xFFFFFFFF;

class CqModeration : public LoopbackCqTest {
protected:
    void SetUp() override {
        LoopbackCqTest::SetUp();
        ASSERT_EQ(cq->QueryInterface(IID_IOpenNdCqModeration, reinterpret_cast<void **>(&mod)), S_OK);
    }
    void TearDown() override {
        if (mod) mod->Release();
        LoopbackCqTest::TearDown();
    }
    IOpenNdCqModeration *mod = nullptr;
};

TEST_F(CqModeration, TheAdapterSaysSo) {
    ND2_ADAPTER_INFO info{};
    info.InfoVersion = ND_VERSION_2;
    ULONG size = sizeof info;
    ASSERT_EQ(adapter->Query(&info, &size), ND_SUCCESS);
    EXPECT_TRUE(info.AdapterFlags & ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED);
}

TEST_F(CqModeration, LimitsThatCouldWaitForeverAreRefused) {
    EXPECT_EQ(mod->Moderate(kNoLimit, kNoLimit), ND_INVALID_PARAMETER_MIX);
    EXPECT_EQ(mod->Moderate(kNoLimit, 1u << 20), ND_INVALID_PARAMETER_MIX);  // more than the CQ holds
    EXPECT_EQ(mod->Moderate(kNoLimit, 4), ND_SUCCESS);
    EXPECT_EQ(mod->Moderate(1000, kNoLimit), ND_SUCCESS);
    EXPECT_EQ(mod->Moderate(0, kNoLimit), ND_SUCCESS);  // off
}

TEST_F(CqModeration, ByCountTheNotifyWaitsForThatManyEntries) {
    ASSERT_EQ(mod->Moderate(kNoLimit, 4), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    Exchange();  // 2 entries
    EXPECT_FALSE(Completed(ov));
    EXPECT_TRUE(PortIsEmpty());
    Exchange();  // 4
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(cq->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
    EXPECT_EQ(Drain(), 4u);  // none lost, none twice
}

TEST_F(CqModeration, ANotifyArmedWithTheCountAlreadyQueuedFiresAtOnce) {
    ASSERT_EQ(mod->Moderate(kNoLimit, 2), ND_SUCCESS);
    Exchange();
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(Drain(), 2u);
}

TEST_F(CqModeration, AnErrorIsNeverHeldBack) {
    ASSERT_EQ(mod->Moderate(kNoLimit, 8), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    ND2_SGE rsge{rbuf, sizeof rbuf, 0};
    ASSERT_EQ(qp->Receive(nullptr, &rsge, 1), ND_SUCCESS);
    ASSERT_EQ(qp->Flush(), ND_SUCCESS);  // one entry, ND_CANCELED
    EXPECT_EQ(NextPacket(), &ov);
    ND2_RESULT r{};
    ASSERT_EQ(cq->GetResults(&r, 1), 1u);
    EXPECT_EQ(r.Status, ND_CANCELED);
}

TEST_F(CqModeration, ByTimeTheNotifyFiresOnceTheIntervalIsOver) {
    constexpr auto kInterval = std::chrono::milliseconds(100);
    ASSERT_EQ(mod->Moderate(static_cast<ULONG>(kInterval.count() * 1000), kNoLimit), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    const auto t0 = std::chrono::steady_clock::now();
    Exchange();
    EXPECT_EQ(NextPacket(), &ov);  // nothing more comes: the CQ's timer fires it
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, kInterval);
    EXPECT_LT(waited, std::chrono::seconds(4));
    EXPECT_EQ(Drain(), 2u);
}

TEST_F(CqModeration, TurnedOffAWaitingNotifyFiresAtOnce) {
    ASSERT_EQ(mod->Moderate(kNoLimit, 8), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    Exchange();
    EXPECT_TRUE(PortIsEmpty());
    ASSERT_EQ(mod->Moderate(0, 0), ND_SUCCESS);
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(Drain(), 2u);
}

TEST_F(CqModeration, EntriesTakenBeforeTheCountDoNotCountTowardsIt) {
    ASSERT_EQ(mod->Moderate(kNoLimit, 4), ND_SUCCESS);
    OVERLAPPED ov{};
    ASSERT_EQ(cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);
    Exchange();
    EXPECT_EQ(Drain(), 2u);  // polled while armed: taken, not notified
    Exchange();
    EXPECT_TRUE(PortIsEmpty());  // 2 queued, not 4
    Exchange();
    EXPECT_EQ(NextPacket(), &ov);
    EXPECT_EQ(Drain(), 4u);
}

}  // namespace
