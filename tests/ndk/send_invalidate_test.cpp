// NdkSendAndInvalidate: a Send that also invalidates a token of the peer's
// (RFC 5040's Send with Invalidate), as SMB Direct ends an RDMA transfer.
// The receiver's completion is NdkOperationTypeReceiveAndInvalidate with the
// token; from then on the token gives the sender nothing, and the memory can
// be registered again. A token the receiver may not invalidate (a region's,
// a window bound through another connection, none at all) invalidates
// nothing and fails the Send with STATUS_ACCESS_VIOLATION.
// ctest runs these over shared memory, the copy path and TCP.
#include <cstring>

#include "fast_register_util.h"

using namespace ndk_test;

namespace {

// Past every path's single-message size: moved by cross-memory attach, in
// ring fragments on the copy path, in several FPDUs over TCP.
constexpr size_t kLarge = 64 * 1024;

class NdkSendInvalidate : public NdkFastRegister {
protected:
    void SetUp() override {
        NdkFastRegister::SetUp();
        Side &s = pair_.server;
        rs_ = s.region.Sge(0, kLarge);
        ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs_, &rs_, 1), STATUS_SUCCESS);
    }
    // The client's SendAndInvalidate of `token` with `n` bytes; its completion.
    NDK_RESULT_EX Send(UINT32 token, ULONG flags = 0, size_t n = 16) {
        Side &c = pair_.client;
        for (size_t i = 0; i < n; ++i) c.region.bytes[i] = static_cast<char>(0x40 + i * 7 + (i >> 9));
        ss_ = c.region.Sge(0, n);
        EXPECT_EQ(c.qp->Dispatch->NdkSendAndInvalidate(c.qp, &ss_, &ss_, 1, flags, token), STATUS_SUCCESS);
        return c.Next();
    }
    // The server's receive, which the Send filled.
    void ExpectInvalidatingReceive(UINT32 token, size_t n = 16) {
        NDK_RESULT_EX r = pair_.server.Next();
        ASSERT_EQ(r.Status, STATUS_SUCCESS);
        EXPECT_EQ(r.Type, NdkOperationTypeReceiveAndInvalidate);
        EXPECT_EQ(r.TypeSpecificCompletionOutput, token);
        EXPECT_EQ(r.BytesTransferred, n);
        EXPECT_EQ(r.RequestContext, &rs_);
        EXPECT_EQ(r.QPContext, &pair_.server);
        EXPECT_EQ(std::memcmp(pair_.server.region.bytes.data(), pair_.client.region.bytes.data(), n), 0);
    }
    // An NdkDeregisterMr's final status.
    static NTSTATUS Deregister(NDK_MR *mr) {
        Completion done;
        return Finish(mr->Dispatch->NdkDeregisterMr(mr, Completion::Request, &done), done);
    }

    NDK_SGE rs_{}, ss_{};
};

}  // namespace

TEST_F(NdkSendInvalidate, TheAdapterSaysItCan) {
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    ASSERT_EQ(pair_.adapter->Dispatch->NdkQueryAdapterInfo(pair_.adapter, &info, &size), STATUS_SUCCESS);
    EXPECT_GE(info.FRMRPageCount, 1u);  // SendAndInvalidate's targets are fast-registered regions
}

TEST_F(NdkSendInvalidate, AFastRegisteredRegionIsInvalidatedByThePeersSend) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    const UINT32 token = Token();
    Fill(32, 2);
    ASSERT_EQ(Write(base_, token, 32), STATUS_SUCCESS);  // reachable before
    std::memset(mem_.p, 0, 32);
    NDK_RESULT_EX sent = Send(token, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT);
    EXPECT_EQ(sent.Status, STATUS_SUCCESS);
    EXPECT_EQ(sent.Type, NdkOperationTypeSend);  // the sender's side is a Send
    EXPECT_EQ(sent.RequestContext, &ss_);
    ExpectInvalidatingReceive(token);
    // Dead from the receive on: the Write fails and nothing lands.
    EXPECT_EQ(Write(base_, token, 32), STATUS_ACCESS_VIOLATION);
    for (size_t i = 0; i < kPage; ++i) ASSERT_EQ(mem_.p[i], 0) << "written after the invalidation, at " << i;
}

TEST_F(NdkSendInvalidate, ALargeSendInvalidatesOnceItIsPlaced) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    const UINT32 token = Token();
    EXPECT_EQ(Send(token, 0, kLarge).Status, STATUS_SUCCESS);
    ExpectInvalidatingReceive(token, kLarge);
    Fill(32, 2);
    EXPECT_EQ(Write(base_, token, 32), STATUS_ACCESS_VIOLATION);
    EXPECT_EQ(mem_.p[0], 0);
}

