// NdkQueryExtension and OpenND's NDK extension (opennd/ndk_extensions.h):
// the ND2 object under each NDK object, through the dispatch tables.
#include <opennd/ndk_extensions.h>

#include <cstring>

#include "ndk_test_util.h"
#include "opennd/nd_extensions.h"

using namespace ndk_test;

namespace {

constexpr GUID kNd2 = OPENND_NDK_ND2_INTERFACE_ID;
constexpr NDK_VERSION kV10{1, 0};

// The extension's table for `header`, or nullptr.
const OPENND_NDK_ND2_DISPATCH *Nd2Table(NDK_OBJECT_HEADER *header, NDK_FN_QUERY_EXTENSION_INTERFACE query) {
    GUID id = kNd2;
    NDK_EXTENSION_INTERFACE ext{};
    if (query(header, &id, kV10, &ext) != STATUS_SUCCESS) return nullptr;
    return static_cast<const OPENND_NDK_ND2_DISPATCH *>(ext.Dispatch);
}

// The ND2 interface `iid` under `header`, with a reference, or nullptr.
template <class I>
I *Nd2(NDK_OBJECT_HEADER *header, NDK_FN_QUERY_EXTENSION_INTERFACE query, const GUID &iid) {
    const OPENND_NDK_ND2_DISPATCH *t = Nd2Table(header, query);
    if (!t) return nullptr;
    void *out = nullptr;
    if (t->GetNd2Interface(header, &iid, &out) != STATUS_SUCCESS) return nullptr;
    return static_cast<I *>(out);
}

class NdkExtension : public ConnectedPair {};

}  // namespace

