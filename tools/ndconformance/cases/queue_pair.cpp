// Queue pair operations: completion contents and order, posting rules
// (unconnected QP, invalid flags, failed posts, SGE arrays), zero length,
// SILENT_SUCCESS and every allowed flag. READ_FENCE, inline data, short
// receives, Flush and errors that end the connection:
// queue_pair_delivery.cpp. Run once per address.
#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(QueuePair);

// R047, R064: one CQ for both queues and for several QPs, and split CQs;
// every completion carries the QP context, request context, type and (for
// Receives) the exact byte count, on the right CQ.
TEST_P(QueuePair, CompletionsCarryContextOnTheRightCqR047R064) {
    for (bool split : {false, true}) {
        SCOPED_TRACE(split ? "split receive/initiator CQs" : "one CQ for both queues");
        Peer peer;
        ASSERT_EQ(peer.Start(addr), "");
        PEER_OK(l, peer.Call(Msg("listen")));
        IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
        Cq rcq, icq;
        ASSERT_ND(ND_SUCCESS, rcq.Create(node.adapter.get(), node.file, 256));
        ASSERT_ND(ND_SUCCESS, icq.Create(node.adapter.get(), node.file, 256));
        Cq &initiator = split ? icq : rcq;
        // Two QPs share the CQ(s).
        Conn c[2];
        int qp_ctx[2];
        ASSERT_TRUE(peer.Post(Msg("serve").Set("n", 2).Set("recvs", 4).Set("recvsize", 8192)));
        for (int i = 0; i < 2; ++i) {
            ASSERT_ND(ND_SUCCESS, c[i].Create(node, rcq, initiator, QpShape(), &qp_ctx[i]));
            ASSERT_ND(ND_SUCCESS, c[i].Connect(dest));
        }
        PEER_OK(s, peer.Wait());
        Mem m(65536);
        ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
        PEER_OK(reg, peer.Call(Msg("reg").Set("name", "m").Set("size", 8192).Set("seed", 4)));
        // Receives on both QPs; the peer sends 0, 100 and 5000 bytes.
        size_t sizes[3] = {0, 100, 5000};
        int rctx[2][3];
        for (int q = 0; q < 2; ++q)
            for (int k = 0; k < 3; ++k) ASSERT_ND(ND_SUCCESS, c[q].PostReceive(m, (q * 3 + k) * 8192, 8192, &rctx[q][k]));
        for (int q = 0; q < 2; ++q)
            for (int k = 0; k < 3; ++k) {
                PEER_OK(sr, peer.Call(Msg("send").Set("c", q).Set("mem", "m").Set("len", sizes[k])));
            }
        for (int q = 0; q < 2; ++q) {
            int seen = 0;
            for (int k = 0; k < 3; ++k) {
                ND2_RESULT r;
                ASSERT_TRUE(rcq.NextWhere([&](const ND2_RESULT &x) { return x.QueuePairContext == &qp_ctx[q]; }, &r))
                    << "receive " << k << " of QP " << q << " missing";
                EXPECT_ND(ND_SUCCESS, r.Status);
                EXPECT_EQ(r.RequestType, Nd2RequestTypeReceive);
                EXPECT_EQ(r.RequestContext, &rctx[q][k]) << "receive order within the QP (R063)";
                EXPECT_EQ(r.BytesTransferred, sizes[k]);
                ++seen;
            }
            EXPECT_EQ(seen, 3);
        }
        if (split) {
            ND2_RESULT extra;
            EXPECT_TRUE(icq.Quiet(&extra)) << "a receive completion went to the initiator CQ: " << Describe(extra);
        }
        // Initiator requests of every type, with their contexts.
        Remote rb = PeerRegister(peer, "rb", 8192, kAllRights, 6);
        int ictx[4];
        ND2_SGE sge = m.Sge(0, 512);
        ASSERT_ND(ND_SUCCESS, c[1].qp->Send(&ictx[0], &sge, 1, 0));
        ASSERT_ND(ND_SUCCESS, c[1].qp->Write(&ictx[1], &sge, 1, rb.addr, rb.token, 0));
        ASSERT_ND(ND_SUCCESS, c[1].qp->Read(&ictx[2], &sge, 1, rb.addr, rb.token, 0));
        Ref<IND2MemoryWindow> mw;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
        ASSERT_ND(ND_SUCCESS, c[1].qp->Bind(&ictx[3], m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ));
        ND2_REQUEST_TYPE types[4] = {Nd2RequestTypeSend, Nd2RequestTypeWrite, Nd2RequestTypeRead, Nd2RequestTypeBind};
        for (int k = 0; k < 4; ++k) {
            ND2_RESULT r;
            ASSERT_TRUE(initiator.Next(&r)) << "initiator completion " << k;
            EXPECT_ND(ND_SUCCESS, r.Status);
            EXPECT_EQ(r.RequestType, types[k]) << "initiator completions in post order (R063)";
            EXPECT_EQ(r.RequestContext, &ictx[k]);
            EXPECT_EQ(r.QueuePairContext, &qp_ctx[1]);
        }
        if (split) {
            ND2_RESULT extra;
            EXPECT_TRUE(rcq.Quiet(&extra)) << "an initiator completion went to the receive CQ: " << Describe(extra);
        }
    }
}

