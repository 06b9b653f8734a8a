// Disconnect and flush (§6.8 with COMPAT-NOTES): NotifyDisconnect, local
// and remote disconnect, release without Disconnect, and the peer process
// killed with SIGKILL in the middle of a transfer. Run once per address.
#include <signal.h>

#include <map>

#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(Disconnect);

// A connection with receives posted on our side and NotifyDisconnect armed.
struct Armed {
    Pair p;
    Mem m{65536};
    Ov notify;
    HRESULT notify_hr = kHang;
    int rctx[4];
    std::string Setup(Node &node, const IpAddress &addr, Msg serve = Msg("serve")) {
        std::string err = p.Connect(node, addr, serve);
        if (!err.empty()) return err;
        HRESULT hr = m.Register(node.adapter.get(), node.file, kAllRights);
        if (FAILED(hr)) return "Register: " + StatusName(hr);
        for (int k = 0; k < 4; ++k)
            if (FAILED(hr = p.conn.PostReceive(m, k * 4096, 4096, &rctx[k]))) return "Receive: " + StatusName(hr);
        notify_hr = p.conn.connector->NotifyDisconnect(&notify);
        if (notify_hr != ND_PENDING) return "NotifyDisconnect returned " + StatusName(notify_hr);
        return "";
    }
    // Every outstanding receive completes ND_CANCELED, in order.
    ::testing::AssertionResult ReceivesFlushed() {
        for (int k = 0; k < 4; ++k) {
            ND2_RESULT r;
            if (!p.rcq.NextWhere([](const ND2_RESULT &x) { return x.RequestType == Nd2RequestTypeReceive; }, &r))
                return ::testing::AssertionFailure() << "receive " << k << " never completed";
            if (r.Status != ND_CANCELED || r.RequestContext != &rctx[k])
                return ::testing::AssertionFailure() << "receive " << k << ": " << Describe(r);
        }
        return ::testing::AssertionSuccess();
    }
    ~Armed() {
        if (notify_hr == ND_PENDING && p.conn.connector) {
            p.conn.connector->CancelOverlappedRequests();
            Finish(p.conn.connector.get(), &notify, ND_PENDING, 1000);
        }
    }
    HRESULT NotifyResult() {
        HRESULT hr = Finish(p.conn.connector.get(), &notify, notify_hr);
        notify_hr = ND_SUCCESS;  // consumed
        return hr;
    }
};

TEST_P(Disconnect, NotConnectedR133R138) {
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    Ov a, b;
    EXPECT_ND(ND_CONNECTION_INVALID, Finish(c.get(), &a, c->NotifyDisconnect(&a))) << "R133";
    EXPECT_ND(ND_CONNECTION_INVALID, Finish(c.get(), &b, c->Disconnect(&b))) << "R138";
}

// R134 + COMPAT: the peer disconnects: NotifyDisconnect completes, and every
// outstanding request on our QP completes ND_CANCELED (COMPAT overrides the
// R136 SHOULD NOT).
TEST_P(Disconnect, PeerDisconnectR134) {
    Armed a;
    std::string err = a.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(d, a.p.peer.Call(Msg("disconnect").Set("c", 0)));
    EXPECT_ND(ND_SUCCESS, ST(d, "status"));
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), a.NotifyResult());
    EXPECT_TRUE(a.ReceivesFlushed()) << "COMPAT: a peer disconnect completes outstanding requests with ND_CANCELED";
}

// R135: NotifyDisconnect completes ND_CANCELED only through Cancel; a local
// Disconnect completes it otherwise.
TEST_P(Disconnect, NotifyDisconnectCancelledOnlyByCancelR135) {
    {
        Armed a;
        std::string err = a.Setup(node, addr);
        ASSERT_TRUE(err.empty()) << err;
        ASSERT_ND(ND_SUCCESS, a.p.conn.connector->CancelOverlappedRequests());
        EXPECT_ND(ND_CANCELED, a.NotifyResult());
    }
    {
        Armed a;
        std::string err = a.Setup(node, addr);
        ASSERT_TRUE(err.empty()) << err;
        ASSERT_ND(ND_SUCCESS, a.p.conn.Disconnect());
        HRESULT hr = a.NotifyResult();
        EXPECT_NE(hr, ND_CANCELED) << "a local Disconnect completed NotifyDisconnect with ND_CANCELED";
        EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), hr);
    }
}

