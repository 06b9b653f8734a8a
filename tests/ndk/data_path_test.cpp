// QP dispatch functions over a connection (both software-provider data
// paths: small Sends copied through the ring, large ones and RDMA moved by
// cross-memory attach).
#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

using NdkDataPath = ConnectedPair;

void Fill(std::vector<char> &bytes, size_t n, int seed) {
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(seed + i * 31 + (i >> 8));
}

}  // namespace

TEST_F(NdkDataPath, SendReceiveAllSizes) {
    Side &c = pair_.client, &s = pair_.server;
    for (size_t size : {size_t(0), size_t(1), size_t(64), size_t(4096), size_t(4097), size_t(65536), size_t(1) << 20}) {
        NDK_SGE rs = s.region.Sge();
        ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs, &rs, 1), STATUS_SUCCESS);
        Fill(c.region.bytes, size, static_cast<int>(size));
        NDK_SGE ss = c.region.Sge(0, size);
        ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, &ss, &ss, size ? 1 : 0, 0), STATUS_SUCCESS);
        NDK_RESULT_EX received = s.Next();  // the receiver's poll moves the data
        NDK_RESULT_EX sent = c.Next();
        ASSERT_EQ(sent.Status, STATUS_SUCCESS) << size;
        EXPECT_EQ(sent.Type, NdkOperationTypeSend);
        EXPECT_EQ(sent.RequestContext, &ss);
        EXPECT_EQ(sent.QPContext, &c);
        ASSERT_EQ(received.Status, STATUS_SUCCESS) << size;
        EXPECT_EQ(received.Type, NdkOperationTypeReceive);
        EXPECT_EQ(received.BytesTransferred, size);
        EXPECT_EQ(received.RequestContext, &rs);
        EXPECT_EQ(received.QPContext, &s);
        EXPECT_EQ(std::memcmp(s.region.bytes.data(), c.region.bytes.data(), size), 0) << size;
    }
    // INLINE (small) and DEFER (a hint) are accepted; plain NdkGetCqResults.
    NDK_SGE rs = s.region.Sge();
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss = c.region.Sge(0, 16);
    ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, nullptr, &ss, 1, NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    NDK_RESULT r{};
    auto deadline = Clock::now() + kWait;
    while (s.cq->Dispatch->NdkGetCqResults(s.cq, &r, 1) == 0 && Clock::now() < deadline) std::this_thread::yield();
    EXPECT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.BytesTransferred, 16u);
    EXPECT_EQ(c.Next().Status, STATUS_SUCCESS);
}

TEST_F(NdkDataPath, WriteAndReadThroughTokens) {
    Side &c = pair_.client, &s = pair_.server;
    const UINT32 token = s.region.mr->Dispatch->NdkGetRemoteTokenFromMr(s.region.mr);
    for (size_t size : {size_t(8), size_t(4096), size_t(1) << 20}) {
        Fill(c.region.bytes, size, 7);
        NDK_SGE ws = c.region.Sge(0, size);
        ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, &ws, &ws, 1, s.region.Address(), token, 0), STATUS_SUCCESS);
        NDK_RESULT_EX w = c.Next();
        ASSERT_EQ(w.Status, STATUS_SUCCESS);
        EXPECT_EQ(w.Type, NdkOperationTypeWrite);
        EXPECT_EQ(std::memcmp(s.region.bytes.data(), c.region.bytes.data(), size), 0);
        Fill(s.region.bytes, size, 99);
        NDK_SGE rs = c.region.Sge(0, size);
        ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, &rs, &rs, 1, s.region.Address(), token, NDK_OP_FLAG_READ_FENCE),
                  STATUS_SUCCESS);
        NDK_RESULT_EX r = c.Next();
        ASSERT_EQ(r.Status, STATUS_SUCCESS);
        EXPECT_EQ(r.Type, NdkOperationTypeRead);
        EXPECT_EQ(r.RequestContext, &rs);
        EXPECT_EQ(std::memcmp(s.region.bytes.data(), c.region.bytes.data(), size), 0);
    }
    // SILENT_SUCCESS: a successful Write leaves no entry; the Read after it does.
    NDK_SGE ws = c.region.Sge(0, 64);
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1, s.region.Address(), token, NDK_OP_FLAG_SILENT_SUCCESS),
              STATUS_SUCCESS);
    NDK_SGE rs = c.region.Sge(0, 64);
    ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, &rs, &rs, 1, s.region.Address(), token, 0), STATUS_SUCCESS);
    EXPECT_EQ(c.Next().RequestContext, &rs);
}

