// Connection setup (§6), the rules of a connection that works: unique
// ports, the connector's getters in every state, CompleteConnect without
// Connect, private data (bad buffers too), reject by either side, when
// Accept completes.
// Failures and abandonment: connection_failures.cpp. Run once per address.
#include <sys/mman.h>
#include <unistd.h>

#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(Connection);

// R111, R144, R142: port 0 gives a unique port, reported once connected
// (connector) or listening (listener); connections do not share ports.
TEST_P(Connection, PortZeroGivesUniquePortsR111R144) {
    Listener l1, l2;
    ASSERT_EQ(l1.Start(node, WithPort(addr, 0)), "");
    ASSERT_EQ(l2.Start(node, WithPort(addr, 0)), "");
    EXPECT_NE(l1.port, l2.port);
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c[2];
    ASSERT_TRUE(peer.Post(Msg("serve").Set("n", 2)));
    uint16_t ports[2];
    for (int i = 0; i < 2; ++i) {
        ASSERT_ND(ND_SUCCESS, c[i].Create(node, cq, cq));
        ASSERT_ND(ND_SUCCESS, c[i].Connect(dest));
        HRESULT hr;
        IpAddress local = ConnectorLocalAddress(c[i].connector.get(), &hr);
        ASSERT_ND(ND_SUCCESS, hr);
        EXPECT_TRUE(opennd::net::SameIp(local.sa(), addr.sa())) << IpText(local);
        ports[i] = PortOf(local);
        EXPECT_NE(ports[i], 0);
    }
    PEER_OK(s, peer.Wait());
    EXPECT_NE(ports[0], ports[1]) << "two connections share a local port (R142)";
}