// R137: Disconnect flushes the local QP; the peer learns of it.
TEST_P(Disconnect, LocalDisconnectFlushesR137) {
    Armed a;
    std::string err = a.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(n, a.p.peer.Call(Msg("notifydisc").Set("c", 0)));
    ASSERT_ND(ND_PENDING, ST(n, "hr"));
    EXPECT_ND(ND_SUCCESS, a.p.conn.Disconnect());
    EXPECT_TRUE(a.ReceivesFlushed());
    PEER_OK(w, a.p.peer.Call(Msg("notifydiscwait").Set("c", 0)));
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), ST(w, "status")) << "the peer's NotifyDisconnect";
    a.NotifyResult();
    // After Disconnect the QP cannot send (not connected, or flushed).
    ND2_SGE sge = a.m.Sge(0, 8);
    HRESULT hr = a.p.conn.qp->Send(nullptr, &sge, 1, 0);
    if (hr == ND_SUCCESS) {
        EXPECT_TRUE(NextIs(a.p.rcq, ND_CANCELED, Nd2RequestTypeSend));
    } else {
        EXPECT_ND(ND_CONNECTION_INVALID, hr);
    }
}

// Both sides disconnect at about the same time: neither call hangs.
TEST_P(Disconnect, BothSidesAtOnce) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_TRUE(p.peer.Post(Msg("disconnect").Set("c", 0)));
    HRESULT mine = p.conn.Disconnect();
    PEER_OK(r, p.peer.Wait());
    EXPECT_ND_IN(Any(ND_SUCCESS, ND_CONNECTION_INVALID), mine);
    EXPECT_ND_IN(Any(ND_SUCCESS, ND_CONNECTION_INVALID), ST(r, "status"));
}

// R140: releasing the connector of a connected QP without Disconnect
// disconnects (the peer is told) and flushes the QP.
TEST_P(Disconnect, ReleasingTheConnectorDisconnectsR140) {
    Armed a;
    std::string err = a.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(n, a.p.peer.Call(Msg("notifydisc").Set("c", 0)));
    a.p.conn.connector->CancelOverlappedRequests();
    a.NotifyResult();
    a.p.conn.connector.reset();
    EXPECT_TRUE(a.ReceivesFlushed()) << "R140: implicit flush";
    PEER_OK(w, a.p.peer.Call(Msg("notifydiscwait").Set("c", 0)));
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), ST(w, "status")) << "the peer was not told";
}

// R140: releasing QP and connector without Disconnect: the peer is told.
TEST_P(Disconnect, ReleasingEverythingDisconnectsR140) {
    Armed a;
    std::string err = a.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(n, a.p.peer.Call(Msg("notifydisc").Set("c", 0)));
    a.p.conn.connector->CancelOverlappedRequests();
    a.NotifyResult();
    a.p.conn.connector.reset();
    a.p.conn.qp.reset();
    PEER_OK(w, a.p.peer.Call(Msg("notifydiscwait").Set("c", 0)));
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), ST(w, "status"));
}

// COMPAT: the peer process is killed (SIGKILL) in the middle of a
// transfer: NotifyDisconnect fires and every outstanding request on our QP
// completes ND_CANCELED, within the bound.
TEST_P(Disconnect, PeerKilledMidTransfer) {
    constexpr int kWindow = 16;
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 8).Set("recvsize", 65536));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(65536 * kWindow);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int k = 0; k < kWindow; ++k) ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, k * 65536, 65536));
    Ov notify;
    ASSERT_ND(ND_PENDING, p.conn.connector->NotifyDisconnect(&notify));
    PEER_OK(reg, p.peer.Call(Msg("reg").Set("name", "s").Set("size", 65536)));
    ASSERT_TRUE(p.peer.Post(Msg("stream").Set("c", 0).Set("mem", "s").Set("len", 65536).Set("n", 1000000)));
    PEER_OK(started, p.peer.Wait());
    // Receive for a while (re-posting), with our own Sends in flight too.
    int received = 0;
    Deadline d(WaitMs());
    while (received < 200 && !d.Expired()) {
        ND2_RESULT r;
        if (!p.rcq.Next(&r, 100)) continue;
        ASSERT_ND(ND_SUCCESS, r.Status);
        if (r.RequestType == Nd2RequestTypeReceive) {
            ++received;
            ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, (received % kWindow) * 65536, 65536));
        }
    }
    ASSERT_GE(received, 200) << "the stream did not get going";
    // Stopped first, in the middle of its stream, so that our Sends cannot be
    // taken before it dies: a peer that ran on could deliver them, and fill
    // every receive we left posted, in the moment before the kill lands (seen
    // under load), and then nothing would be left to flush.
    ASSERT_TRUE(p.peer.Signal(SIGSTOP));
    for (int k = 0; k < 4; ++k) ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 65536));
    p.peer.Kill();
    // Outstanding requests: kWindow receives (minus those that completed
    // before the kill) and the Sends. All end; none may stay pending.
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), Finish(p.conn.connector.get(), &notify, ND_PENDING))
        << "NotifyDisconnect after the peer was killed";
    int canceled = 0, other = 0;
    std::string others;
    for (;;) {
        ND2_RESULT r;
        if (!p.rcq.Next(&r, QuietMs() * 4)) break;
        if (r.Status == ND_CANCELED) {
            ++canceled;
        } else if (r.Status != ND_SUCCESS) {
            ++other;
            others += Describe(r) + "; ";
        }
    }
    EXPECT_GE(canceled, 1) << "nothing was flushed";
    EXPECT_EQ(other, 0) << "COMPAT: outstanding requests complete with ND_CANCELED: " << others;
    // Nothing is left pending: a Flush now produces nothing new.
    EXPECT_ND(ND_SUCCESS, p.conn.qp->Flush());
    ND2_RESULT extra;
    EXPECT_TRUE(p.rcq.Quiet(&extra)) << "a request was still outstanding: " << Describe(extra);
}

