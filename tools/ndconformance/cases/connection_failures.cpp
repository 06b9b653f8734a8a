// Connection setup (§6) when it fails or is abandoned: refused and
// retried, cancelled or released mid-way, failed Accepts, slow clients,
// simultaneous connects between two processes, bad addresses, ports in
// use. Run once per address (the suite is instantiated in connection.cpp).
#include <sys/un.h>

#include <memory>

#include "suite.h"
#include "support/simultaneous.h"

namespace ndc {
namespace {

// An address of the same family that no local adapter serves.
IpAddress Unserved(int family) {
    return ParseIp(family == AF_INET6 ? "2001:db8::7e57" : "203.0.113.57");
}

// R118, R119: no listener: ND_CONNECTION_REFUSED, and the Connect may be
// retried on the same connector; the QP is as before and works.
TEST_P(Connection, RefusedThenRetriedR118R119) {
    Listener probe;
    ASSERT_EQ(probe.Start(node, WithPort(addr, 0)), "");
    uint16_t port = probe.port;
    probe.listener.reset();  // nobody listens on `port` now
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    IpAddress dest = WithPort(PeerIp(addr), port);  // where the peer will listen
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
    Ov ov;
    EXPECT_ND(ND_CONNECTION_REFUSED,
              Finish(c.connector.get(), &ov, c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr,
                                                                  0, &ov)));
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen").Set("port", port)));
    ASSERT_TRUE(peer.Post(Msg("serve").Set("recvs", 1).Set("recvsize", 64)));
    ov.Reuse();
    EXPECT_ND(ND_SUCCESS, Finish(c.connector.get(), &ov,
                                 c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov)))
        << "retrying Connect on the same connector";
    EXPECT_ND(ND_SUCCESS, c.CompleteConnect());
    PEER_OK(s, peer.Wait());
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, c.PostSend(m, 0, 64));
    EXPECT_TRUE(NextIs(cq, ND_SUCCESS, Nd2RequestTypeSend)) << "the QP after a refused Connect";
}

// R119: after a failed Connect the QP works with a new connector.
TEST_P(Connection, QueuePairReusableAfterFailedConnectR119) {
    Listener probe;
    ASSERT_EQ(probe.Start(node, WithPort(addr, 0)), "");
    uint16_t port = probe.port;
    probe.listener.reset();
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    EXPECT_ND(ND_CONNECTION_REFUSED, c.Connect(WithPort(addr, port)));
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    ASSERT_TRUE(peer.Post(Msg("serve").Set("recvs", 1).Set("recvsize", 64)));
    ASSERT_ND(ND_SUCCESS, c.NewConnector());
    EXPECT_ND(ND_SUCCESS, c.Connect(WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")))));
    PEER_OK(s, peer.Wait());
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, c.PostSend(m, 0, 64));
    EXPECT_TRUE(NextIs(cq, ND_SUCCESS, Nd2RequestTypeSend));
}

// R117, R141: a QP connects to one peer at a time.
TEST_P(Connection, ConnectedQueuePairCannotConnectAgainR117R141) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    // Active: the connected QP in a new Connect.
    Ref<IND2Connector> c2;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c2.put_void()));
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, c2->Bind(local.sa(), local.length()));
    PEER_OK(l2, p.peer.Call(Msg("listen").Set("name", "l2")));
    IpAddress dest2 = WithPort(PeerIp(addr), static_cast<uint16_t>(l2.U64("port")));
    Ov ov;
    EXPECT_ND(ND_CONNECTION_ACTIVE,
              Finish(c2.get(), &ov, c2->Connect(p.conn.qp.get(), dest2.sa(), dest2.length(), 8, 8, nullptr, 0, &ov)));
    // Passive: a second request accepted with the connected QP.
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Ref<IND2Connector> c3;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c3.put_void()));
    ASSERT_TRUE(p.peer.Post(Msg("connect").Set("addr", IpText(addr)).Set("port", l.port)));
    Ov og;
    ASSERT_ND(ND_SUCCESS, Finish(l.listener.get(), &og, l.listener->GetConnectionRequest(c3.get(), &og)));
    Ov oa;
    EXPECT_ND(ND_CONNECTION_ACTIVE, Finish(c3.get(), &oa, c3->Accept(p.conn.qp.get(), 8, 8, nullptr, 0, &oa)));
    c3->Reject(nullptr, 0);
    c3.reset();
    p.peer.Wait(0, false);  // its Connect fails one way or another
}

