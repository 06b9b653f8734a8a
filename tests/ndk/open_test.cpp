// Opening and closing adapters (version negotiation, interface index,
// address) and the adapter dispatch table; the header as C.
#include <net/if.h>

#include "c_header_check.h"
#include "ndk_test_util.h"

using namespace ndk_test;

TEST(NdkHeader, CompilesAsCWithTheSameLayouts) {
    EXPECT_EQ(NdkCSizeOf(NDK_C_OBJECT_HEADER), sizeof(NDK_OBJECT_HEADER));
    EXPECT_EQ(NdkCSizeOf(NDK_C_RESULT), sizeof(NDK_RESULT));
    EXPECT_EQ(NdkCSizeOf(NDK_C_RESULT_EX), sizeof(NDK_RESULT_EX));
    EXPECT_EQ(NdkCSizeOf(NDK_C_SGE), sizeof(NDK_SGE));
    EXPECT_EQ(NdkCSizeOf(NDK_C_ADAPTER_INFO), sizeof(NDK_ADAPTER_INFO));
    EXPECT_EQ(NdkCSizeOf(NDK_C_QP_DISPATCH), 11 * sizeof(void *));
    EXPECT_EQ(NdkCSizeOf(NDK_C_CONNECTOR_DISPATCH), 11 * sizeof(void *));
    EXPECT_EQ(NdkCSizeOf(NDK_C_ADAPTER_DISPATCH), 9 * sizeof(void *));
    EXPECT_EQ(NdkCSizeOf(NDK_C_MDL), sizeof(MDL));
    USHORT major = 0, minor = 0;
    EXPECT_EQ(NdkCOpenClose(&major, &minor), STATUS_SUCCESS);
    EXPECT_EQ(major, 1);
    EXPECT_EQ(minor, 2);
}

TEST(NdkHeader, OpFlagsAreNdkValuesNotNd2) {
    EXPECT_EQ(NDK_OP_FLAG_ALLOW_REMOTE_WRITE, 0x30);
    EXPECT_EQ(NDK_OP_FLAG_INLINE, 0x40);
    EXPECT_NE(NDK_OP_FLAG_INLINE, 0x20);  // ND2's ND_OP_FLAG_INLINE
    EXPECT_EQ(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, 0x100);
    EXPECT_EQ(NDK_OP_FLAG_DEFER, 0x200);
}

TEST(NdkOpen, VersionNegotiationReportsTheHighestMinor) {
    for (USHORT minor : {0, 1, 2}) {
        NDK_ADAPTER *a = nullptr;
        ASSERT_EQ(OpenLoopback(&a, NDK_VERSION{1, minor}), STATUS_SUCCESS) << "1." << minor;
        EXPECT_EQ(a->Header.ObjectType, NdkObjectTypeAdapter);
        EXPECT_EQ(a->Header.Version.Major, 1);
        EXPECT_EQ(a->Header.Version.Minor, 2);
        EXPECT_EQ(Close(a), STATUS_SUCCESS);
    }
    for (NDK_VERSION bad : {NDK_VERSION{1, 3}, NDK_VERSION{2, 0}, NDK_VERSION{0, 9}}) {
        NDK_ADAPTER *a = nullptr;
        EXPECT_EQ(OpenLoopback(&a, bad), NDIS_STATUS_BAD_VERSION) << bad.Major << "." << bad.Minor;
        EXPECT_EQ(a, nullptr);
    }
}

TEST(NdkOpen, ByInterfaceIndex) {
    NET_IFINDEX lo = if_nametoindex("lo");
    ASSERT_NE(lo, 0u);
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(NdkOpenAdapter(NDK_VERSION{1, 2}, lo, &a), STATUS_SUCCESS);
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
    EXPECT_EQ(NdkOpenAdapter(NDK_VERSION{1, 2}, 0, &a), STATUS_NOT_FOUND);
    EXPECT_EQ(NdkOpenAdapter(NDK_VERSION{1, 2}, 0x7FFFFFF0, &a), STATUS_NOT_FOUND);
    EXPECT_EQ(NdkOpenAdapter(NDK_VERSION{3, 0}, lo, &a), NDIS_STATUS_BAD_VERSION);
}

TEST(NdkOpen, ByAddress) {
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    v6.sin6_addr = in6addr_loopback;
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(NdkOpenAdapterByAddress(NDK_VERSION{1, 2}, reinterpret_cast<SOCKADDR *>(&v6), sizeof v6, &a),
              STATUS_SUCCESS);
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
    sockaddr_in nowhere = Loopback();
    inet_pton(AF_INET, "192.0.2.1", &nowhere.sin_addr);  // TEST-NET-1: no provider serves it
    EXPECT_EQ(NdkOpenAdapterByAddress(NDK_VERSION{1, 2}, Sa(&nowhere), sizeof nowhere, &a), STATUS_INVALID_ADDRESS);
    EXPECT_EQ(NdkOpenAdapterByAddress(NDK_VERSION{1, 2}, nullptr, 0, &a), STATUS_INVALID_PARAMETER);
}

class NdkAdapterDispatch : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(OpenLoopback(&adapter_), STATUS_SUCCESS); }
    void TearDown() override { EXPECT_EQ(Close(adapter_), STATUS_SUCCESS); }
    NDK_ADAPTER *adapter_ = nullptr;
};