// The link under a connection goes down and stays down (--fault-link names
// it; the case brings it back): nothing tells either side, yet
// NotifyDisconnect fires, and every request accepted before or after the
// link went completes exactly once, with an error status, within the bound.
TEST_P(Disconnect, LinkDownUnderAConnection) {
    if (FaultLink().empty()) GTEST_SKIP() << "needs --fault-link IFACE: a link the suite may take down";
    Armed a;
    std::string err = a.Setup(node, addr, Msg("serve").Set("recvs", 8).Set("recvsize", 4096));
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_SUCCESS, a.p.conn.PostSend(a.m, 32768, 64));  // the connection works
    ASSERT_TRUE(NextIs(a.p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    int sctx[4];
    {
        LinkDown down(FaultLink());
        ASSERT_TRUE(down.ok()) << "ip link set " << FaultLink() << " down failed (root?)";
        for (int k = 0; k < 4; ++k) ASSERT_ND(ND_SUCCESS, a.p.conn.PostSend(a.m, 32768, 64, 0, &sctx[k]));
        EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), a.NotifyResult())
            << "NotifyDisconnect with the link down";
        // Each of the four receives and four Sends, once, failed.
        std::map<void *, int> seen;
        std::string wrong;
        for (int n = 0; n < 8; ++n) {
            ND2_RESULT r;
            if (!a.p.rcq.Next(&r)) break;
            ++seen[r.RequestContext];
            if (SUCCEEDED(r.Status)) wrong += Describe(r) + "; ";
        }
        for (int k = 0; k < 4; ++k) {
            EXPECT_EQ(seen[&a.rctx[k]], 1) << "receive " << k;
            EXPECT_EQ(seen[&sctx[k]], 1) << "Send " << k;
        }
        EXPECT_EQ(wrong, "") << "requests that succeeded with the link down";
        EXPECT_ND(ND_SUCCESS, a.p.conn.qp->Flush());
        ND2_RESULT extra;
        EXPECT_TRUE(a.p.rcq.Quiet(&extra)) << "a request completed twice or late: " << Describe(extra);
        EXPECT_EQ(down.Up(), "");  // the cases after this one need the link
    }
}

// A peer that dies leaves nothing behind in the survivor: after the
// connection is released, this process has no more descriptors and no more
// shared-memory mappings than before it (a channel, the peer's region table
// or a wake descriptor kept for a dead peer would show here). One round
// first, so that what is made once per adapter is there already.
TEST_P(Disconnect, PeerDeathLeavesNoDescriptorsOrMappings) {
    auto round = [&](bool measured) {
        Pair p;
        std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 4).Set("recvsize", 4096));
        ASSERT_TRUE(err.empty()) << err;
        Mem m(4096);
        ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
        ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 4096));
        ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 64));
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend)) << "round " << measured;
        Ov notify;
        ASSERT_ND(ND_PENDING, p.conn.connector->NotifyDisconnect(&notify));
        p.peer.Kill();
        EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), Finish(p.conn.connector.get(), &notify, ND_PENDING));
        EXPECT_TRUE(NextIs(p.rcq, ND_CANCELED, Nd2RequestTypeReceive));
    };
    round(false);
    SleepMs(QuietMs());
    const size_t fds = OpenFdCount(), maps = SharedMappingCount();
    for (int i = 0; i < 3; ++i) round(true);
    // The provider may finish letting go on its own thread: a moment for it.
    Deadline d(WaitMs());
    while ((OpenFdCount() > fds || SharedMappingCount() > maps) && !d.Expired()) SleepMs(10);
    EXPECT_LE(OpenFdCount(), fds) << "descriptors left behind by dead peers";
    EXPECT_LE(SharedMappingCount(), maps) << "shared mappings left behind by dead peers";
}

}  // namespace
}  // namespace ndc
