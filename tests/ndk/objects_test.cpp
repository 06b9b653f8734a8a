// PD, MR, MW, CQ and SRQ dispatch functions that need no connection.
#include <vector>

#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

class NdkObjects : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(OpenLoopback(&adapter_), STATUS_SUCCESS);
        ASSERT_EQ(adapter_->Dispatch->NdkCreatePd(adapter_, nullptr, nullptr, &pd_), STATUS_SUCCESS);
        ASSERT_EQ(adapter_->Dispatch->NdkCreateCq(adapter_, 64, Completion::Notify, &notified_, nullptr, nullptr,
                                                  nullptr, &cq_),
                  STATUS_SUCCESS);
    }
    void TearDown() override {
        EXPECT_EQ(Close(cq_), STATUS_SUCCESS);
        EXPECT_EQ(Close(pd_), STATUS_SUCCESS);
        EXPECT_EQ(Close(adapter_), STATUS_SUCCESS);
    }
    NDK_ADAPTER *adapter_ = nullptr;
    NDK_PD *pd_ = nullptr;
    NDK_CQ *cq_ = nullptr;
    Completion notified_;
};

}  // namespace

TEST_F(NdkObjects, PdCreatesEveryChild) {
    const NDK_PD_DISPATCH *d = pd_->Dispatch;
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(d->NdkQueryExtension(&pd_->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    NDK_MR *mr = nullptr;
    NDK_MW *mw = nullptr;
    NDK_SRQ *srq = nullptr;
    NDK_QP *qp = nullptr, *qp_srq = nullptr;
    EXPECT_EQ(d->NdkCreateMr(pd_, FALSE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateMw(pd_, nullptr, nullptr, &mw), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateSrq(pd_, 32, 2, 0, nullptr, nullptr, nullptr, nullptr, nullptr, &srq), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateQp(pd_, cq_, cq_, this, 16, 16, 2, 2, 0, nullptr, nullptr, &qp), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateQpWithSrq(pd_, cq_, cq_, srq, this, 16, 2, 0, nullptr, nullptr, &qp_srq), STATUS_SUCCESS);
    ASSERT_TRUE(mr && mw && srq && qp && qp_srq);
    EXPECT_EQ(mr->Header.ObjectType, NdkObjectTypeMr);
    EXPECT_EQ(mw->Header.ObjectType, NdkObjectTypeMw);
    EXPECT_EQ(srq->Header.ObjectType, NdkObjectTypeSrq);
    EXPECT_EQ(qp->Header.ObjectType, NdkObjectTypeQp);
    // Limits the provider refuses come back inline.
    NDK_QP *too_deep = nullptr;
    EXPECT_EQ(d->NdkCreateQp(pd_, cq_, cq_, this, 1u << 30, 16, 2, 2, 0, nullptr, nullptr, &too_deep),
              STATUS_INVALID_PARAMETER_5);
    EXPECT_EQ(Close(qp_srq), STATUS_SUCCESS);
    EXPECT_EQ(Close(qp), STATUS_SUCCESS);
    EXPECT_EQ(Close(srq), STATUS_SUCCESS);
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
    EXPECT_EQ(Close(mr), STATUS_SUCCESS);
}

TEST_F(NdkObjects, MrRegisterDeregisterAndTokens) {
    NDK_MR *mr = nullptr;
    ASSERT_EQ(pd_->Dispatch->NdkCreateMr(pd_, FALSE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    const NDK_MR_DISPATCH *d = mr->Dispatch;
    std::vector<char> buffer(3 * PAGE_SIZE);
    // The MDL describes the buffer as two chained, contiguous pieces.
    MDL first, second;
    MmInitializeMdl(&first, buffer.data(), PAGE_SIZE + 100);
    MmInitializeMdl(&second, buffer.data() + PAGE_SIZE + 100, buffer.size() - PAGE_SIZE - 100);
    first.Next = &second;
    Completion reg;
    NTSTATUS s = d->NdkRegisterMr(mr, &first, buffer.size(), NDK_MR_FLAG_ALLOW_REMOTE_WRITE, Completion::Request, &reg);
    ASSERT_EQ(s, STATUS_PENDING);  // ND2 Register completes through the port
    ASSERT_TRUE(reg.Wait());
    EXPECT_EQ(reg.status, STATUS_SUCCESS);
    EXPECT_NE(reg.thread, std::this_thread::get_id());  // never inside the call
    EXPECT_NE(d->NdkGetLocalTokenFromMr(mr), 0u);
    EXPECT_NE(d->NdkGetRemoteTokenFromMr(mr), 0u);
    // Registering again: the provider's inline error, no callback.
    Completion again;
    EXPECT_EQ(d->NdkRegisterMr(mr, &first, buffer.size(), 0, Completion::Request, &again),
              STATUS_INVALID_DEVICE_STATE);
    Completion dereg;
    EXPECT_EQ(Finish(d->NdkDeregisterMr(mr, Completion::Request, &dereg), dereg), STATUS_SUCCESS);
    // An MDL chain shorter than Length, or with a gap, or unknown flags.
    EXPECT_EQ(d->NdkRegisterMr(mr, &first, buffer.size() + 1, 0, Completion::Request, &again),
              STATUS_INVALID_PARAMETER);
    second.ByteOffset += 8;
    EXPECT_EQ(d->NdkRegisterMr(mr, &first, buffer.size(), 0, Completion::Request, &again), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkRegisterMr(mr, &first, 100, 0x40, Completion::Request, &again), STATUS_INVALID_PARAMETER);
    EXPECT_TRUE(Closes(Close(mr)));
    EXPECT_EQ(again.Count(), 0);
    EXPECT_EQ(reg.Count(), 1);
}

TEST_F(NdkObjects, MwTokenAndQueryExtension) {
    NDK_MW *mw = nullptr;
    ASSERT_EQ(pd_->Dispatch->NdkCreateMw(pd_, nullptr, nullptr, &mw), STATUS_SUCCESS);
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(mw->Dispatch->NdkQueryExtension(&mw->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    (void)mw->Dispatch->NdkGetRemoteTokenFromMw(mw);  // unbound: any value; bound: see the data path tests
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
}

TEST_F(NdkObjects, CqResizeModerationAndEmptyResults) {
    const NDK_CQ_DISPATCH *d = cq_->Dispatch;
    Completion resized;
    EXPECT_EQ(d->NdkResizeCq(cq_, 128, Completion::Request, &resized), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkResizeCq(cq_, 0, Completion::Request, &resized), STATUS_INVALID_PARAMETER);
    // Moderation (its effect: NdkCallbacks.InterruptModeration*); limits
    // that could hold a notification forever are a mix NDKPI refuses.
    EXPECT_EQ(d->NdkControlCqInterruptModeration(cq_, 10, 4), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkControlCqInterruptModeration(cq_, MAXULONG, MAXULONG), STATUS_INVALID_PARAMETER_MIX);
    EXPECT_EQ(d->NdkControlCqInterruptModeration(cq_, MAXULONG, 1u << 30), STATUS_INVALID_PARAMETER_MIX);
    EXPECT_EQ(d->NdkControlCqInterruptModeration(cq_, MAXULONG, 4), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkControlCqInterruptModeration(cq_, 0, MAXULONG), STATUS_SUCCESS);  // off
    NDK_RESULT r[4];
    NDK_RESULT_EX rx[4];
    EXPECT_EQ(d->NdkGetCqResults(cq_, r, 4), 0u);
    EXPECT_EQ(d->NdkGetCqResultsEx(cq_, rx, 4), 0u);
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(d->NdkQueryExtension(&cq_->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    d->NdkArmCq(cq_, 7);  // not a notification type: ignored
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(resized.Count(), 0);
    EXPECT_EQ(notified_.Count(), 0);
}

TEST_F(NdkObjects, SrqModifyReceiveAndNotification) {
    Completion srq_event;
    NDK_SRQ *srq = nullptr;
    // Threshold 2 with nothing queued: the notification fires at once.
    ASSERT_EQ(pd_->Dispatch->NdkCreateSrq(pd_, 16, 1, 2, Completion::Notify, &srq_event, nullptr, nullptr, nullptr,
                                          &srq),
              STATUS_SUCCESS);
    ASSERT_TRUE(srq_event.Wait());
    EXPECT_EQ(srq_event.status, STATUS_SUCCESS);
    const NDK_SRQ_DISPATCH *d = srq->Dispatch;
    Region region;
    ASSERT_TRUE(region.Register(pd_, 4096));
    NDK_SGE sge = region.Sge(0, 1024);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d->NdkSrqReceive(srq, &region, &sge, 1), STATUS_SUCCESS);
    // An SRQ takes as many SGEs as the adapter allows, whatever it was
    // created with (rounded up to the device's, as hardware does); one past
    // the adapter's limit is refused.
    NDK_ADAPTER_INFO info{};
    ULONG info_size = sizeof info;
    ASSERT_EQ(adapter_->Dispatch->NdkQueryAdapterInfo(adapter_, &info, &info_size), STATUS_SUCCESS);
    std::vector<NDK_SGE> many(info.MaxReceiveRequestSge + 1, sge);
    EXPECT_EQ(d->NdkSrqReceive(srq, &region, many.data(), info.MaxReceiveRequestSge + 1), STATUS_DATA_OVERRUN);
    EXPECT_EQ(d->NdkSrqReceive(srq, &region, many.data(), 2), STATUS_SUCCESS);  // more than it was created with
    // Disarmed until NdkModifySrq with a threshold: 4 queued >= 2, no event.
    Completion modified;
    EXPECT_EQ(d->NdkModifySrq(srq, 0, 2, Completion::Request, &modified), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkModifySrq(srq, 2, 0, Completion::Request, &modified), STATUS_BUFFER_OVERFLOW);  // 4 queued
    // Threshold above the queued count: fires again.
    EXPECT_EQ(d->NdkModifySrq(srq, 0, 8, Completion::Request, &modified), STATUS_SUCCESS);
    ASSERT_TRUE(srq_event.Wait(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(srq_event.Count(), 2);
    EXPECT_EQ(modified.Count(), 0);  // synchronous: no request callback
    EXPECT_TRUE(Closes(Close(srq)));
    region.Release();
}