// R126, R143: the active side cancels during Connect: Connect completes
// ND_CANCELED, and the passive Accept / Reject see ND_CONNECTION_ABORTED.
TEST_P(Connection, ActiveCancelsDuringConnectR126R143) {
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    for (bool use_reject : {false, true}) {
        SCOPED_TRACE(use_reject ? "passive Reject" : "passive Accept");
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        ASSERT_TRUE(peer.Post(Msg("getreq")));
        IpAddress local = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
        Ov ov;
        HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov);
        PEER_OK(req, peer.Wait());
        ASSERT_ND(ND_SUCCESS, c.connector->CancelOverlappedRequests());
        EXPECT_ND(ND_CANCELED, Finish(c.connector.get(), &ov, hr));
        SleepMs(200);  // the news travels to the passive side
        if (use_reject) {
            PEER_OK(r, peer.Call(Msg("reject").Set("c", req.U64("c"))));
            EXPECT_ND(ND_CONNECTION_ABORTED, ST(r, "status"));
        } else {
            PEER_OK(r, peer.Call(Msg("accept").Set("c", req.U64("c"))));
            EXPECT_ND(ND_CONNECTION_ABORTED, ST(r, "status"));
        }
    }
}

// R143: releasing the connector during Connect abandons it as well.
TEST_P(Connection, ActiveReleasesDuringConnectR143) {
    Pair p;
    ASSERT_EQ(p.PrepareActive(node, addr), "");
    Peer &peer = p.peer;
    Conn &c = p.conn;
    const IpAddress &dest = p.dest;
    auto ov = std::make_unique<Ov>();
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, ov.get());
    PEER_OK(req, peer.Wait());
    c.connector.reset();  // abandon; the request completes (cancelled) with the object
    if (hr == ND_PENDING) {
        Deadline d(WaitMs());
        while (ov->Internal == ND_PENDING && !d.Expired()) SleepMs(1);
        EXPECT_NE(static_cast<HRESULT>(ov->Internal), ND_PENDING) << "Connect still pending after the release";
    }
    SleepMs(200);  // the news travels to the passive side
    PEER_OK(r, peer.Call(Msg("accept").Set("c", req.U64("c"))));
    EXPECT_ND(ND_CONNECTION_ABORTED, ST(r, "status"));
}

// A passive side's Accept under way: the peer connected (without
// CompleteConnect) and we Accept; `hr` is what Accept returned, `cr` the
// peer's answer to its connect.
struct AcceptUnderWay {
    Listener l;
    Cq cq;
    Conn c;
    Peer peer;
    Ov ov;
    HRESULT hr = ND_SUCCESS;
    Msg cr;
    std::string Start(Node &node, const IpAddress &addr) {
        std::string err = l.Start(node, WithPort(addr, 0));
        if (!err.empty()) return err;
        HRESULT h = cq.Create(node.adapter.get(), node.file, 64);
        if (SUCCEEDED(h)) h = c.Create(node, cq, cq);
        if (FAILED(h)) return "CQ/QP: " + StatusName(h);
        if (!(err = peer.Start(addr)).empty()) return err;
        if (!peer.Post(Msg("connect").Set("addr", IpText(addr)).Set("port", l.port).Set("complete", 0)))
            return "cannot talk to the peer";
        if (FAILED(h = l.Get(c))) return "GetConnectionRequest: " + StatusName(h);
        hr = c.connector->Accept(c.qp.get(), 8, 8, nullptr, 0, &ov);
        cr = peer.Wait();
        return cr.ok() ? "" : cr.error();
    }
    // Another Accept on the same connector, with a fresh QP.
    HRESULT AcceptAgain(Node &node) {
        Conn fresh;
        HRESULT h = fresh.Create(node, cq, cq);
        if (FAILED(h)) return h;
        ov.Reuse();
        return Finish(c.connector.get(), &ov, c.connector->Accept(fresh.qp.get(), 8, 8, nullptr, 0, &ov));
    }
};

// R123: a connector whose Accept failed cannot be used again.
TEST_P(Connection, ConnectorUnusableAfterFailedAcceptR123) {
    AcceptUnderWay a;
    ASSERT_EQ(a.Start(node, addr), "");
    // The peer releases without CompleteConnect: Accept fails.
    PEER_OK(rel, a.peer.Call(Msg("release").Set("c", a.cr.U64("c")).Set("what", "both")));
    HRESULT accept_status = Finish(a.c.connector.get(), &a.ov, a.hr);
    EXPECT_TRUE(FAILED(accept_status)) << "Accept after the active side released: " << StatusName(accept_status);
    HRESULT again = a.AcceptAgain(node);
    EXPECT_TRUE(FAILED(again)) << "a connector whose Accept failed accepted again: " << StatusName(again);
}

