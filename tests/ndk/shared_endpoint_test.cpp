// Shared endpoints (NdkCreateSharedEndpoint, NdkConnectWithSharedEndpoint,
// NdkGetLocalAddress): several connectors connect from one local address and
// port, each its own connection carrying its own data; nothing else gets the
// address while the endpoint or one of its connectors is open; the
// endpoint's close waits for its connectors'. ctest runs these over shared
// memory and TCP; tests/verbs/vm_interop.sh over ndverbs on rxe and siw.
#include <cstdlib>
#include <cstring>

#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

class NdkSharedEndpoint : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(pair_.Open());
        sockaddr_in any = Loopback(0);
        const NDK_ADAPTER_DISPATCH *d = pair_.adapter->Dispatch;
        ASSERT_EQ(d->NdkCreateSharedEndpoint(pair_.adapter, Sa(&any), sizeof any, nullptr, nullptr, &endpoint_),
                  STATUS_SUCCESS);
        ULONG len = sizeof address_;
        ASSERT_EQ(endpoint_->Dispatch->NdkGetLocalAddress(endpoint_, Sa(&address_), &len), STATUS_SUCCESS);
        ASSERT_EQ(len, sizeof address_);
        // A second listener and two more sides, for a second connection from the endpoint.
        ASSERT_EQ(d->NdkCreateListener(pair_.adapter, Pair::OnConnect, &pair_, nullptr, nullptr, &listener2_),
                  STATUS_SUCCESS);
        sockaddr_in a = Loopback();
        Completion c;
        ASSERT_EQ(Finish(listener2_->Dispatch->NdkListen(listener2_, Sa(&a), sizeof a, Completion::Request, &c), c),
                  STATUS_SUCCESS);
        len = sizeof a;
        ASSERT_EQ(listener2_->Dispatch->NdkGetLocalAddress(listener2_, Sa(&a), &len), STATUS_SUCCESS);
        port2_ = ntohs(a.sin_port);
        ASSERT_TRUE(server2_.Create(pair_.adapter) && client2_.Create(pair_.adapter));
    }
    void TearDown() override {
        // Connectors first: the endpoint's close waits for theirs.
        server2_.Release();
        client2_.Release();
        pair_.server.Release();
        pair_.client.Release();
        Close(listener2_);
        Close(endpoint_);
        pair_.Release();
    }
    static sockaddr_in LocalOf(NDK_CONNECTOR *c) {
        sockaddr_in a{};
        ULONG len = sizeof a;
        EXPECT_EQ(c->Dispatch->NdkGetLocalAddress(c, Sa(&a), &len), STATUS_SUCCESS);
        return a;
    }
    static sockaddr_in PeerOf(NDK_CONNECTOR *c) {
        sockaddr_in a{};
        ULONG len = sizeof a;
        EXPECT_EQ(c->Dispatch->NdkGetPeerAddress(c, Sa(&a), &len), STATUS_SUCCESS);
        return a;
    }
    // `n` bytes of a pattern from client to server over their connection.
    static void ExpectSendArrives(Side &client, Side &server, char seed) {
        NDK_SGE rs = server.region.Sge(0, 256);
        ASSERT_EQ(server.qp->Dispatch->NdkReceive(server.qp, &rs, &rs, 1), STATUS_SUCCESS);
        for (int i = 0; i < 256; ++i) client.region.bytes[i] = static_cast<char>(seed + i);
        NDK_SGE ss = client.region.Sge(0, 256);
        ASSERT_EQ(client.qp->Dispatch->NdkSend(client.qp, &ss, &ss, 1, 0), STATUS_SUCCESS);
        NDK_RESULT_EX r = server.Next();
        ASSERT_EQ(r.Status, STATUS_SUCCESS);
        EXPECT_EQ(r.BytesTransferred, 256u);
        EXPECT_EQ(r.QPContext, &server);
        EXPECT_EQ(std::memcmp(server.region.bytes.data(), client.region.bytes.data(), 256), 0);
        EXPECT_EQ(client.Next().Status, STATUS_SUCCESS);
    }

    Pair pair_;
    NDK_SHARED_ENDPOINT *endpoint_ = nullptr;
    sockaddr_in address_{};
    NDK_LISTENER *listener2_ = nullptr;
    uint16_t port2_ = 0;
    Side server2_, client2_;
};

}  // namespace

