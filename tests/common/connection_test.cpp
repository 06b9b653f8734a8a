// Node, Connection, Listener and Region end to end on one host: a server
// thread accepts, the client connects, a Send crosses, both disconnect.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <vector>

#include "client_fixture.h"
#include "common/connection.h"
#include "common/region.h"

namespace {

using namespace opennd::client;
using client_test::Addr;
using client_test::ClientTest;

bool NextCompletion(IND2CompletionQueue *cq, ND2_RESULT *r, uint64_t ms) {
    Deadline d = Deadline::After(ms);
    while (cq->GetResults(r, 1) == 0)
        if (d.Expired()) return false;
    return true;
}

TEST(ClientNode, OpenOfAnAddressNoProviderServesNamesNdOpenAdapter) {
    ASSERT_EQ(NdStartup(), S_OK);
    Node node;
    Status s = node.Open(Addr("203.0.113.77"));
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.call(), "NdOpenAdapter");
    EXPECT_EQ(node.adapter.get(), nullptr);
    NdCleanup();
}

TEST_F(ClientTest, NodeHasTheAdaptersInfo) {
    EXPECT_EQ(node.info.InfoVersion, ULONG(ND_VERSION_2));
    EXPECT_GT(node.info.MaxTransferLength, 0u);
    EXPECT_NE(node.file, nullptr);
}

TEST_F(ClientTest, RegionRegistersAndDeregisters) {
    std::vector<char> bytes(4096);
    Region r;
    Status s = r.Register(node.adapter, node.file, bytes.data(), bytes.size(), kAllAccess, Deadline::After(5000));
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_NE(r->GetLocalToken(), 0u);
    EXPECT_TRUE(r.Deregister(Deadline::After(5000)).ok());
    EXPECT_FALSE(r.Deregister(Deadline::After(5000)).ok()) << "the provider's answer to a second one";
}

TEST_F(ClientTest, ConnectAcceptSendDisconnect) {
    Listener listener;
    Status ls = listener.Listen(node.adapter, node.file, Addr("127.0.0.1"), 0);
    ASSERT_TRUE(ls.ok()) << ls.message();
    ASSERT_NE(listener.port(), 0);

    Connection server, client;
    ASSERT_TRUE(server.Open(node.adapter, node.file, QueueShape{}).ok());
    ASSERT_TRUE(client.Open(node.adapter, node.file, QueueShape{}).ok());
    std::vector<char> in(64), out(64, 'x');
    Region rin, rout;
    ASSERT_TRUE(rin.Register(node.adapter, node.file, in.data(), in.size(), kAllAccess, Deadline::After(5000)).ok());
    ASSERT_TRUE(rout.Register(node.adapter, node.file, out.data(), out.size(), 0, Deadline::After(5000)).ok());
    ND2_SGE rs{in.data(), ULONG(in.size()), rin->GetLocalToken()};
    ASSERT_EQ(server.qp->Receive(nullptr, &rs, 1), ND_SUCCESS);

    auto accepted = std::async(std::launch::async, [&] {
        Deadline d = Deadline::After(10000);
        Status s = listener.GetConnectionRequest(server.connector, d);
        return s ? server.Accept(ConnectParams{}, d) : s;
    });
    Status cs = client.Connect(Addr("127.0.0.1", listener.port()), ConnectParams{}, Deadline::After(10000));
    Status as = accepted.get();
    ASSERT_TRUE(cs.ok()) << cs.message();
    ASSERT_TRUE(as.ok()) << as.message();

    ND2_SGE ss{out.data(), 5, rout->GetLocalToken()};
    ASSERT_EQ(client.qp->Send(nullptr, &ss, 1, 0), ND_SUCCESS);
    // The receiver first: its poll is what moves the Send (the provider's
    // thread would, later).
    ND2_RESULT r;
    ASSERT_TRUE(NextCompletion(server.cq, &r, 10000));
    EXPECT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(r.BytesTransferred, 5u);
    EXPECT_EQ(std::memcmp(in.data(), "xxxxx", 5), 0);
    ASSERT_TRUE(NextCompletion(client.cq, &r, 10000));
    EXPECT_EQ(r.Status, ND_SUCCESS);

    EXPECT_TRUE(client.Disconnect(Deadline::After(10000)).ok());
    Status ds = server.Disconnect(Deadline::After(10000));
    EXPECT_TRUE(ds.ok() || ds.hr() == ND_CONNECTION_INVALID || ds.hr() == ND_CONNECTION_ABORTED) << ds.message();
}

}  // namespace
