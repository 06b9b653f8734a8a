// NDK over another provider built with the provider kit: the loopback test
// provider (its QP's Sends land in its own Receives), found through a private
// catalog. Nothing in the NDK layer knows which provider it runs on.
#include "ndk_test_util.h"
#include "support/test_catalog.h"

using namespace ndk_test;

TEST(NdkOtherProvider, LoopbackProviderThroughTheCatalog) {
    testing_support::TempCatalog catalog;
    catalog.AddLoopback(10, 1);
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    ASSERT_EQ(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
    EXPECT_EQ(info.VendorId, 1u);  // the loopback provider in mode 1, not ndsoft
    EXPECT_EQ(info.FRMRPageCount, 0u);  // it has no OpenND extensions (opennd/nd_extensions.h)

    Completion notified;
    NDK_CQ *cq = nullptr;
    NDK_PD *pd = nullptr;
    NDK_QP *qp = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreateCq(a, 16, Completion::Notify, &notified, nullptr, nullptr, nullptr, &cq),
              STATUS_SUCCESS);
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    NDK_MR *fast = nullptr;
    EXPECT_EQ(pd->Dispatch->NdkCreateMr(pd, TRUE, nullptr, nullptr, &fast), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(fast, nullptr);
    sockaddr_in here = Loopback(0);
    NDK_SHARED_ENDPOINT *ep = nullptr;  // nor shared endpoints
    EXPECT_EQ(a->Dispatch->NdkCreateSharedEndpoint(a, Sa(&here), sizeof here, nullptr, nullptr, &ep),
              STATUS_NOT_SUPPORTED);
    EXPECT_EQ(ep, nullptr);
    ASSERT_EQ(pd->Dispatch->NdkCreateQp(pd, cq, cq, &notified, 4, 4, 1, 1, 0, nullptr, nullptr, &qp), STATUS_SUCCESS);
    Region region;
    ASSERT_TRUE(region.Register(pd, 4096));  // pending, then the callback

    NDK_SGE rs = region.Sge(2048, 2048), ss = region.Sge(0, 100);
    std::memset(region.bytes.data(), 0x5A, 100);
    ASSERT_EQ(qp->Dispatch->NdkReceive(qp, &rs, &rs, 1), STATUS_SUCCESS);
    cq->Dispatch->NdkArmCq(cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_EQ(qp->Dispatch->NdkSend(qp, &ss, &ss, 1, 0), STATUS_SUCCESS);
    ASSERT_TRUE(notified.Wait());
    NDK_RESULT_EX r[4];
    ASSERT_EQ(cq->Dispatch->NdkGetCqResultsEx(cq, r, 4), 2u);
    EXPECT_EQ(r[0].Type, NdkOperationTypeReceive);
    EXPECT_EQ(r[0].BytesTransferred, 100u);
    EXPECT_EQ(r[0].QPContext, &notified);
    EXPECT_EQ(r[1].Type, NdkOperationTypeSend);
    EXPECT_EQ(region.bytes[2048 + 99], 0x5A);
    // Connecting where nobody listens: the provider's refusal comes back
    // through the request's callback.
    sockaddr_in src = Loopback(), dst = Loopback(9);
    NDK_CONNECTOR *c = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreateConnector(a, nullptr, nullptr, &c), STATUS_SUCCESS);
    Completion connected;
    EXPECT_EQ(Finish(c->Dispatch->NdkConnect(c, qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 1, 1, nullptr, 0,
                                             Completion::Request, &connected),
                     connected),
              STATUS_CONNECTION_REFUSED);
    // What the provider lacks comes back as its own status.
    NDK_SGE rd = region.Sge(0, 8);
    EXPECT_EQ(qp->Dispatch->NdkRead(qp, nullptr, &rd, 1, 0, 0, 0), STATUS_NOT_SUPPORTED);
    // A listener whose connection requests never come: closing cancels them.
    NDK_LISTENER *l = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreateListener(a, Pair::OnConnect, nullptr, nullptr, nullptr, &l), STATUS_SUCCESS);
    sockaddr_in any = Loopback(7471);
    Completion listened;
    EXPECT_EQ(Finish(l->Dispatch->NdkListen(l, Sa(&any), sizeof any, Completion::Request, &listened), listened),
              STATUS_SUCCESS);
    EXPECT_TRUE(Closes(Close(l)));
    EXPECT_TRUE(Closes(Close(c)));
    EXPECT_TRUE(Closes(Close(qp)));
    region.Release();
    EXPECT_TRUE(Closes(Close(pd)));
    EXPECT_TRUE(Closes(Close(cq)));
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
}