// R131, R132, D13: what a connector reports before, while and after
// connecting.
TEST_P(Connection, ConnectorGettersFollowTheStateR131R132R129) {
    Ref<IND2Connector> fresh;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, fresh.put_void()));
    IpAddress a;
    ULONG len = sizeof a.storage;
    EXPECT_ND(ND_CONNECTION_INVALID, fresh->GetLocalAddress(a.sa(), &len)) << "R131";
    len = sizeof a.storage;
    EXPECT_ND(ND_CONNECTION_INVALID, fresh->GetPeerAddress(a.sa(), &len)) << "R132";
    ULONG in, out;
    EXPECT_ND(ND_CONNECTION_INVALID, fresh->GetReadLimits(&in, &out)) << "no request or reply yet";
    len = 0;
    EXPECT_ND(ND_CONNECTION_INVALID, fresh->GetPrivateData(nullptr, &len)) << "no request or reply yet";

    Pair p;
    Peer &peer = p.peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    ASSERT_ND(ND_SUCCESS, p.rcq.Create(node.adapter.get(), node.file, 64));
    ASSERT_ND(ND_SUCCESS, p.conn.Create(node, p.rcq, p.rcq));
    ASSERT_TRUE(peer.Post(Msg("getreq")));
    std::string pd = "private data from the active side";
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, p.conn.connector->Bind(local.sa(), local.length()));
    Ov ov;
    HRESULT hr = p.conn.connector->Connect(p.conn.qp.get(), dest.sa(), dest.length(), 8, 8, pd.data(),
                                           static_cast<ULONG>(pd.size()), &ov);
    PEER_OK(req, peer.Wait());
    // Passive side after GetConnectionRequest (R129, R132 derived).
    EXPECT_ND(ND_SUCCESS, ST(req, "rlstatus"));
    EXPECT_ND(ND_BUFFER_OVERFLOW, ST(req, "pdsize_status")) << "GetPrivateData(nullptr, 0) (R130)";
    EXPECT_GE(req.U64("pdlen"), pd.size());
    EXPECT_ND(ND_SUCCESS, ST(req, "pdstatus"));
    EXPECT_EQ(req.Str("pd").substr(0, 2 * pd.size()), PdHex(pd));
    EXPECT_ND(ND_SUCCESS, ST(req, "peerstatus")) << "GetPeerAddress after GetConnectionRequest";
    IpAddress peer_saw = ParseIp(req.Str("peer"));
    EXPECT_TRUE(opennd::net::SameIp(peer_saw.sa(), addr.sa())) << req.Str("peer");
    std::string reply = "the passive side's answer";
    PEER_OK(acc, peer.Call(Msg("accept").Set("c", req.U64("c")).Set("pd", PdHex(reply)).Set("async", 1)));
    ASSERT_ND(ND_SUCCESS, Finish(p.conn.connector.get(), &ov, hr));
    // Active side after Connect (R129).
    EXPECT_ND(ND_SUCCESS, p.conn.connector->GetReadLimits(&in, &out));
    len = 0;
    EXPECT_ND(ND_BUFFER_OVERFLOW, p.conn.connector->GetPrivateData(nullptr, &len)) << "R130";
    EXPECT_GE(len, reply.size());
    std::vector<char> got(len);
    EXPECT_ND(ND_SUCCESS, p.conn.connector->GetPrivateData(got.data(), &len));
    EXPECT_EQ(std::string(got.data(), std::min<size_t>(got.size(), reply.size())), reply);
    // A short buffer: an overflow with the full length, and as much as fits
    // copied (D14, unlike the other size queries).
    char head[4] = {};
    ULONG short_len = sizeof head;
    EXPECT_ND(ND_BUFFER_OVERFLOW, p.conn.connector->GetPrivateData(head, &short_len)) << "D14";
    EXPECT_GE(short_len, reply.size());
    EXPECT_EQ(std::string(head, sizeof head), reply.substr(0, sizeof head)) << "D14: a partial copy";
    ASSERT_ND(ND_SUCCESS, p.conn.CompleteConnect());
    PEER_OK(aw, peer.Call(Msg("acceptwait").Set("c", req.U64("c"))));
    EXPECT_ND(ND_SUCCESS, ST(aw, "status"));
    // Connected: both addresses; a short buffer is an overflow, untouched.
    len = sizeof a.storage;
    ASSERT_ND(ND_SUCCESS, p.conn.connector->GetPeerAddress(a.sa(), &len));
    EXPECT_TRUE(opennd::net::SameIp(a.sa(), dest.sa()));
    EXPECT_EQ(PortOf(a), PortOf(dest));
    std::vector<uint8_t> small(addr.length() - 1, 0x33);
    len = static_cast<ULONG>(small.size());
    EXPECT_ND(ND_BUFFER_OVERFLOW, p.conn.connector->GetLocalAddress(reinterpret_cast<sockaddr *>(small.data()), &len));
    EXPECT_EQ(len, addr.length());
    for (uint8_t b : small) ASSERT_EQ(b, 0x33);
    len = static_cast<ULONG>(small.size());
    EXPECT_ND(ND_BUFFER_OVERFLOW, p.conn.connector->GetPeerAddress(reinterpret_cast<sockaddr *>(small.data()), &len));
}

TEST_P(Connection, CompleteConnectWithoutConnectR122) {
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    Ov ov;
    EXPECT_ND(ND_CONNECTION_INVALID, Finish(c.get(), &ov, c->CompleteConnect(&ov)));
}

// R116: Connect, Accept and Reject with `bad` as private data (and
// a length) fail with ND_ACCESS_VIOLATION, and nothing crashes.
void BadPrivateDataBuffer(Node &node, const IpAddress &addr, const void *bad) {
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    {  // active side: Connect
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        IpAddress local = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
        Ov ov;
        EXPECT_ND(ND_ACCESS_VIOLATION,
                  Finish(c.connector.get(), &ov, c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, bad,
                                                                      16, &ov)))
            << "Connect";
    }
    // Passive side: Accept and Reject with a bad buffer.
    Listener mine;
    ASSERT_EQ(mine.Start(node, WithPort(addr, 0)), "");
    ASSERT_TRUE(peer.Post(Msg("connect").Set("addr", IpText(addr)).Set("port", mine.port)));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    ASSERT_ND(ND_SUCCESS, mine.Get(c));
    {
        Ov ov;
        EXPECT_ND(ND_ACCESS_VIOLATION,
                  Finish(c.connector.get(), &ov, c.connector->Accept(c.qp.get(), 8, 8, bad, 16, &ov)))
            << "Accept";
        EXPECT_ND(ND_ACCESS_VIOLATION, c.connector->Reject(bad, 16)) << "Reject";
    }
    c.connector->Reject(nullptr, 0);
    peer.Wait(0, false);
}

