// Queue pair operations, what they deliver and how a queue pair ends:
// READ_FENCE, inline Send and Write, receives too small, Reads of exact
// length, Sends that need no call at the receiver or time out, Flush
// (connected or not), errors that end the connection, completions of a
// released queue pair. Run once per address (instantiated in
// queue_pair.cpp).
#include <cstring>

#include "suite.h"

namespace ndc {
namespace {

// R099: a READ_FENCE request starts after all earlier Reads completed:
// Read X into L, then Write L to Y with READ_FENCE; Y must hold X.
TEST_P(QueuePair, ReadFenceOrdersAfterEarlierReadsR099) {
    constexpr size_t kSize = 4 << 20;
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Remote x = PeerRegister(p.peer, "x", kSize, kAllRights);
    Remote y = PeerRegister(p.peer, "y", kSize, kAllRights, 0);
    Mem l(kSize);
    ASSERT_ND(ND_SUCCESS, l.Register(node.adapter.get(), node.file, kAllRights));
    for (uint32_t round = 1; round <= 4; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        PEER_OK(f, p.peer.Call(Msg("fill").Set("name", "x").Set("seed", 100 + round)));
        FillPattern(l.data(), kSize, 200 + round);  // stale data the Write must not carry
        ND2_SGE sge = l.Sge(0, kSize);
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge, 1, x.addr, x.token, 0));
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, &sge, 1, y.addr, y.token, ND_OP_FLAG_READ_FENCE));
        EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
        EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
        Msg k = p.peer.Call(Msg("check").Set("name", "y").Set("seed", 100 + round));
        EXPECT_TRUE(k.ok()) << "the fenced Write did not carry what the Read brought: " << k.error();
    }
}

// R100: INLINE Send and Write: SGE tokens ignored, buffers outside any
// region, more SGEs than the QP's limit, buffer reusable at once.
TEST_P(QueuePair, InlineSendAndWriteR100) {
    // 64 bytes in 4 SGEs (less if the adapter's inline size is smaller).
    ULONG total = std::min<ULONG>(64, node.info.MaxInlineDataSize) / 4 * 4;
    if (total == 0) {
        SUCCEED() << "MaxInlineDataSize below 4 bytes: nothing to send inline (Limits.InlineSizeAtLimitAndOnePastR100)";
        return;
    }
    QpShape s;
    s.initiator_sge = 1;
    s.inline_size = std::min<ULONG>(node.info.MaxInlineDataSize, 256);
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", 4096), s);
    ASSERT_TRUE(err.empty()) << err;
    char data[64];
    FillPattern(data, total, 61);
    ND2_SGE sge[4];
    for (ULONG k = 0; k < 4; ++k) sge[k] = ND2_SGE{data + total / 4 * k, total / 4, 0xBAD0000u + k};
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, sge, 4, ND_OP_FLAG_INLINE));
    std::memset(data, 0xEE, sizeof data);
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_EQ(r.U64("b0"), total);
    Remote rb = PeerRegister(p.peer, "rb", 64);
    FillPattern(data, total, 62);
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, sge, 4, rb.addr, rb.token, ND_OP_FLAG_INLINE));
    std::memset(data, 0xEE, sizeof data);
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
    Msg k = p.peer.Call(Msg("check").Set("name", "rb").Set("len", total).Set("seed", 62));
    EXPECT_TRUE(k.ok()) << k.error();
}

// COMPAT (R101): a Send larger than the Receive: the Receive completes
// ND_DATA_OVERRUN, the sender's Send ND_SUCCESS or STATUS_DATA_ERROR (what
// Windows providers answer: over iWARP only success can be known, over IB
// and RoCE the sender hears of it) or ND_CANCELED (the connection ended
// first: COMPAT "its connection may break"), and the receiver's connection
// ends (its other receives are flushed).
TEST_P(QueuePair, ReceiveTooSmallR101) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 3).Set("recvsize", 100));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 200));
    ND2_RESULT r;
    ASSERT_TRUE(p.rcq.Next(&r));
    EXPECT_EQ(r.RequestType, Nd2RequestTypeSend);
    // Over iWARP only success can be known; an IB or RoCE sender hears of
    // the receiver's error (Microsoft's IB provider: STATUS_DATA_ERROR).
    // The connection ending may also reach the sender before its own
    // completion does (siw: the receiver's TERMINATE flushes a Send whose
    // last bytes TCP still held): ND_CANCELED, never a success or error of
    // another kind.
    EXPECT_TRUE(r.Status == ND_SUCCESS || r.Status == static_cast<HRESULT>(0xC000003Eu) || r.Status == ND_CANCELED)
        << "the sender of a Send too large for the receive: " << StatusName(r.Status);
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0).Set("n", 3)));
    ASSERT_EQ(pr.U64("count"), 3u);
    EXPECT_ND(ND_DATA_OVERRUN, ST(pr, "s0")) << "COMPAT: the receive too small completes ND_DATA_OVERRUN";
    EXPECT_ND(ND_CANCELED, ST(pr, "s1")) << "the connection ends: later receives are flushed";
    EXPECT_ND(ND_CANCELED, ST(pr, "s2"));
}

