// Connector and listener dispatch functions: connect with private data,
// connection data, addresses, reject, paused listeners, disconnect events.
#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

class NdkConnection : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(pair_.Open()); }
    void TearDown() override { pair_.Release(); }

    // Starts the client's Connect with private data; returns the inline status.
    NTSTATUS StartConnect(const char *data, Completion *done, ULONG ird = 4, ULONG ord = 2) {
        sockaddr_in src = Loopback(), dst = Loopback(pair_.port);
        NDK_CONNECTOR *c = pair_.client.connector;
        return c->Dispatch->NdkConnect(c, pair_.client.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, ird, ord,
                                       const_cast<char *>(data), data ? ULONG(std::strlen(data)) : 0,
                                       Completion::Request, done);
    }
    Pair pair_;
};

}  // namespace

TEST_F(NdkConnection, PrivateDataReadLimitsAndAddresses) {
    Completion connected;
    NTSTATUS cs = StartConnect("hello", &connected, 4, 2);
    ASSERT_TRUE(cs == STATUS_PENDING || cs == STATUS_SUCCESS);
    NDK_CONNECTOR *incoming = pair_.NextIncoming();
    ASSERT_NE(incoming, nullptr);
    const NDK_CONNECTOR_DISPATCH *d = incoming->Dispatch;
    ULONG ird = 0, ord = 0, len = 0;
    EXPECT_EQ(d->NdkGetConnectionData(incoming, &ird, &ord, nullptr, &len), STATUS_BUFFER_TOO_SMALL);
    EXPECT_GE(len, 5u);
    char data[64] = {};
    len = sizeof data;
    ASSERT_EQ(d->NdkGetConnectionData(incoming, &ird, &ord, data, &len), STATUS_SUCCESS);
    EXPECT_EQ(std::string(data, 5), "hello");
    EXPECT_EQ(ird, 2u);  // what the active side may read from us: its ORD
    EXPECT_EQ(ord, 4u);
    sockaddr_in peer{}, local{};
    ULONG alen = 4;
    EXPECT_EQ(d->NdkGetPeerAddress(incoming, Sa(&peer), &alen), STATUS_BUFFER_TOO_SMALL);
    EXPECT_EQ(alen, sizeof(sockaddr_in));
    ASSERT_EQ(d->NdkGetPeerAddress(incoming, Sa(&peer), &alen), STATUS_SUCCESS);
    alen = sizeof local;
    ASSERT_EQ(d->NdkGetLocalAddress(incoming, Sa(&local), &alen), STATUS_SUCCESS);
    EXPECT_EQ(ntohs(local.sin_port), pair_.port);

    Completion accepted;
    char reply[] = "world";
    NTSTATUS as = d->NdkAccept(incoming, pair_.server.qp, 8, 8, reply, 5, Completion::Event,
                               &pair_.server.disconnected, Completion::Request, &accepted);
    ASSERT_EQ(Finish(cs, connected), STATUS_SUCCESS);
    NDK_CONNECTOR *c = pair_.client.connector;
    len = sizeof data;
    ASSERT_EQ(c->Dispatch->NdkGetConnectionData(c, &ird, &ord, data, &len), STATUS_SUCCESS);
    EXPECT_EQ(std::string(data, 5), "world");
    sockaddr_in client_local{}, client_peer{};
    alen = sizeof client_local;
    ASSERT_EQ(c->Dispatch->NdkGetLocalAddress(c, Sa(&client_local), &alen), STATUS_SUCCESS);
    EXPECT_EQ(client_local.sin_port, peer.sin_port);
    alen = sizeof client_peer;
    ASSERT_EQ(c->Dispatch->NdkGetPeerAddress(c, Sa(&client_peer), &alen), STATUS_SUCCESS);
    EXPECT_EQ(ntohs(client_peer.sin_port), pair_.port);
    Completion completed;
    ASSERT_EQ(Finish(c->Dispatch->NdkCompleteConnect(c, nullptr, nullptr, Completion::Request, &completed), completed),
              STATUS_SUCCESS);
    EXPECT_EQ(Finish(as, accepted), STATUS_SUCCESS);
    EXPECT_EQ(Close(pair_.server.connector), STATUS_SUCCESS);
    pair_.server.connector = incoming;
}