// R116: a null private-data buffer with a length.
TEST_P(Connection, NullPrivateDataBufferR116) { BadPrivateDataBuffer(node, addr, nullptr); }

// R116: a private-data buffer in unmapped memory (not a crash).
TEST_P(Connection, UnmappedPrivateDataBufferR116) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *hole = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(hole, MAP_FAILED);
    BadPrivateDataBuffer(node, addr, hole);
    munmap(hole, page);
}

// R128: a passive Reject completes the active Connect with
// ND_CONNECTION_REFUSED and carries its private data.
TEST_P(Connection, PassiveRejectR128) {
    Pair p;
    ASSERT_EQ(p.PrepareActive(node, addr), "");
    Peer &peer = p.peer;
    Conn &c = p.conn;
    const IpAddress &dest = p.dest;
    Ov ov;
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov);
    PEER_OK(req, peer.Wait());
    std::string why = "not today";
    PEER_OK(rj, peer.Call(Msg("reject").Set("c", req.U64("c")).Set("pd", PdHex(why))));
    EXPECT_ND(ND_SUCCESS, ST(rj, "status"));
    EXPECT_ND(ND_CONNECTION_REFUSED, Finish(c.connector.get(), &ov, hr));
    char buf[256] = {};  // IB pads a reject's private data to 148 bytes
    ULONG len = sizeof buf;
    EXPECT_ND(ND_SUCCESS, c.connector->GetPrivateData(buf, &len)) << "the reject's private data";
    EXPECT_GE(len, why.size());
    EXPECT_EQ(std::string(buf, why.size()), why);
}

// R128, D31: the active side rejects after Connect completed; the passive
// Accept fails (refused or aborted).
TEST_P(Connection, ActiveRejectR128) {
    Pair p;
    ASSERT_EQ(p.PrepareActive(node, addr), "");
    Peer &peer = p.peer;
    Conn &c = p.conn;
    const IpAddress &dest = p.dest;
    Ov ov;
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov);
    PEER_OK(req, peer.Wait());
    PEER_OK(acc, peer.Call(Msg("accept").Set("c", req.U64("c")).Set("async", 1)));
    ASSERT_ND(ND_SUCCESS, Finish(c.connector.get(), &ov, hr));
    EXPECT_ND(ND_SUCCESS, c.connector->Reject(nullptr, 0));
    HRESULT accept_status = ST(acc, "status");
    if (accept_status == ND_PENDING) {
        PEER_OK(aw, peer.Call(Msg("acceptwait").Set("c", req.U64("c"))));
        accept_status = ST(aw, "status");
    }
    EXPECT_ND_IN(Any(ND_CONNECTION_REFUSED, ND_CONNECTION_ABORTED), accept_status);
}

// R127: Accept makes the active Connect complete, and completes itself only
// after the active side's CompleteConnect.
TEST_P(Connection, AcceptCompletesAfterCompleteConnectR127) {
    Pair p;
    ASSERT_EQ(p.PrepareActive(node, addr), "");
    Peer &peer = p.peer;
    Conn &c = p.conn;
    const IpAddress &dest = p.dest;
    Ov ov;
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov);
    PEER_OK(req, peer.Wait());
    SleepMs(50);
    EXPECT_ND(ND_PENDING, c.connector->GetOverlappedResult(&ov, FALSE)) << "Connect completed before Accept";
    PEER_OK(acc, peer.Call(Msg("accept").Set("c", req.U64("c")).Set("async", 1)));
    EXPECT_ND(ND_PENDING, ST(acc, "status"));
    ASSERT_ND(ND_SUCCESS, Finish(c.connector.get(), &ov, hr)) << "Accept must make Connect complete";
    SleepMs(200);
    PEER_OK(poll, peer.Call(Msg("acceptpoll").Set("c", req.U64("c"))));
    EXPECT_ND(ND_PENDING, ST(poll, "status")) << "Accept completed before CompleteConnect";
    ASSERT_ND(ND_SUCCESS, c.CompleteConnect());
    if (ST(poll, "status") == ND_PENDING) {
        PEER_OK(aw, peer.Call(Msg("acceptwait").Set("c", req.U64("c"))));
        EXPECT_ND(ND_SUCCESS, ST(aw, "status"));
    }
}

}  // namespace
}  // namespace ndc