TEST_P(QueuePair, UnconnectedQueuePairR093R094) {
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ND2_SGE sge = m.Sge(0, 64);
    EXPECT_ND(ND_SUCCESS, c.qp->Receive(nullptr, &sge, 1)) << "R094";
    EXPECT_ND(ND_CONNECTION_INVALID, c.qp->Send(nullptr, &sge, 1, 0));
    EXPECT_ND(ND_CONNECTION_INVALID, c.qp->Write(nullptr, &sge, 1, m.addr(), m.remote_token(), 0));
    EXPECT_ND(ND_CONNECTION_INVALID, c.qp->Read(nullptr, &sge, 1, m.addr(), m.remote_token(), 0));
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    EXPECT_ND(ND_CONNECTION_INVALID, c.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 64, ND_OP_FLAG_ALLOW_READ));
    EXPECT_ND(ND_CONNECTION_INVALID, c.qp->Invalidate(nullptr, mw.get(), 0));
    ND2_RESULT extra;
    EXPECT_TRUE(cq.Quiet(&extra)) << "a refused post produced a completion: " << Describe(extra);
}

TEST_P(QueuePair, InvalidFlagsR097) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", 64));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ND2_SGE sge = m.Sge(0, 64);
    constexpr ULONG kUndefined = 0x00100000;
    EXPECT_ND(ND_INVALID_PARAMETER_4, p.conn.qp->Send(nullptr, &sge, 1, kUndefined));
    EXPECT_ND(ND_INVALID_PARAMETER_6, p.conn.qp->Write(nullptr, &sge, 1, m.addr(), m.remote_token(), kUndefined));
    // The QP is still fine (R089).
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
}

// R089: a post that fails at once is not queued and harms nothing.
TEST_P(QueuePair, FailedPostLeavesQueuePairUsableR089) {
    Pair p;
    QpShape s;
    s.initiator_sge = 1;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", 4096), s);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    std::vector<ND2_SGE> sges(node.info.MaxInitiatorSge + 1, m.Sge(0, 8));
    EXPECT_ND(ND_DATA_OVERRUN, p.conn.qp->Send(nullptr, sges.data(), static_cast<ULONG>(sges.size()), 0));
    ND2_RESULT extra;
    EXPECT_TRUE(p.rcq.Quiet(&extra)) << "a refused post completed: " << Describe(extra);
    FillPattern(m.data(), 4096, 13);
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 4096));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0).Set("extra", 1)));
    EXPECT_EQ(r.U64("count"), 1u);
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    EXPECT_FALSE(r.Has("extra")) << "the refused Send reached the peer: " << r.Str("extra");
}

// R091: SGE arrays are read during the call only.
TEST_P(QueuePair, SgeArraysReadOnlyDuringTheCallR091) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", 8192));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(65536), other(65536);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, other.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(m.data(), 8192, 44);
    {
        ND2_SGE sge[2] = {m.Sge(0, 4096), m.Sge(4096, 4096)};
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, sge, 2, 0));
        sge[0] = other.Sge(0, 16);  // scribble over the array
        sge[1] = other.Sge(16, 16);
    }
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_EQ(r.U64("b0"), 8192u);
    // A Receive whose SGE array is overwritten right after posting.
    {
        ND2_SGE sge = m.Sge(16384, 8192);
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Receive(nullptr, &sge, 1));
        sge = other.Sge(0, 8);
    }
    PEER_OK(reg, p.peer.Call(Msg("reg").Set("name", "s").Set("size", 8192)));
    PEER_OK(sr, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "s").Set("len", 5000).Set("seed", 45)));
    ND2_RESULT res;
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeReceive, &res));
    EXPECT_EQ(res.BytesTransferred, 5000u);
    EXPECT_EQ(CheckPattern(m.data() + 16384, 5000, 45), "") << "the receive did not land where first described";
}