// R102: Flush cancels this QP's requests only, even on a shared CQ.
TEST_P(QueuePair, FlushCancelsOnlyThisQueuePairR102) {
    TwoConnections two;
    std::string err = two.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    int ctx[2][4];
    for (int q = 0; q < 2; ++q)
        for (int k = 0; k < 4; ++k) ASSERT_ND(ND_SUCCESS, two.c[q].PostReceive(m, 0, 64, &ctx[q][k]));
    EXPECT_ND(ND_SUCCESS, two.c[0].qp->Flush());
    for (int k = 0; k < 4; ++k) {
        ND2_RESULT r;
        ASSERT_TRUE(NextIs(two.cq, ND_CANCELED, Nd2RequestTypeReceive, &r)) << "flushed receive " << k;
        EXPECT_EQ(r.RequestContext, &ctx[0][k]);
        EXPECT_EQ(r.QueuePairContext, &two.c[0]);
    }
    ND2_RESULT extra;
    EXPECT_TRUE(two.cq.Quiet(&extra)) << "Flush touched another QP: " << Describe(extra);
    PEER_OK(reg, two.peer.Call(Msg("reg").Set("name", "m").Set("size", 64)));
    PEER_OK(sr, two.peer.Call(Msg("send").Set("c", 1).Set("mem", "m").Set("len", 64)));
    ND2_RESULT r;
    ASSERT_TRUE(NextIs(two.cq, ND_SUCCESS, Nd2RequestTypeReceive, &r)) << "the other QP still receives";
    EXPECT_EQ(r.RequestContext, &ctx[1][0]);
}

// R090: an error completion ends the connection; outstanding and later
// requests complete ND_CANCELED.
TEST_P(QueuePair, ErrorCompletionEndsTheConnectionR090) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    int rctx[3];
    for (int k = 0; k < 3; ++k) ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 64, &rctx[k]));
    Remote rb = PeerRegister(p.peer, "rb", 64);
    ND2_SGE sge = m.Sge(0, 64);
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge, 1, rb.addr, rb.token ^ 0x00FF00FF, 0));
    std::vector<ND2_RESULT> got = p.rcq.Take(4);
    ASSERT_EQ(got.size(), 4u);
    int reads = 0, receives = 0;
    for (const auto &r : got) {
        if (r.RequestType == Nd2RequestTypeRead) {
            ++reads;
            EXPECT_ND(ND_ACCESS_VIOLATION, r.Status);
        } else {
            EXPECT_EQ(r.RequestType, Nd2RequestTypeReceive);
            EXPECT_ND(ND_CANCELED, r.Status) << "outstanding receive after the error";
            EXPECT_EQ(r.RequestContext, &rctx[receives]) << "flush order";
            ++receives;
        }
    }
    EXPECT_EQ(reads, 1);
    // Later requests: refused as not connected, or completed ND_CANCELED.
    HRESULT hr = p.conn.qp->Send(nullptr, &sge, 1, 0);
    if (hr == ND_SUCCESS) {
        EXPECT_TRUE(NextIs(p.rcq, ND_CANCELED, Nd2RequestTypeSend)) << "a Send after the fatal error";
    } else {
        EXPECT_ND(ND_CONNECTION_INVALID, hr);
    }
}

// R108: a Read moves exactly the SGE total from remoteAddress, scattered
// over the SGEs, and touches nothing else.
TEST_P(QueuePair, ReadTransfersExactlyR108) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Remote rb = PeerRegister(p.peer, "rb", 4096, kAllRights, 71);
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    std::memset(m.data(), 0xA5, 4096);
    ND2_SGE sge[2] = {m.Sge(0, 100), m.Sge(200, 300)};
    if (node.info.MaxReadSge >= 2) {
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, sge, 2, rb.addr + 8, rb.token, 0));
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
    } else {  // an adapter that reads into one SGE (siw): one Read per SGE, the same bytes
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge[0], 1, rb.addr + 8, rb.token, 0));
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge[1], 1, rb.addr + 108, rb.token, 0));
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
    }
    std::vector<uint8_t> expect(4096);
    FillPattern(expect.data(), 4096, 71);
    EXPECT_EQ(std::memcmp(m.data(), expect.data() + 8, 100), 0) << "first SGE";
    EXPECT_EQ(std::memcmp(m.data() + 200, expect.data() + 108, 300), 0) << "second SGE";
    for (size_t i = 100; i < 200; ++i) ASSERT_EQ(static_cast<uint8_t>(m.data()[i]), 0xA5) << "gap byte " << i;
    for (size_t i = 500; i < 4096; ++i) ASSERT_EQ(static_cast<uint8_t>(m.data()[i]), 0xA5) << "byte past the read " << i;
}