TEST_F(NdkConnection, RejectRefusesTheConnect) {
    Completion connected;
    NTSTATUS cs = StartConnect("please", &connected);
    NDK_CONNECTOR *incoming = pair_.NextIncoming();
    ASSERT_NE(incoming, nullptr);
    char no[] = "no";
    EXPECT_EQ(incoming->Dispatch->NdkReject(incoming, no, 2), STATUS_SUCCESS);
    EXPECT_EQ(Finish(cs, connected), STATUS_CONNECTION_REFUSED);
    EXPECT_EQ(Close(incoming), STATUS_SUCCESS);
}

TEST_F(NdkConnection, PausedListenerBehavesAsIfAbsent) {
    NDK_LISTENER *l = pair_.listener;
    l->Dispatch->NdkControlConnectEvents(l, TRUE);
    Completion refused;
    EXPECT_EQ(Finish(StartConnect(nullptr, &refused), refused), STATUS_CONNECTION_REFUSED);
    EXPECT_EQ(pair_.NextIncoming(std::chrono::milliseconds(100)), nullptr);  // no connect event
    l->Dispatch->NdkControlConnectEvents(l, FALSE);
    // The refused connector is still bound; a new one connects now.
    EXPECT_TRUE(Closes(Close(pair_.client.connector)));
    ASSERT_EQ(pair_.adapter->Dispatch->NdkCreateConnector(pair_.adapter, nullptr, nullptr, &pair_.client.connector),
              STATUS_SUCCESS);
    EXPECT_TRUE(pair_.Connect());
}