TEST_F(NdkDataPath, UnsupportedWorkRequestsFailInlineWithoutCompletion) {
    Side &c = pair_.client, &s = pair_.server;
    NDK_SGE sge = c.region.Sge(0, 64);
    const UINT32 token = s.region.mr->Dispatch->NdkGetRemoteTokenFromMr(s.region.mr);
    const NDK_QP_DISPATCH *d = c.qp->Dispatch;
    EXPECT_EQ(d->NdkRead(c.qp, nullptr, &sge, 1, s.region.Address(), token, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_INVALID_PARAMETER)
        << "a registered MR as the sink: only a fast-register MR is invalidated (fast_register_test.cpp)";
    EXPECT_EQ(d->NdkWrite(c.qp, nullptr, &sge, 1, s.region.Address(), token, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_NOT_SUPPORTED)
        << "a Read's flag";
    EXPECT_EQ(d->NdkSend(c.qp, nullptr, &sge, 1, 0x400), STATUS_INVALID_PARAMETER);  // no such flag
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(d->NdkQueryExtension(&c.qp->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    c.ExpectQuiet(std::chrono::milliseconds(50));
}

TEST_F(NdkDataPath, BindMemoryWindowThenInvalidate) {
    Side &c = pair_.client, &s = pair_.server;
    NDK_MW *mw = nullptr;
    ASSERT_EQ(s.pd->Dispatch->NdkCreateMw(s.pd, nullptr, nullptr, &mw), STATUS_SUCCESS);
    // The window covers 64 KiB at offset 4096, remote write only.
    ASSERT_EQ(s.qp->Dispatch->NdkBind(s.qp, mw, s.region.mr, mw, s.region.bytes.data() + 4096, 65536,
                                      NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    NDK_RESULT_EX bound = s.Next();
    ASSERT_EQ(bound.Status, STATUS_SUCCESS);
    EXPECT_EQ(bound.Type, NdkOperationTypeBind);
    const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    Fill(c.region.bytes, 65536, 3);
    NDK_SGE ws = c.region.Sge(0, 65536);
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1, s.region.Address(4096), token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(s.region.bytes.data() + 4096, c.region.bytes.data(), 65536), 0);
    ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, mw, &mw->Header, 0), STATUS_SUCCESS);
    NDK_RESULT_EX invalidated = s.Next();
    EXPECT_EQ(invalidated.Status, STATUS_SUCCESS);
    EXPECT_EQ(invalidated.Type, NdkOperationTypeInvalidate);
    // The token is dead now: the Write fails in its completion.
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1, s.region.Address(4096), token, 0), STATUS_SUCCESS);
    EXPECT_EQ(c.Next().Status, STATUS_ACCESS_VIOLATION);
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
}

// MR -> MW (bind) is an antecedent link (NDK-SPEC 1): an MR closed while a
// window is bound to it pends, its memory still reachable through the window,
// until the window closes; then the MR's own token is dead too.
TEST_F(NdkDataPath, MrClosedWithABoundWindowPendsUntilTheWindowCloses) {
    Side &c = pair_.client, &s = pair_.server;
    NDK_MW *mw = s.BindWindow(65536);
    ASSERT_NE(mw, nullptr);
    const UINT32 window = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    const UINT32 region = s.region.mr->Dispatch->NdkGetRemoteTokenFromMr(s.region.mr);
    Completion mr_closed;
    EXPECT_EQ(Close(s.region.mr, &mr_closed), STATUS_PENDING);
    s.region.mr = nullptr;  // its close is under way
    Fill(c.region.bytes, 4096, 5);
    NDK_SGE ws = c.region.Sge(0, 4096);
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1, s.region.Address(), window, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(s.region.bytes.data(), c.region.bytes.data(), 4096), 0);
    EXPECT_EQ(mr_closed.Count(), 0);
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
    ASSERT_TRUE(mr_closed.Wait());
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1, s.region.Address(), region, 0), STATUS_SUCCESS);
    EXPECT_EQ(c.Next().Status, STATUS_ACCESS_VIOLATION);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(mr_closed.Count(), 1);
}

TEST_F(NdkDataPath, FlushCancelsPostedReceives) {
    Side &s = pair_.server;
    NDK_SGE rs = s.region.Sge(0, 128);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs, &rs, 1), STATUS_SUCCESS);
    s.qp->Dispatch->NdkFlush(s.qp);
    for (int i = 0; i < 3; ++i) {
        NDK_RESULT_EX r = s.Next();
        EXPECT_EQ(r.Status, STATUS_CANCELLED);
        EXPECT_EQ(r.Type, NdkOperationTypeReceive);
    }
}

TEST(NdkDataPathSrq, ReceivesLandInTheSharedReceiveQueue) {
    Pair pair;
    ASSERT_TRUE(pair.Open());
    Side &s = pair.server;
    ASSERT_EQ(Close(s.qp), STATUS_SUCCESS);
    NDK_SRQ *srq = nullptr;
    ASSERT_EQ(s.pd->Dispatch->NdkCreateSrq(s.pd, 16, 1, 0, nullptr, nullptr, nullptr, nullptr, nullptr, &srq),
              STATUS_SUCCESS);
    ASSERT_EQ(s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.cq, srq, &s, 16, 1, 0, nullptr, nullptr, &s.qp),
              STATUS_SUCCESS);
    NDK_SGE rs = s.region.Sge(0, 4096);
    ASSERT_EQ(srq->Dispatch->NdkSrqReceive(srq, srq, &rs, 1), STATUS_SUCCESS);
    ASSERT_TRUE(pair.Connect());
    Fill(pair.client.region.bytes, 3000, 5);
    NDK_SGE ss = pair.client.region.Sge(0, 3000);
    ASSERT_EQ(pair.client.qp->Dispatch->NdkSend(pair.client.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
    NDK_RESULT_EX r = s.Next();
    ASSERT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.RequestContext, srq);
    EXPECT_EQ(r.BytesTransferred, 3000u);
    EXPECT_EQ(std::memcmp(s.region.bytes.data(), pair.client.region.bytes.data(), 3000), 0);
    EXPECT_EQ(pair.client.Next().Status, STATUS_SUCCESS);
    // The SRQ closes after the QP that uses it (pending until then).
    Completion srq_closed;
    EXPECT_EQ(Close(srq, &srq_closed), STATUS_PENDING);
    pair.Release();
    EXPECT_TRUE(srq_closed.Wait());
}