TEST_F(NdkSharedEndpoint, TheEndpointHasAPortAndTheAddressItWasGiven) {
    EXPECT_NE(address_.sin_port, 0) << "port 0 was not given a port";
    EXPECT_EQ(address_.sin_addr.s_addr, Loopback().sin_addr.s_addr);
    NDK_OBJECT_HEADER *h = &endpoint_->Header;
    EXPECT_EQ(h->ObjectType, NdkObjectTypeSharedEndpoint);
    sockaddr_in small{};
    ULONG len = 4;
    EXPECT_EQ(endpoint_->Dispatch->NdkGetLocalAddress(endpoint_, Sa(&small), &len), STATUS_BUFFER_TOO_SMALL);
    EXPECT_EQ(len, sizeof(sockaddr_in));
}

TEST_F(NdkSharedEndpoint, TwoConnectionsFromOneAddressCarryTheirOwnData) {
    ASSERT_TRUE(pair_.Connect(pair_.client, pair_.server, pair_.port, endpoint_));
    ASSERT_TRUE(pair_.Connect(client2_, server2_, port2_, endpoint_));
    for (NDK_CONNECTOR *c : {pair_.client.connector, client2_.connector}) {
        const sockaddr_in local = LocalOf(c);
        EXPECT_EQ(local.sin_port, address_.sin_port) << "a connector not on the endpoint's port";
        EXPECT_EQ(local.sin_addr.s_addr, address_.sin_addr.s_addr);
    }
    // The passive sides see the endpoint's port as their peer's.
    EXPECT_EQ(PeerOf(pair_.server.connector).sin_port, address_.sin_port);
    EXPECT_EQ(PeerOf(server2_.connector).sin_port, address_.sin_port);
    ExpectSendArrives(pair_.client, pair_.server, 1);
    ExpectSendArrives(client2_, server2_, 2);
    ExpectSendArrives(pair_.client, pair_.server, 3);
}

TEST_F(NdkSharedEndpoint, NothingElseGetsTheAddressWhileTheEndpointIsOpen) {
    // A connector's own source address, and a listener.
    sockaddr_in dst = Loopback(pair_.port), src = address_;
    Completion connected;
    NDK_CONNECTOR *c = pair_.client.connector;
    EXPECT_EQ(c->Dispatch->NdkConnect(c, pair_.client.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 8, 8, nullptr,
                                      0, Completion::Request, &connected),
              STATUS_SHARING_VIOLATION);
    NDK_LISTENER *l = nullptr;
    ASSERT_EQ(pair_.adapter->Dispatch->NdkCreateListener(pair_.adapter, Pair::OnConnect, &pair_, nullptr, nullptr, &l),
              STATUS_SUCCESS);
    Completion listened;
    EXPECT_NE(Finish(l->Dispatch->NdkListen(l, Sa(&src), sizeof src, Completion::Request, &listened), listened),
              STATUS_SUCCESS);
    Close(l);
    // Once the endpoint is closed (no connector used it), the address is free.
    ASSERT_EQ(Close(endpoint_), STATUS_SUCCESS);
    endpoint_ = nullptr;
    ASSERT_TRUE(pair_.Connect(pair_.client, pair_.server, pair_.port));  // (its own, fresh, address)
    NDK_SHARED_ENDPOINT *again = nullptr;
    EXPECT_EQ(pair_.adapter->Dispatch->NdkCreateSharedEndpoint(pair_.adapter, Sa(&src), sizeof src, nullptr, nullptr,
                                                              &again),
              STATUS_SUCCESS)
        << "the address stayed taken after its endpoint closed";
    Close(again);
}

// A shared endpoint is held by every connector that uses it.
TEST_F(NdkSharedEndpoint, TheEndpointsCloseWaitsForItsConnectors) {
    ASSERT_TRUE(pair_.Connect(pair_.client, pair_.server, pair_.port, endpoint_));
    Completion closed;
    ASSERT_EQ(Close(endpoint_, &closed), STATUS_PENDING);
    endpoint_ = nullptr;
    EXPECT_EQ(closed.Count(), 0);
    ExpectSendArrives(pair_.client, pair_.server, 4);  // the connection is unaffected
    Close(pair_.client.connector);
    pair_.client.connector = nullptr;
    EXPECT_TRUE(closed.Wait()) << "the endpoint's close did not complete after its connector's";
}