TEST_F(NdkAdapterDispatch, QueryAdapterInfo) {
    const NDK_ADAPTER_DISPATCH *d = adapter_->Dispatch;
    ULONG size = 0;
    EXPECT_EQ(d->NdkQueryAdapterInfo(adapter_, nullptr, &size), STATUS_BUFFER_TOO_SMALL);
    EXPECT_EQ(size, sizeof(NDK_ADAPTER_INFO));
    NDK_ADAPTER_INFO info{};
    size = sizeof info - 1;
    EXPECT_EQ(d->NdkQueryAdapterInfo(adapter_, &info, &size), STATUS_BUFFER_TOO_SMALL);
    size = sizeof info;
    ASSERT_EQ(d->NdkQueryAdapterInfo(adapter_, &info, &size), STATUS_SUCCESS);
    EXPECT_EQ(info.Version.Major, 1);
    EXPECT_EQ(info.Version.Minor, 2);
    EXPECT_EQ(info.VendorId, 0x4F4Eu);  // the software provider
    EXPECT_GE(info.FRMRPageCount, 16u);  // fast-register MRs (NDKPI's least)
    EXPECT_GT(info.MaxCqDepth, 0u);
    EXPECT_GT(info.MaxSrqDepth, 0u);
    EXPECT_GE(info.MaxTransferLength, 1u << 20);
    EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED);
    EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED);
    EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED);
    EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED);  // fast-register MRs
}

TEST_F(NdkAdapterDispatch, QueryExtensionOfAnUnknownInterfaceIsNotSupported) {
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{reinterpret_cast<const void *>(1)};
    EXPECT_EQ(adapter_->Dispatch->NdkQueryExtension(&adapter_->Header, &id, NDK_VERSION{1, 0}, &ext),
              STATUS_NOT_SUPPORTED);
    EXPECT_EQ(ext.Dispatch, nullptr);
}

TEST_F(NdkAdapterDispatch, CreatesReturnSuccessWithoutCallback) {
    const NDK_ADAPTER_DISPATCH *d = adapter_->Dispatch;
    Completion created;
    NDK_CQ *cq = nullptr;
    NDK_PD *pd = nullptr;
    NDK_CONNECTOR *connector = nullptr;
    NDK_LISTENER *listener = nullptr;
    EXPECT_EQ(d->NdkCreateCq(adapter_, 16, Completion::Notify, nullptr, nullptr, Completion::Create, &created, &cq),
              STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreatePd(adapter_, Completion::Create, &created, &pd), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateConnector(adapter_, Completion::Create, &created, &connector), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkCreateListener(adapter_, Pair::OnConnect, nullptr, Completion::Create, &created, &listener),
              STATUS_SUCCESS);
    ASSERT_TRUE(cq && pd && connector && listener);
    EXPECT_EQ(cq->Header.ObjectType, NdkObjectTypeCq);
    EXPECT_EQ(pd->Header.ObjectType, NdkObjectTypePd);
    EXPECT_EQ(connector->Header.ObjectType, NdkObjectTypeConnector);
    EXPECT_EQ(listener->Header.ObjectType, NdkObjectTypeListener);
    EXPECT_EQ(cq->Header.Version.Minor, 2);
    // Inline errors: nothing is created, no callback.
    NDK_CQ *bad = nullptr;
    EXPECT_EQ(d->NdkCreateCq(adapter_, 0, Completion::Notify, nullptr, nullptr, Completion::Create, &created, &bad),
              STATUS_INVALID_PARAMETER_3);
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(Close(cq), STATUS_SUCCESS);
    EXPECT_EQ(Close(pd), STATUS_SUCCESS);
    EXPECT_EQ(Close(connector), STATUS_SUCCESS);
    EXPECT_EQ(Close(listener), STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(created.Count(), 0);
}

// Their use: shared_endpoint_test.cpp.
TEST_F(NdkAdapterDispatch, SharedEndpointsAreCreatedSynchronously) {
    const NDK_ADAPTER_DISPATCH *d = adapter_->Dispatch;
    sockaddr_in a = Loopback();
    NDK_SHARED_ENDPOINT *ep = nullptr;
    EXPECT_EQ(d->NdkCreateSharedEndpoint(adapter_, nullptr, sizeof a, nullptr, nullptr, &ep),
              STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkCreateSharedEndpoint(adapter_, Sa(&a), sizeof a, nullptr, nullptr, nullptr),
              STATUS_INVALID_PARAMETER);
    sockaddr_in elsewhere = a;
    elsewhere.sin_addr.s_addr = htonl(0xC0000201);  // 192.0.2.1 (TEST-NET-1): no address of ours
    EXPECT_NE(d->NdkCreateSharedEndpoint(adapter_, Sa(&elsewhere), sizeof elsewhere, nullptr, nullptr, &ep),
              STATUS_SUCCESS);
    ASSERT_EQ(d->NdkCreateSharedEndpoint(adapter_, Sa(&a), sizeof a, nullptr, nullptr, &ep), STATUS_SUCCESS);
    ASSERT_NE(ep, nullptr);
    EXPECT_EQ(Close(ep), STATUS_SUCCESS);
}