// R110 (MAY): completions of a released QP may still come out of the CQ;
// the CQ stays consistent.
TEST_P(QueuePair, ReleasedQueuePairCompletionsR110) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int k = 0; k < 4; ++k) ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 64));
    void *ctx = p.conn.context;
    p.conn.connector.reset();
    p.conn.qp.reset();
    for (;;) {
        ND2_RESULT r;
        if (!p.rcq.Next(&r, QuietMs())) break;
        EXPECT_EQ(r.QueuePairContext, ctx);
        EXPECT_ND(ND_CANCELED, r.Status) << "a request of a released QP";
    }
}

// COMPAT: a Send with no receive posted at the peer is not held forever:
// it fails with ND_IO_TIMEOUT within a few seconds and the connection ends.
TEST_P(QueuePair, SendWithoutPeerReceiveTimesOut) {
    Pair p;
    std::string err = p.Connect(node, addr);  // the peer posts no receive
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 64));
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 64));
    uint64_t t0 = NowMs();
    ND2_RESULT r;
    ASSERT_TRUE(p.rcq.NextWhere([](const ND2_RESULT &x) { return x.RequestType == Nd2RequestTypeSend; }, &r,
                                std::max<uint64_t>(WaitMs(), 15000)))
        << "the Send never completed";
    EXPECT_ND(ND_IO_TIMEOUT, r.Status);
    EXPECT_LE(NowMs() - t0, 15000u) << "not within a few seconds";
    EXPECT_TRUE(NextIs(p.rcq, ND_CANCELED, Nd2RequestTypeReceive)) << "the connection ends";
}

// The same with a silent Send and an application that waits (Notify on its
// CQ, then GetOverlappedResult: no GetResults) instead of polling. An error
// completes even a silent request, and nothing but the provider's own
// progress can find this one: it must still come within a few seconds.
TEST_P(QueuePair, SilentSendWithoutPeerReceiveTimesOutWhileWaiting) {
    Pair p;
    std::string err = p.Connect(node, addr);  // the peer posts no receive
    ASSERT_TRUE(err.empty()) << err;
    p.rcq.pump = false;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 64, ND_OP_FLAG_SILENT_SUCCESS));
    uint64_t t0 = NowMs();
    Ov ov;
    HRESULT hr = p.rcq->Notify(ND_CQ_NOTIFY_ERRORS, &ov);
    // A few seconds: ten, where checking only on one in 64 of the progress
    // thread's 200 ms passes took 12.8 s.
    ASSERT_ND(ND_SUCCESS, Finish(p.rcq.get(), &ov, hr, 10000)) << "no error was reported while the application waited";
    EXPECT_LE(NowMs() - t0, 10000u) << "not within a few seconds";
    ND2_RESULT r;
    ASSERT_TRUE(p.rcq.NextWhere([](const ND2_RESULT &x) { return x.RequestType == Nd2RequestTypeSend; }, &r, 1000));
    EXPECT_ND(ND_IO_TIMEOUT, r.Status);
}

// A Send to a peer that has a Receive posted completes (ND_SUCCESS) while
// the peer's process makes no provider call at all, as with RDMA hardware:
// delivery is the adapter's job, not the receiving application's
// (ND2-SPEC §3.8 Receive: "a Receive must be posted before the peer's
// matching Send arrives" is the only condition; COMPAT-NOTES: only a Send
// with *no* receive posted fails with ND_IO_TIMEOUT).
TEST_P(QueuePair, SendToPostedReceiveNeedsNoReceiverCalls) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 4096));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(m.data(), 4096, 3);
    constexpr uint64_t kQuietMs = 2500;
    ASSERT_TRUE(p.peer.Post(Msg("quiet").Set("ms", kQuietMs)));  // no provider calls, no Notify armed
    SleepMs(50);
    uint64_t t0 = NowMs();
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 4096));
    ND2_RESULT r;
    bool done = p.rcq.Next(&r, kQuietMs - 1000);
    uint64_t took = NowMs() - t0;
    PEER_OK(q, p.peer.Wait(kQuietMs + WaitMs()));
    ASSERT_TRUE(done) << "the Send did not complete while the receiver made no calls";
    EXPECT_ND(ND_SUCCESS, r.Status) << "after " << took << " ms";
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_ND(ND_SUCCESS, ST(pr, "s0"));
}


// R102: Flush completes every outstanding request of the QP with
// ND_CANCELED, connected or not (receives may be posted before connecting,
// R094, so an unconnected QP can have requests to flush).
TEST_P(QueuePair, FlushUnconnectedQueuePairR102) {
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64, false));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int i = 0; i < 4; ++i)
        ASSERT_ND(ND_SUCCESS, c.PostReceive(m, 0, 64, reinterpret_cast<void *>(uintptr_t(i + 1))));
    EXPECT_ND(ND_SUCCESS, c.qp->Flush());
    for (int i = 0; i < 4; ++i) {
        ND2_RESULT r;
        ASSERT_TRUE(NextIs(cq, ND_CANCELED, Nd2RequestTypeReceive, &r)) << "receive " << i << " was not flushed";
        EXPECT_EQ(r.RequestContext, reinterpret_cast<void *>(uintptr_t(i + 1)));
    }
}

}  // namespace
}  // namespace ndc