// The same endpoint given twice to one connector (after a refused attempt it
// stays bound); a connector already bound elsewhere cannot take it.
TEST_F(NdkSharedEndpoint, AConnectorBoundElsewhereCannotUseTheEndpoint) {
    ASSERT_TRUE(pair_.Connect(pair_.client, pair_.server, pair_.port));  // bound to an address of its own
    sockaddr_in dst = Loopback(port2_);
    Completion connected;
    NDK_CONNECTOR *c = pair_.client.connector;
    EXPECT_EQ(c->Dispatch->NdkConnectWithSharedEndpoint(c, client2_.qp, endpoint_, Sa(&dst), sizeof dst, 8, 8,
                                                        nullptr, 0, Completion::Request, &connected),
              STATUS_SHARING_VIOLATION);
    EXPECT_EQ(c->Dispatch->NdkConnectWithSharedEndpoint(c, client2_.qp, nullptr, Sa(&dst), sizeof dst, 8, 8, nullptr,
                                                        0, Completion::Request, &connected),
              STATUS_INVALID_PARAMETER_3);
}

TEST_F(NdkSharedEndpoint, AnIpv6EndpointConnects) {
    if (std::getenv("OPENND_NDK_TEST_ADDRESS")) GTEST_SKIP() << "::1 is not the RDMA device's address";
    sockaddr_in6 any{};
    any.sin6_family = AF_INET6;
    any.sin6_addr = in6addr_loopback;
    const NDK_ADAPTER_DISPATCH *d = pair_.adapter->Dispatch;
    NDK_SHARED_ENDPOINT *ep = nullptr;
    ASSERT_EQ(d->NdkCreateSharedEndpoint(pair_.adapter, reinterpret_cast<PSOCKADDR>(&any), sizeof any, nullptr,
                                         nullptr, &ep),
              STATUS_SUCCESS);
    sockaddr_in6 at{};
    ULONG len = sizeof at;
    ASSERT_EQ(ep->Dispatch->NdkGetLocalAddress(ep, reinterpret_cast<PSOCKADDR>(&at), &len), STATUS_SUCCESS);
    EXPECT_EQ(at.sin6_family, AF_INET6);
    EXPECT_NE(at.sin6_port, 0);
    NDK_LISTENER *l = nullptr;
    ASSERT_EQ(d->NdkCreateListener(pair_.adapter, Pair::OnConnect, &pair_, nullptr, nullptr, &l), STATUS_SUCCESS);
    sockaddr_in6 la = any;
    Completion listened, connected, accepted, completed;
    ASSERT_EQ(Finish(l->Dispatch->NdkListen(l, reinterpret_cast<PSOCKADDR>(&la), sizeof la, Completion::Request,
                                            &listened),
                     listened),
              STATUS_SUCCESS);
    len = sizeof la;
    ASSERT_EQ(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<PSOCKADDR>(&la), &len), STATUS_SUCCESS);
    NDK_CONNECTOR *c = client2_.connector;
    NTSTATUS cs = c->Dispatch->NdkConnectWithSharedEndpoint(c, client2_.qp, ep, reinterpret_cast<PSOCKADDR>(&la),
                                                            sizeof la, 8, 8, nullptr, 0, Completion::Request,
                                                            &connected);
    ASSERT_TRUE(cs == STATUS_PENDING || cs == STATUS_SUCCESS) << std::hex << cs;
    Close(server2_.connector);
    server2_.connector = pair_.NextIncoming();
    ASSERT_NE(server2_.connector, nullptr);
    NTSTATUS as = server2_.connector->Dispatch->NdkAccept(server2_.connector, server2_.qp, 8, 8, nullptr, 0, nullptr,
                                                          nullptr, Completion::Request, &accepted);
    ASSERT_EQ(Finish(cs, connected), STATUS_SUCCESS);
    ASSERT_EQ(Finish(c->Dispatch->NdkCompleteConnect(c, nullptr, nullptr, Completion::Request, &completed), completed),
              STATUS_SUCCESS);
    ASSERT_EQ(Finish(as, accepted), STATUS_SUCCESS);
    sockaddr_in6 local{};
    len = sizeof local;
    ASSERT_EQ(c->Dispatch->NdkGetLocalAddress(c, reinterpret_cast<PSOCKADDR>(&local), &len), STATUS_SUCCESS);
    EXPECT_EQ(local.sin6_port, at.sin6_port);
    ExpectSendArrives(client2_, server2_, 5);
    server2_.Release();
    client2_.Release();
    Close(l);
    EXPECT_EQ(Close(ep), STATUS_SUCCESS);
}