// L6 on the passive side: cancelling a pending Accept abandons it. The
// Accept completes ND_CANCELED; the initiator learns that the connection is
// gone (NotifyDisconnect) and its CompleteConnect fails; the connector does
// not accept again.
TEST_P(Connection, PassiveCancelsDuringAcceptL6) {
    AcceptUnderWay a;
    ASSERT_EQ(a.Start(node, addr), "");
    ASSERT_ND(ND_PENDING, a.hr);  // until the initiator's CompleteConnect
    const uint64_t peer_conn = a.cr.U64("c");
    PEER_OK(n, a.peer.Call(Msg("notifydisc").Set("c", peer_conn)));
    ASSERT_ND(ND_PENDING, ST(n, "hr"));
    ASSERT_ND(ND_SUCCESS, a.c.connector->CancelOverlappedRequests());
    EXPECT_ND(ND_CANCELED, Finish(a.c.connector.get(), &a.ov, a.hr));
    PEER_OK(w, a.peer.Call(Msg("notifydiscwait").Set("c", peer_conn).Set("ms", WaitMs())));
    EXPECT_ND(ND_SUCCESS, ST(w, "status"));
    PEER_OK(cc, a.peer.Call(Msg("completeconnect").Set("c", peer_conn)));
    EXPECT_TRUE(FAILED(ST(cc, "status"))) << "CompleteConnect after the Accept was cancelled: "
                                          << StatusName(ST(cc, "status"));
    HRESULT again = a.AcceptAgain(node);
    EXPECT_TRUE(FAILED(again)) << "a connector whose Accept was cancelled accepted again: " << StatusName(again);
}

// R121, R151: slow clients are not timed out (Accept and CompleteConnect
// both come seconds late).
TEST_P(Connection, SlowClientsAreNotTimedOutR121R151) {
    constexpr uint64_t kDelay = 2000;
    Pair p;
    ASSERT_EQ(p.PrepareActive(node, addr), "");
    Peer &peer = p.peer;
    Conn &c = p.conn;
    const IpAddress &dest = p.dest;
    Ov ov;
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov);
    PEER_OK(req, peer.Wait());
    PEER_OK(acc, peer.Call(Msg("accept").Set("c", req.U64("c")).Set("async", 1).Set("delay", kDelay),
                           WaitMs() + kDelay));
    ASSERT_ND(ND_SUCCESS, Finish(c.connector.get(), &ov, hr)) << "Connect after a slow Accept";
    SleepMs(kDelay);
    EXPECT_ND(ND_SUCCESS, c.CompleteConnect()) << "a slow CompleteConnect";
    PEER_OK(aw, peer.Call(Msg("acceptwait").Set("c", req.U64("c"))));
    EXPECT_ND(ND_SUCCESS, ST(aw, "status"));
}

// COMPAT: two processes, each with its own listener and connector, connect
// to each other at the same time, accepting or rejecting, round after
// round; nothing hangs and the outcomes match.
TEST_P(Connection, SimultaneousConnectsBetweenTwoProcesses) {
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(pl, peer.Call(Msg("listen")));
    Listener mine;
    ASSERT_EQ(mine.Start(node, WithPort(addr, 0)), "");
    IpAddress to_peer = WithPort(PeerIp(addr), static_cast<uint16_t>(pl.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 1024));
    struct Round {
        bool we_accept, peer_accepts;
    } rounds[] = {{true, true}, {false, false}, {true, false}, {false, true}};
    for (int i = 0; i < 20; ++i) {
        const Round &r = rounds[i % 4];
        SCOPED_TRACE("round " + std::to_string(i) + (r.we_accept ? ": we accept" : ": we reject") +
                     (r.peer_accepts ? ", the peer accepts" : ", the peer rejects"));
        Conn active, passive;
        ASSERT_ND(ND_SUCCESS, active.Create(node, cq, cq));
        ASSERT_ND(ND_SUCCESS, passive.Create(node, cq, cq));
        ASSERT_TRUE(peer.Post(
            Msg("simul").Set("addr", IpText(addr)).Set("port", mine.port).Set("accept", r.peer_accepts ? 1 : 0)));
        SimultaneousResult res = ConnectSimultaneously(node, mine, active, passive, to_peer, r.we_accept);
        PEER_OK(pr, peer.Wait());
        EXPECT_TRUE(res.detail.empty()) << res.detail;
        EXPECT_TRUE(pr.Str("detail").empty()) << "peer: " << pr.Str("detail");
        EXPECT_ND(r.peer_accepts ? ND_SUCCESS : ND_CONNECTION_REFUSED, res.active) << "our Connect";
        EXPECT_ND(ND_SUCCESS, res.passive) << "our Accept/Reject";
        EXPECT_ND(r.we_accept ? ND_SUCCESS : ND_CONNECTION_REFUSED, ST(pr, "active")) << "the peer's Connect";
        EXPECT_ND(ND_SUCCESS, ST(pr, "passive")) << "the peer's Accept/Reject";
        if (HasFatalFailure()) return;
    }
}