TEST_F(NdkExtension, EveryObjectButAPdReachesItsNd2Object) {
    Side &c = pair_.client;
    NDK_ADAPTER *adapter = pair_.adapter;

    // Adapter: the same device as NdkQueryAdapterInfo describes.
    auto *nd_adapter = Nd2<IND2Adapter>(&adapter->Header, adapter->Dispatch->NdkQueryExtension, IID_IND2Adapter);
    ASSERT_NE(nd_adapter, nullptr);
    ND2_ADAPTER_INFO nd_info{};
    nd_info.InfoVersion = ND_VERSION_2;
    ULONG nd_size = sizeof nd_info;
    ASSERT_EQ(nd_adapter->Query(&nd_info, &nd_size), S_OK);
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    ASSERT_EQ(adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size), STATUS_SUCCESS);
    EXPECT_EQ(nd_info.MaxCompletionQueueDepth, info.MaxCqDepth);
    EXPECT_EQ(nd_info.MaxTransferLength, info.MaxTransferLength);
    // A provider's own ND2 extensions are reachable too.
    auto *ext = Nd2<IOpenNdAdapterExt>(&adapter->Header, adapter->Dispatch->NdkQueryExtension, IID_IOpenNdAdapterExt);
    ASSERT_NE(ext, nullptr);
    EXPECT_TRUE(ext->Extensions() & OPENND_EXT_FAST_REGISTER);
    ext->Release();
    nd_adapter->Release();

    // MR: the registration's tokens.
    NDK_MR *mr = c.region.mr;
    auto *region = Nd2<IND2MemoryRegion>(&mr->Header, mr->Dispatch->NdkQueryExtension, IID_IND2MemoryRegion);
    ASSERT_NE(region, nullptr);
    EXPECT_EQ(region->GetLocalToken(), mr->Dispatch->NdkGetLocalTokenFromMr(mr));
    EXPECT_EQ(region->GetRemoteToken(), mr->Dispatch->NdkGetRemoteTokenFromMr(mr));
    region->Release();

    // A fast-register MR: its window.
    NDK_MR *fast = nullptr;
    ASSERT_EQ(c.pd->Dispatch->NdkCreateMr(c.pd, TRUE, nullptr, nullptr, &fast), STATUS_SUCCESS);
    auto *fast_window = Nd2<IND2MemoryWindow>(&fast->Header, fast->Dispatch->NdkQueryExtension, IID_IND2MemoryWindow);
    ASSERT_NE(fast_window, nullptr);
    EXPECT_EQ(fast_window->GetRemoteToken(), fast->Dispatch->NdkGetRemoteTokenFromMr(fast));
    fast_window->Release();
    EXPECT_EQ(Close(fast), STATUS_SUCCESS);

    // MW: the window's token.
    NDK_MW *mw = c.BindWindow(4096);
    ASSERT_NE(mw, nullptr);
    auto *window = Nd2<IND2MemoryWindow>(&mw->Header, mw->Dispatch->NdkQueryExtension, IID_IND2MemoryWindow);
    ASSERT_NE(window, nullptr);
    EXPECT_EQ(window->GetRemoteToken(), mw->Dispatch->NdkGetRemoteTokenFromMw(mw));
    window->Release();
    EXPECT_TRUE(Closes(Close(mw)));

    // CQ (nothing queued), QP (and its extension), SRQ.
    auto *cq = Nd2<IND2CompletionQueue>(&c.cq->Header, c.cq->Dispatch->NdkQueryExtension, IID_IND2CompletionQueue);
    ASSERT_NE(cq, nullptr);
    ND2_RESULT result{};
    EXPECT_EQ(cq->GetResults(&result, 1), 0u);
    cq->Release();
    auto *qp = Nd2<IND2QueuePair>(&c.qp->Header, c.qp->Dispatch->NdkQueryExtension, IID_IND2QueuePair);
    ASSERT_NE(qp, nullptr);
    qp->Release();
    auto *qp_ext = Nd2<IOpenNdQueuePairExt>(&c.qp->Header, c.qp->Dispatch->NdkQueryExtension, IID_IOpenNdQueuePairExt);
    ASSERT_NE(qp_ext, nullptr);
    qp_ext->Release();
    NDK_SRQ *srq = nullptr;
    ASSERT_EQ(c.pd->Dispatch->NdkCreateSrq(c.pd, 16, 1, 0, nullptr, nullptr, nullptr, nullptr, nullptr, &srq),
              STATUS_SUCCESS);
    auto *nd_srq = Nd2<IND2SharedReceiveQueue>(&srq->Header, srq->Dispatch->NdkQueryExtension,
                                               IID_IND2SharedReceiveQueue);
    EXPECT_NE(nd_srq, nullptr);
    if (nd_srq) nd_srq->Release();
    EXPECT_EQ(Close(srq), STATUS_SUCCESS);

    // Connector and listener: the addresses the NDK calls report.
    auto *connector = Nd2<IND2Connector>(&c.connector->Header, c.connector->Dispatch->NdkQueryExtension,
                                         IID_IND2Connector);
    ASSERT_NE(connector, nullptr);
    sockaddr_storage nd_address{}, address{};
    ULONG nd_len = sizeof nd_address, len = sizeof address;
    ASSERT_EQ(connector->GetLocalAddress(reinterpret_cast<sockaddr *>(&nd_address), &nd_len), S_OK);
    ASSERT_EQ(c.connector->Dispatch->NdkGetLocalAddress(c.connector, reinterpret_cast<PSOCKADDR>(&address), &len),
              STATUS_SUCCESS);
    EXPECT_EQ(nd_len, len);
    EXPECT_EQ(std::memcmp(&nd_address, &address, len), 0);
    connector->Release();
    NDK_LISTENER *l = pair_.listener;
    auto *listener = Nd2<IND2Listener>(&l->Header, l->Dispatch->NdkQueryExtension, IID_IND2Listener);
    ASSERT_NE(listener, nullptr);
    sockaddr_in bound{};
    ULONG bound_len = sizeof bound;
    ASSERT_EQ(listener->GetLocalAddress(reinterpret_cast<sockaddr *>(&bound), &bound_len), S_OK);
    EXPECT_EQ(ntohs(bound.sin_port), pair_.port);
    listener->Release();

    // One table for every object type.
    EXPECT_EQ(Nd2Table(&c.qp->Header, c.qp->Dispatch->NdkQueryExtension),
              Nd2Table(&adapter->Header, adapter->Dispatch->NdkQueryExtension));
    EXPECT_EQ(Nd2Table(&l->Header, l->Dispatch->NdkQueryExtension),
              Nd2Table(&c.cq->Header, c.cq->Dispatch->NdkQueryExtension));

    // The PD has no ND2 object: no extension.
    GUID id = kNd2;
    NDK_EXTENSION_INTERFACE none{reinterpret_cast<const void *>(1)};
    EXPECT_EQ(c.pd->Dispatch->NdkQueryExtension(&c.pd->Header, &id, kV10, &none), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(none.Dispatch, nullptr);
    const OPENND_NDK_ND2_DISPATCH *t = Nd2Table(&c.qp->Header, c.qp->Dispatch->NdkQueryExtension);
    ASSERT_NE(t, nullptr);
    void *out = reinterpret_cast<void *>(1);
    EXPECT_EQ(t->GetNd2Interface(&c.pd->Header, &IID_IUnknown, &out), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(out, nullptr);
}

TEST_F(NdkExtension, AnswersOnlyForWhatItHas) {
    NDK_QP *qp = pair_.client.qp;
    NDK_FN_QUERY_EXTENSION_INTERFACE query = qp->Dispatch->NdkQueryExtension;
    GUID id = kNd2;
    NDK_EXTENSION_INTERFACE ext{reinterpret_cast<const void *>(1)};
    // Another interface, a later version (major or minor): nothing.
    GUID other = kNd2;
    other.Data4[7] ^= 0xFF;
    EXPECT_EQ(query(&qp->Header, &other, kV10, &ext), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(ext.Dispatch, nullptr);
    ext.Dispatch = reinterpret_cast<const void *>(1);
    EXPECT_EQ(query(&qp->Header, &id, NDK_VERSION{2, 0}, &ext), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(ext.Dispatch, nullptr);
    EXPECT_EQ(query(&qp->Header, &id, NDK_VERSION{1, 1}, &ext), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(query(&qp->Header, &id, NDK_VERSION{0, 9}, &ext), STATUS_NOT_SUPPORTED);
    // Null arguments.
    EXPECT_EQ(query(&qp->Header, nullptr, kV10, &ext), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(query(&qp->Header, &id, kV10, nullptr), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(query(nullptr, &id, kV10, &ext), STATUS_INVALID_PARAMETER);
    ASSERT_EQ(query(&qp->Header, &id, kV10, &ext), STATUS_SUCCESS);
    const auto *t = static_cast<const OPENND_NDK_ND2_DISPATCH *>(ext.Dispatch);
    // An interface the ND2 object does not have; null arguments.
    void *out = reinterpret_cast<void *>(1);
    EXPECT_EQ(t->GetNd2Interface(&qp->Header, &IID_IND2Listener, &out), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(t->GetNd2Interface(&qp->Header, nullptr, &out), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(t->GetNd2Interface(&qp->Header, &IID_IND2QueuePair, nullptr), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(t->GetNd2Interface(nullptr, &IID_IND2QueuePair, &out), STATUS_INVALID_PARAMETER);
}

// The reference is the caller's: the NDK object closes under it, and the
// ND2 object answers until it is released.
TEST_F(NdkExtension, TheReferenceOutlivesTheNdkObject) {
    Side &c = pair_.client;
    Region r;
    ASSERT_TRUE(r.Register(c.pd, 4096));
    auto *region = Nd2<IND2MemoryRegion>(&r.mr->Header, r.mr->Dispatch->NdkQueryExtension, IID_IND2MemoryRegion);
    ASSERT_NE(region, nullptr);
    const UINT32 token = r.mr->Dispatch->NdkGetRemoteTokenFromMr(r.mr);
    r.Release();
    EXPECT_EQ(region->GetRemoteToken(), token);
    EXPECT_EQ(region->Release(), 0u);
}

// A shared endpoint stands over the ND2 connector that holds its address.
TEST_F(NdkExtension, ASharedEndpointReachesItsConnector) {
    sockaddr_in any = Loopback(0);
    NDK_SHARED_ENDPOINT *endpoint = nullptr;
    ASSERT_EQ(pair_.adapter->Dispatch->NdkCreateSharedEndpoint(pair_.adapter, Sa(&any), sizeof any, nullptr, nullptr,
                                                               &endpoint),
              STATUS_SUCCESS);
    auto *holder = Nd2<IND2Connector>(&endpoint->Header, endpoint->Dispatch->NdkQueryExtension, IID_IND2Connector);
    ASSERT_NE(holder, nullptr);
    sockaddr_in nd_address{}, address{};
    ULONG nd_len = sizeof nd_address, len = sizeof address;
    ASSERT_EQ(holder->GetLocalAddress(reinterpret_cast<sockaddr *>(&nd_address), &nd_len), S_OK);
    ASSERT_EQ(endpoint->Dispatch->NdkGetLocalAddress(endpoint, Sa(&address), &len), STATUS_SUCCESS);
    EXPECT_NE(address.sin_port, 0);
    EXPECT_EQ(nd_address.sin_port, address.sin_port);
    holder->Release();
    EXPECT_TRUE(Closes(Close(endpoint)));
}