// R092: zero-length Send, Receive, Read and Write with no SGEs.
TEST_P(QueuePair, ZeroLengthOperationsR092) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", 64));
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Receive(&p, nullptr, 0));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, nullptr, 0, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    EXPECT_EQ(r.U64("b0"), 0u) << "a zero-byte Send must complete the peer's Receive with 0 bytes";
    PEER_OK(reg, p.peer.Call(Msg("reg").Set("name", "m").Set("size", 64)));
    PEER_OK(sr, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "m").Set("len", 0)));
    ND2_RESULT rr;
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeReceive, &rr));
    EXPECT_EQ(rr.BytesTransferred, 0u);
    EXPECT_EQ(rr.RequestContext, &p);
    Remote rb = PeerRegister(p.peer, "rb", 64);
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, nullptr, 0, rb.addr, rb.token, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, nullptr, 0, rb.addr, rb.token, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
}

// R063: initiator completions in post order (mixed types and sizes),
// receive completions in post order.
TEST_P(QueuePair, CompletionOrderWithinAQueuePairR063) {
    constexpr int kN = 64;
    Pair p;
    QpShape s;
    s.initiator_depth = 2 * kN;
    s.receive_depth = 2 * kN;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", kN).Set("recvsize", 65536).Set("rdepth", kN), s);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(65536 * 2);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", 65536, kAllRights, 2);
    for (int i = 0; i < kN; ++i) {
        size_t len = (i % 3 == 0) ? 65536 : (i % 3 == 1) ? 7 : 3000;  // large and small paths interleaved
        ND2_SGE sge = m.Sge(0, len);
        void *ctx = reinterpret_cast<void *>(uintptr_t(i + 1));
        HRESULT hr = i % 4 == 3 ? p.conn.qp->Write(ctx, &sge, 1, rb.addr, rb.token, 0)
                                : p.conn.qp->Send(ctx, &sge, 1, 0);
        ASSERT_ND(ND_SUCCESS, hr) << "post " << i;
    }
    for (int i = 0; i < kN; ++i) {
        ND2_RESULT r;
        ASSERT_TRUE(p.rcq.Next(&r)) << "completion " << i;
        EXPECT_ND(ND_SUCCESS, r.Status);
        EXPECT_EQ(r.RequestContext, reinterpret_cast<void *>(uintptr_t(i + 1))) << "completion " << i << " out of order";
    }
    // Receives: post kN, the peer sends kN.
    for (int i = 0; i < kN; ++i) {
        ND2_SGE sge = m.Sge(0, 65536);
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Receive(reinterpret_cast<void *>(uintptr_t(1000 + i)), &sge, 1));
    }
    PEER_OK(reg, p.peer.Call(Msg("reg").Set("name", "s").Set("size", 65536)));
    PEER_OK(sr, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "s").Set("len", 100).Set("n", kN).Set("stride", 0)));
    for (int i = 0; i < kN; ++i) {
        ND2_RESULT r;
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeReceive, &r)) << "receive " << i;
        EXPECT_EQ(r.RequestContext, reinterpret_cast<void *>(uintptr_t(1000 + i))) << "receive " << i << " out of order";
    }
}

// R098: SILENT_SUCCESS hides successful completions only.
TEST_P(QueuePair, SilentSuccessHidesOnlySuccessR098) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 4).Set("recvsize", 4096));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(8192);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", 4096);
    constexpr ULONG S = ND_OP_FLAG_SILENT_SUCCESS;
    ND2_SGE sge = m.Sge(0, 1000);
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, S));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, &sge, 1, rb.addr, rb.token, S));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge, 1, rb.addr, rb.token, S));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ | S));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Invalidate(nullptr, mw.get(), S));
    int marker;
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(&marker, &sge, 1, 0));
    ND2_RESULT r;
    ASSERT_TRUE(p.rcq.Next(&r));
    EXPECT_EQ(r.RequestContext, &marker) << "a silent request produced a completion: " << Describe(r);
    EXPECT_TRUE(p.rcq.Quiet(&r)) << "extra completion: " << Describe(r);
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0).Set("n", 2)));
    EXPECT_EQ(pr.U64("count"), 2u) << "both Sends reach the peer";
    // A failing silent request is reported.
    int bad;
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(&bad, &sge, 1, rb.addr, rb.token ^ 0x5A5A5A5A, S));
    ASSERT_TRUE(NextIs(p.rcq, ND_ACCESS_VIOLATION, Nd2RequestTypeRead, &r)) << "a failed silent Read must be reported";
    EXPECT_EQ(r.RequestContext, &bad);
}