// COMPAT and §2.2: bad addresses are refused without hanging.
TEST_P(Connection, BadAddresses) {
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    // Connecting to the unspecified address: STATUS_BAD_NETWORK_NAME.
    {
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        EXPECT_ND(kBadNetworkName, c.Connect(Wildcard(addr.family(), 7471))) << "Connect to the unspecified address";
    }
    // Connecting to an address nobody serves: an error, within the bound.
    {
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        HRESULT hr = c.Connect(WithPort(Unserved(addr.family()), 7471));
        EXPECT_ND_IN(Any(ND_CONNECTION_REFUSED, ND_HOST_UNREACHABLE, ND_NETWORK_UNREACHABLE, ND_IO_TIMEOUT,
                         ND_INVALID_ADDRESS),
                     hr);
    }
    // Binding to an address this adapter does not have.
    IpAddress foreign = WithPort(Unserved(addr.family()), 0);
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    EXPECT_ND(ND_INVALID_ADDRESS, c->Bind(foreign.sa(), foreign.length())) << "connector";
    Ref<IND2Listener> l;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, l.put_void()));
    EXPECT_ND(ND_INVALID_ADDRESS, l->Bind(foreign.sa(), foreign.length())) << "listener";
    // Not an IP address at all.
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, l.put_void()));
    HRESULT hr = l->Bind(reinterpret_cast<sockaddr *>(&un), sizeof un);
    EXPECT_TRUE(FAILED(hr)) << "Listener::Bind(AF_UNIX) returned " << StatusName(hr);
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    hr = c->Bind(addr.sa(), 2);
    EXPECT_TRUE(FAILED(hr)) << "Connector::Bind with a 2-byte address returned " << StatusName(hr);
}

// Many connect/disconnect cycles reuse resources cleanly.
TEST_P(Connection, RepeatedConnectAndDisconnect) {
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 256));
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int i = 0; i < 25; ++i) {
        SCOPED_TRACE("cycle " + std::to_string(i));
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        ASSERT_TRUE(peer.Post(Msg("serve").Set("recvs", 1).Set("recvsize", 64)));
        ASSERT_ND(ND_SUCCESS, c.Connect(dest));
        PEER_OK(s, peer.Wait());
        ASSERT_ND(ND_SUCCESS, c.PostSend(m, 0, 64));
        ASSERT_TRUE(NextIs(cq, ND_SUCCESS, Nd2RequestTypeSend));
        ASSERT_ND(ND_SUCCESS, c.Disconnect());
        PEER_OK(rel, peer.Call(Msg("release").Set("c", s.U64("c")).Set("what", "all")));
    }
}

// COMPAT (R112, R146): an address and port in use: 0xC0000238.
TEST_P(Connection, BindingAPortInUseR112R146) {
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    IpAddress taken = WithPort(addr, l.port);
    Ref<IND2Listener> l2;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, l2.put_void()));
    EXPECT_ND(kAddressAlreadyAssociated, l2->Bind(taken.sa(), taken.length())) << "a second listener";
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    EXPECT_ND(kAddressAlreadyAssociated, c->Bind(taken.sa(), taken.length())) << "a connector on a listener's port";
    Ref<IND2Connector> c1, c2;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c1.put_void()));
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c2.put_void()));
    IpAddress any = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, c1->Bind(any.sa(), any.length()));
    HRESULT hr;
    IpAddress bound = ConnectorLocalAddress(c1.get(), &hr);
    if (SUCCEEDED(hr) && PortOf(bound) != 0) {
        EXPECT_ND(kAddressAlreadyAssociated, c2->Bind(bound.sa(), bound.length())) << "a second connector";
    }
}

// COMPAT: releasing the connector after Connect completed but before
// CompleteConnect: the passive side's Accept fails ND_CONNECTION_REFUSED.
TEST_P(Connection, ReleaseBeforeCompleteConnectRefusesTheAccept) {
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
    IND2Connector *raw = c.connector.detach();
    EXPECT_EQ(raw->Release(), 0u) << "the connector's last Release (COMPAT: programs check it)";
    HRESULT accept_status = ST(acc, "status");
    if (accept_status == ND_PENDING) {
        PEER_OK(aw, peer.Call(Msg("acceptwait").Set("c", req.U64("c"))));
        accept_status = ST(aw, "status");
    }
    EXPECT_ND(ND_CONNECTION_REFUSED, accept_status);
}

}  // namespace
}  // namespace ndc