TEST_F(NdkSendInvalidate, TheInvalidatedRegionIsRegisteredAgain) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    const UINT32 first = Token();
    ASSERT_EQ(Send(first).Status, STATUS_SUCCESS);
    ExpectInvalidatingReceive(first);
    ASSERT_EQ(Register(*lam_, kPage, 0x50000), STATUS_SUCCESS) << "still registered after the peer invalidated it";
    EXPECT_NE(Token(), first);
    Fill(100, 3);
    ASSERT_EQ(Write(base_ + 10, Token(), 100), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(mem_.p + 10, pair_.client.region.bytes.data(), 100), 0);
}

// A window bound on the server, invalidated by the client's Send; the
// receive is taken by NdkGetCqResultsEx, or by plain NdkGetCqResults, which
// still returns it (NDKPI), as a receive.
TEST_F(NdkSendInvalidate, AWindowIsInvalidatedByThePeersSend) {
    for (bool plain : {false, true}) {
        SCOPED_TRACE(plain ? "NdkGetCqResults" : "NdkGetCqResultsEx");
        Side &s = pair_.server;
        NDK_MW *mw = s.BindWindow(4096);
        ASSERT_NE(mw, nullptr);
        const UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
        ASSERT_EQ(Send(token).Status, STATUS_SUCCESS);
        if (plain) {
            NDK_RESULT r{};
            const auto deadline = Clock::now() + kWait;
            while (s.cq->Dispatch->NdkGetCqResults(s.cq, &r, 1) == 0 && Clock::now() < deadline)
                std::this_thread::yield();
            EXPECT_EQ(r.Status, STATUS_SUCCESS);
            EXPECT_EQ(r.BytesTransferred, 16u);
            EXPECT_EQ(r.RequestContext, &rs_);
        } else {
            ExpectInvalidatingReceive(token);
        }
        // The window no longer holds its region: the region deregisters (a
        // bound window would make that STATUS_DEVICE_BUSY), and registers again.
        EXPECT_EQ(Deregister(s.region.mr), STATUS_SUCCESS);
        EXPECT_EQ(Close(mw), STATUS_SUCCESS);
        if (!plain) {
            s.region.Release();
            ASSERT_TRUE(s.region.Register(s.pd, 1 << 20));
            rs_ = s.region.Sge(0, kLarge);
            ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs_, &rs_, 1), STATUS_SUCCESS);
        }
    }
}

// A window bound through another connection (here the client's own) is not
// the receiver's to invalidate: the Send fails, the receive fails, and the
// window stays bound.
TEST_F(NdkSendInvalidate, AWindowOfAnotherConnectionIsLeftAlone) {
    Side &c = pair_.client;
    NDK_MW *mw = c.BindWindow(4096);
    ASSERT_NE(mw, nullptr);
    EXPECT_EQ(Send(mw->Dispatch->NdkGetRemoteTokenFromMw(mw)).Status, STATUS_ACCESS_VIOLATION);
    NDK_RESULT_EX r = pair_.server.Next();
    EXPECT_EQ(r.RequestContext, &rs_);
    EXPECT_NE(r.Status, STATUS_SUCCESS);
    EXPECT_NE(r.Status, STATUS_IO_TIMEOUT);
    EXPECT_NE(r.Type, NdkOperationTypeReceiveAndInvalidate);
    EXPECT_EQ(Deregister(c.region.mr), STATUS_DEVICE_BUSY) << "the window was unbound";
    EXPECT_EQ(Close(mw), STATUS_SUCCESS);
}

// A registered region's token, and a token nothing has: refused, and the
// region is still registered (its Deregister works).
TEST_F(NdkSendInvalidate, ARegionsTokenIsRefused) {
    Side &s = pair_.server;
    EXPECT_EQ(Send(s.region.mr->Dispatch->NdkGetRemoteTokenFromMr(s.region.mr)).Status, STATUS_ACCESS_VIOLATION);
    NDK_RESULT_EX r = s.Next();
    EXPECT_NE(r.Status, STATUS_SUCCESS);
    EXPECT_NE(r.Status, STATUS_IO_TIMEOUT);
    EXPECT_NE(r.Type, NdkOperationTypeReceiveAndInvalidate);
    EXPECT_EQ(Deregister(s.region.mr), STATUS_SUCCESS);
}

TEST_F(NdkSendInvalidate, ATokenNothingHasIsRefused) {
    EXPECT_EQ(Send(0x5a5a5a5au).Status, STATUS_ACCESS_VIOLATION);
    NDK_RESULT_EX r = pair_.server.Next();
    EXPECT_NE(r.Status, STATUS_SUCCESS);
    EXPECT_NE(r.Status, STATUS_IO_TIMEOUT);
    EXPECT_NE(r.Type, NdkOperationTypeReceiveAndInvalidate);
}