// R098 with more silent requests than the queue holds, as a ping-pong
// posts its Sends: a silent request that succeeded no longer holds its
// place, though nothing ever polls for it (no CQ is polled here). A full
// queue may refuse for a while (ND_NO_MORE_ENTRIES, requests in flight),
// never for good. (A verbs device keeps an unsignaled request's slot until
// a later completion: the provider has to make one.)
TEST_P(QueuePair, SilentRequestsBeyondTheQueueDepthAreAllPosted) {
    constexpr int kSends = 48, kWrites = 48;
    Pair p;
    QpShape shape;
    shape.initiator_depth = 4;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", kSends).Set("recvsize", 64), shape, true);
    ASSERT_TRUE(err.empty()) << err;
    p.rcq.pump = p.icq.pump = false;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", 4096);
    ND2_SGE sge = m.Sge(0, 64);
    Deadline d(WaitMs());
    int posted = 0;
    for (int i = 0; i < kSends + kWrites && !d.Expired();) {
        HRESULT hr = i < kSends ? p.conn.qp->Send(nullptr, &sge, 1, ND_OP_FLAG_SILENT_SUCCESS)
                                : p.conn.qp->Write(nullptr, &sge, 1, rb.addr, rb.token, ND_OP_FLAG_SILENT_SUCCESS);
        if (hr == ND_NO_MORE_ENTRIES) {
            SleepMs(1);  // requests in flight: nothing signals room, so try again
            continue;
        }
        ASSERT_ND(ND_SUCCESS, hr) << "request " << i;
        posted = ++i;
    }
    EXPECT_EQ(posted, kSends + kWrites) << "silent requests still held the queue after " << WaitMs() << " ms";
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0).Set("n", kSends)));
    EXPECT_EQ(pr.U64("count"), static_cast<uint64_t>(kSends)) << "the peer received every Send";
    ND2_RESULT r;
    EXPECT_TRUE(p.icq.Quiet(&r)) << "a silent request produced a completion: " << Describe(r);
}

// Every flag each operation accepts (§2.4.4), alone: posted and completed.
TEST_P(QueuePair, EveryAllowedFlagIsAccepted) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 4).Set("recvsize", 256));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(8192);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", 4096);
    ND2_SGE sge = m.Sge(0, 128);
    constexpr ULONG F = ND_OP_FLAG_READ_FENCE;
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, F));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, ND_OP_FLAG_SEND_AND_SOLICIT_EVENT));
    const ND2_SGE small = m.Sge(0, std::min<ULONG>(128, node.info.MaxInlineDataSize));  // siw inlines 80 bytes
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &small, 1, ND_OP_FLAG_INLINE));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, &sge, 1, rb.addr, rb.token, F));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, &sge, 1, rb.addr, rb.token, F));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, &small, 1, rb.addr, rb.token, ND_OP_FLAG_INLINE));
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ | F));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Invalidate(nullptr, mw.get(), F));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_WRITE));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Invalidate(nullptr, mw.get(), 0));
    ND2_REQUEST_TYPE types[] = {Nd2RequestTypeSend,  Nd2RequestTypeSend,  Nd2RequestTypeSend,
                                Nd2RequestTypeRead,  Nd2RequestTypeWrite, Nd2RequestTypeWrite,
                                Nd2RequestTypeBind,  Nd2RequestTypeInvalidate, Nd2RequestTypeBind,
                                Nd2RequestTypeInvalidate};
    for (ND2_REQUEST_TYPE t : types) EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, t));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0).Set("n", 3)));
    EXPECT_EQ(r.U64("count"), 3u);
}

}  // namespace
}  // namespace ndc