TEST_F(NdkConnection, ListenerAddressAndErrors) {
    NDK_LISTENER *l = pair_.listener;
    sockaddr_in a{};
    ULONG len = 2;
    EXPECT_EQ(l->Dispatch->NdkGetLocalAddress(l, Sa(&a), &len), STATUS_BUFFER_TOO_SMALL);
    len = sizeof a;
    ASSERT_EQ(l->Dispatch->NdkGetLocalAddress(l, Sa(&a), &len), STATUS_SUCCESS);
    EXPECT_EQ(ntohs(a.sin_port), pair_.port);
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(l->Dispatch->NdkQueryExtension(&l->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    // A second listener on the same port: an inline error.
    NDK_LISTENER *other = nullptr;
    ASSERT_EQ(pair_.adapter->Dispatch->NdkCreateListener(pair_.adapter, Pair::OnConnect, &pair_, nullptr, nullptr,
                                                         &other),
              STATUS_SUCCESS);
    Completion c;
    // NDK names it STATUS_SHARING_VIOLATION (ND2's 0xC0000238 is translated).
    EXPECT_EQ(other->Dispatch->NdkListen(other, Sa(&a), sizeof a, Completion::Request, &c), STATUS_SHARING_VIOLATION);
    EXPECT_EQ(c.Count(), 0);
    EXPECT_EQ(Close(other), STATUS_SUCCESS);
}

TEST_F(NdkConnection, ConnectErrorsAndSharedEndpoint) {
    NDK_CONNECTOR *c = pair_.client.connector;
    GUID id{};
    NDK_EXTENSION_INTERFACE ext{};
    EXPECT_EQ(c->Dispatch->NdkQueryExtension(&c->Header, &id, NDK_VERSION{1, 0}, &ext), STATUS_NOT_SUPPORTED);
    sockaddr_in dst = Loopback(pair_.port);
    EXPECT_EQ(c->Dispatch->NdkConnectWithSharedEndpoint(c, pair_.client.qp, nullptr, Sa(&dst), sizeof dst, 1, 1,
                                                        nullptr, 0, Completion::Request, nullptr),
              STATUS_INVALID_PARAMETER_3);  // (shared_endpoint_test.cpp has the rest)
    // A source address and port in use (the listener's): refused inline.
    Completion none;
    sockaddr_in taken = Loopback(pair_.port);
    EXPECT_EQ(c->Dispatch->NdkConnect(c, pair_.client.qp, Sa(&taken), sizeof taken, Sa(&dst), sizeof dst, 1, 1,
                                      nullptr, 0, Completion::Request, &none),
              STATUS_SHARING_VIOLATION);
    // Nobody listens on port 9: refused (inline or through the callback).
    Completion refused;
    sockaddr_in src = Loopback(), nobody = Loopback(9);
    NTSTATUS s = c->Dispatch->NdkConnect(c, pair_.client.qp, Sa(&src), sizeof src, Sa(&nobody), sizeof nobody, 1, 1,
                                         nullptr, 0, Completion::Request, &refused);
    EXPECT_EQ(Finish(s, refused), STATUS_CONNECTION_REFUSED);
    // Not connected: CompleteConnect and Disconnect fail inline.
    EXPECT_EQ(c->Dispatch->NdkCompleteConnect(c, nullptr, nullptr, Completion::Request, &none),
              STATUS_CONNECTION_INVALID);
    EXPECT_EQ(c->Dispatch->NdkDisconnect(c, Completion::Request, &none), STATUS_CONNECTION_INVALID);
    EXPECT_EQ(none.Count(), 0);
}

TEST_F(NdkConnection, DisconnectEventFiresOnceForThePeer) {
    ASSERT_TRUE(pair_.Connect());
    NDK_CONNECTOR *c = pair_.client.connector;
    Completion done;
    EXPECT_EQ(Finish(c->Dispatch->NdkDisconnect(c, Completion::Request, &done), done), STATUS_SUCCESS);
    ASSERT_TRUE(pair_.server.disconnected.Wait());
    NDK_CONNECTOR *s = pair_.server.connector;
    Completion server_done;
    EXPECT_EQ(Finish(s->Dispatch->NdkDisconnect(s, Completion::Request, &server_done), server_done), STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(pair_.server.disconnected.Count(), 1);
    EXPECT_EQ(pair_.client.disconnected.Count(), 0);  // it disconnected itself
    // The queues were flushed: a posted receive completes cancelled.
    NDK_SGE rs = pair_.server.region.Sge(0, 64);
    NTSTATUS post = pair_.server.qp->Dispatch->NdkReceive(pair_.server.qp, nullptr, &rs, 1);
    if (post == STATUS_SUCCESS) {
        EXPECT_EQ(pair_.server.Next().Status, STATUS_CANCELLED);
    }
}

// A Disconnect refused inline (not connected yet) is no local disconnect:
// the peer's later disconnect is still reported.
TEST_F(NdkConnection, ARefusedDisconnectDoesNotHideThePeersDisconnect) {
    NDK_CONNECTOR *c = pair_.client.connector;
    Completion none;
    EXPECT_EQ(c->Dispatch->NdkDisconnect(c, Completion::Request, &none), STATUS_CONNECTION_INVALID);
    ASSERT_TRUE(pair_.Connect());
    NDK_CONNECTOR *s = pair_.server.connector;
    Completion done;
    EXPECT_EQ(Finish(s->Dispatch->NdkDisconnect(s, Completion::Request, &done), done), STATUS_SUCCESS);
    ASSERT_TRUE(pair_.client.disconnected.Wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(pair_.client.disconnected.Count(), 1);
    EXPECT_EQ(none.Count(), 0);
}

TEST_F(NdkConnection, ClosingAConnectedConnectorDisconnectsThePeer) {
    ASSERT_TRUE(pair_.Connect());
    // Pending (its internal disconnect watch is cancelled first) or at once.
    NTSTATUS s = Close(pair_.client.connector);
    EXPECT_TRUE(s == STATUS_SUCCESS || s == STATUS_PENDING);
    pair_.client.connector = nullptr;
    ASSERT_TRUE(pair_.server.disconnected.Wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(pair_.server.disconnected.Count(), 1);
}
