// Adapter limits in use, each at the limit (works) and one past it (the
// documented error): queue depths, SGE counts, transfer length, inline
// size, private data sizes, read limits and concurrent Reads.
#include "suite.h"

namespace ndc {
namespace {

// Receive queue depth at the advertised maximum (COMPAT: applications post
// that many) and one past it (R095). Receives work unconnected (R094).
TEST_F(Limits, ReceiveQueueDepthAtLimitAndOnePastR095) {
    ULONG max = node.info.MaxReceiveQueueDepth;
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, std::min<ULONG>(node.info.MaxCompletionQueueDepth,
                                                                                  max + 16)));
    Conn c;
    QpShape s;
    s.receive_depth = max;
    s.receive_sge = 1;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq, s));
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (ULONG i = 0; i < max; ++i) {
        HRESULT hr = c.PostReceive(m, 0, 64);
        ASSERT_ND(ND_SUCCESS, hr) << "receive " << i << " of the advertised " << max;
    }
    EXPECT_ND(ND_NO_MORE_ENTRIES, c.PostReceive(m, 0, 64)) << "one past MaxReceiveQueueDepth";
}

TEST_F(Limits, ReceiveSgeCountAtLimitAndOnePastR096) {
    ULONG max = node.info.MaxReceiveSge;
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    QpShape s;
    s.receive_sge = max;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq, s));
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    std::vector<ND2_SGE> sge(max + 1, m.Sge(0, 16));
    EXPECT_ND(ND_SUCCESS, c.qp->Receive(nullptr, sge.data(), max));
    EXPECT_ND(ND_DATA_OVERRUN, c.qp->Receive(nullptr, sge.data(), max + 1));
    // The failed post left the QP usable (R089).
    EXPECT_ND(ND_SUCCESS, c.qp->Receive(nullptr, sge.data(), 1));
}

// The initiator side at the limits, against a peer. Send/Write gather from
// MaxInitiatorSge SGEs, Read scatters into MaxReadSge; one more SGE is
// ND_DATA_OVERRUN (R096).
TEST_F(Limits, InitiatorSgeCountsAtLimitAndOnePastR096) {
    const ND2_ADAPTER_INFO &i = node.info;
    QpShape s;
    s.initiator_sge = i.MaxInitiatorSge;
    Pair p;
    size_t chunk = 64, total = chunk * i.MaxInitiatorSge;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", total), s);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(total * 2);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(m.data(), total, 31);
    std::vector<ND2_SGE> sge;
    for (ULONG k = 0; k <= i.MaxInitiatorSge; ++k) sge.push_back(m.Sge(k * chunk, chunk));
    EXPECT_ND(ND_DATA_OVERRUN, p.conn.qp->Send(nullptr, sge.data(), i.MaxInitiatorSge + 1, 0));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, sge.data(), i.MaxInitiatorSge, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    EXPECT_EQ(r.U64("b0"), total);
    // Write gathers the same way; Read scatters from the peer's buffer.
    Remote rb = PeerRegister(p.peer, "rb", total, kAllRights, 32);
    EXPECT_ND(ND_DATA_OVERRUN, p.conn.qp->Write(nullptr, sge.data(), i.MaxInitiatorSge + 1, rb.addr, rb.token, 0));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, sge.data(), i.MaxInitiatorSge, rb.addr, rb.token, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
    EXPECT_TRUE(p.peer.Call(Msg("check").Set("name", "rb").Set("len", total).Set("seed", 31)).ok());
    std::vector<ND2_SGE> rsge;
    size_t rchunk = total / i.MaxReadSge;
    for (ULONG k = 0; k <= i.MaxReadSge; ++k) rsge.push_back(m.Sge(total + k * rchunk, rchunk));
    if (i.MaxReadSge < s.initiator_sge) {
        EXPECT_ND(ND_DATA_OVERRUN, p.conn.qp->Read(nullptr, rsge.data(), i.MaxReadSge + 1, rb.addr, rb.token, 0));
    } else {
        EXPECT_ND(ND_DATA_OVERRUN, p.conn.qp->Read(nullptr, rsge.data(), i.MaxReadSge + 1, rb.addr, rb.token, 0));
    }
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(nullptr, rsge.data(), i.MaxReadSge, rb.addr, rb.token, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
    EXPECT_EQ(CheckPattern(m.data() + total, rchunk * i.MaxReadSge, 31), "");
}

// R096: more data than MaxTransferLength in one request is refused: at
// once (ND_BUFFER_OVERFLOW) or in the completion (ND_DATA_OVERRUN): Send,
// Write and Read.
TEST_F(Limits, TransferLengthOnePastTheLimitR096) {
    ULONG max = node.info.MaxTransferLength;
    QpShape s;
    s.initiator_sge = std::min<ULONG>(2, std::min(node.info.MaxInitiatorSge, node.info.MaxReadSge));
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve"), s);
    ASSERT_TRUE(err.empty()) << err;
    // One SGE of max + 1 bytes; if that does not fit a ULONG, two SGEs over
    // one region of half the size. The memory is never touched.
    bool two = max == 0xFFFFFFFFu;
    if (two && s.initiator_sge < 2) {
        SUCCEED() << "MaxTransferLength is the largest ULONG and only one SGE is allowed: it cannot be exceeded";
        return;
    }
    size_t half = two ? max / 2 + 1 : size_t(max) + 1;
    Mem m(half);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", uint64_t(max) + 1);  // large enough: only the length is wrong
    ND2_SGE sge[2] = {m.Sge(0, half), m.Sge(0, two ? max + 1 - half : 0)};
    ULONG nsge = two ? 2 : 1;
    auto outcome = [&](HRESULT hr, ND2_REQUEST_TYPE type) {
        if (hr == ND_SUCCESS) {
            ND2_RESULT r;
            if (!p.rcq.Next(&r)) return kHang;
            EXPECT_EQ(r.RequestType, type);
            return r.Status;
        }
        return hr;
    };
    EXPECT_ND_IN(Any(ND_BUFFER_OVERFLOW, ND_DATA_OVERRUN), outcome(p.conn.qp->Send(nullptr, sge, nsge, 0), Nd2RequestTypeSend))
        << "Send of MaxTransferLength + 1 bytes";
    EXPECT_ND_IN(Any(ND_BUFFER_OVERFLOW, ND_DATA_OVERRUN),
                 outcome(p.conn.qp->Write(nullptr, sge, nsge, rb.addr, rb.token, 0), Nd2RequestTypeWrite))
        << "Write of MaxTransferLength + 1 bytes";
    EXPECT_ND_IN(Any(ND_BUFFER_OVERFLOW, ND_DATA_OVERRUN),
                 outcome(p.conn.qp->Read(nullptr, sge, nsge, rb.addr, rb.token, 0), Nd2RequestTypeRead))
        << "Read of MaxTransferLength + 1 bytes";
}

// COMPAT: more SGEs than the QP was created for may be accepted if the
// adapter allows them; if accepted, the data must be right.
TEST_F(Limits, MoreSgesThanTheQpWasCreatedFor) {
    // The QP allows one SGE fewer than the adapter; the Send uses the
    // adapter's maximum (with an adapter of one SGE: two, beyond the adapter,
    // which must be refused).
    ULONG adapter_max = node.info.MaxInitiatorSge;
    ULONG n = std::max<ULONG>(2, adapter_max);
    QpShape s;
    s.initiator_sge = std::max<ULONG>(1, adapter_max - 1);
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 100 * n), s);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(100 * n);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(m.data(), 100 * n, 5);
    std::vector<ND2_SGE> sge;
    for (ULONG k = 0; k < n; ++k) sge.push_back(m.Sge(100 * k, 100));
    HRESULT hr = p.conn.qp->Send(nullptr, sge.data(), n, 0);
    if (n > adapter_max) {
        EXPECT_ND(ND_DATA_OVERRUN, hr) << "more SGEs than the adapter allows";
        return;
    }
    ASSERT_ND_IN(Any(ND_SUCCESS, ND_DATA_OVERRUN), hr);
    if (hr == ND_SUCCESS) {
        EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
        PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
        EXPECT_EQ(r.U64("b0"), 100u * n);
    }
}

// Initiator queue depth at the advertised maximum, and one past it (R095).
// The peer posts no receive and stays quiet, so the Sends stay queued.
TEST_F(Limits, InitiatorQueueDepthAtLimitAndOnePastR095) {
    ULONG max = node.info.MaxInitiatorQueueDepth;
    QpShape s;
    s.initiator_depth = max;
    s.initiator_sge = 1;
    Pair p;
    ULONG cq_depth = std::min<ULONG>(node.info.MaxCompletionQueueDepth, 2 * max + 64);
    std::string err = p.Connect(node, addr, Msg("serve"), s, false, cq_depth);
    ASSERT_TRUE(err.empty()) << err;
    p.rcq.pump = false;
    PEER_OK(q, p.peer.Call(Msg("pump").Set("on", 0)));
    HRESULT hr = ND_SUCCESS;
    ULONG posted = 0;
    for (; posted < max; ++posted)
        if ((hr = p.conn.qp->Send(nullptr, nullptr, 0, 0)) != ND_SUCCESS) break;
    EXPECT_EQ(posted, max) << "Send " << posted << " of the advertised " << max << ": " << StatusName(hr);
    EXPECT_ND(ND_NO_MORE_ENTRIES, p.conn.qp->Send(nullptr, nullptr, 0, 0)) << "one past MaxInitiatorQueueDepth";
    p.peer.Kill();
}

// A full initiator queue refuses every kind of initiator request, not only
// Send: Read, Write, Bind and Invalidate take a slot too, and each gets
// ND_NO_MORE_ENTRIES at once, with nothing queued (R095). The peer posts no
// receive and stays quiet, so the Sends that fill the queue stay queued.
TEST_F(Limits, FullInitiatorQueueRefusesEveryRequestTypeR095) {
    const ULONG depth = std::min<ULONG>(4, node.info.MaxInitiatorQueueDepth);
    QpShape s;
    s.initiator_depth = depth;
    s.initiator_sge = 1;
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve"), s);
    ASSERT_TRUE(err.empty()) << err;
    p.rcq.pump = false;
    PEER_OK(q, p.peer.Call(Msg("pump").Set("on", 0)));
    Mem m(8192);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    // A window bound while there is room, to invalidate once there is none.
    Ref<IND2MemoryWindow> bound, spare;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, bound.put_void()));
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, spare.put_void()));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Bind(nullptr, m.mr(), bound.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    for (ULONG i = 0; i < depth; ++i) ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, nullptr, 0, 0)) << "Send " << i;
    ND2_SGE sge = m.Sge(4096, 64);
    const UINT64 there = reinterpret_cast<UINT64>(m.data());
    EXPECT_ND(ND_NO_MORE_ENTRIES, p.conn.qp->Send(nullptr, nullptr, 0, 0)) << "Send";
    EXPECT_ND(ND_NO_MORE_ENTRIES, p.conn.qp->Read(nullptr, &sge, 1, there, m.remote_token(), 0)) << "Read";
    EXPECT_ND(ND_NO_MORE_ENTRIES, p.conn.qp->Write(nullptr, &sge, 1, there, m.remote_token(), 0)) << "Write";
    EXPECT_ND(ND_NO_MORE_ENTRIES,
              p.conn.qp->Bind(nullptr, m.mr(), spare.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ)) << "Bind";
    EXPECT_ND(ND_NO_MORE_ENTRIES, p.conn.qp->Invalidate(nullptr, bound.get(), 0)) << "Invalidate";
    // Refused means not done: the window is still bound (its region busy).
    Ov ov;
    HRESULT hr = m.mr()->Deregister(&ov);
    EXPECT_ND(ND_DEVICE_BUSY, hr) << "the refused Invalidate unbound the window";
    if (hr == ND_PENDING) Finish(m.mr(), &ov, hr);
    p.peer.Kill();
}

TEST_F(Limits, InlineSizeAtLimitAndOnePastR100) {
    ULONG max = node.info.MaxInlineDataSize;  // 0 works too: empty inline at the limit, 1 byte past it
    QpShape s;
    s.inline_size = max;
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 2).Set("recvsize", max + 64), s);
    ASSERT_TRUE(err.empty()) << err;
    std::vector<char> data(max + 1);  // not registered: inline needs no MR
    FillPattern(data.data(), max, 77);
    ND2_SGE sge{data.data(), max, 0xDEADBEEF};
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, ND_OP_FLAG_INLINE));
    std::memset(data.data(), 0, data.size());  // reusable as soon as the call returns
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    EXPECT_EQ(r.U64("b0"), max);
    // One byte more than the QP's inline size: refused at once, or failed.
    sge.BufferLength = max + 1;
    HRESULT hr = p.conn.qp->Send(nullptr, &sge, 1, ND_OP_FLAG_INLINE);
    if (SUCCEEDED(hr)) {
        ND2_RESULT res;
        ASSERT_TRUE(p.rcq.Next(&res));
        EXPECT_TRUE(FAILED(res.Status)) << "an inline Send above the inline size succeeded";
    } else {
        SUCCEED() << "refused at once with " << StatusName(hr);
    }
}

// Private data at MaxCallerData / MaxCalleeData, and one byte more
// (R115, R125; COMPAT: the connector stays usable for a retry).
TEST_F(Limits, PrivateDataAtLimitAndOnePastR115R125) {
    ULONG caller = node.info.MaxCallerData, callee = node.info.MaxCalleeData;
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    std::string big(caller + 1, 'c');
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<char>('a' + k % 26);
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
    Ov ov;
    EXPECT_ND(ND_INVALID_BUFFER_SIZE, c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, big.data(),
                                                           caller + 1, &ov));
    // The same connector, at the limit.
    ASSERT_TRUE(peer.Post(Msg("getreq")));
    ov.Reuse();
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 8, 8, big.data(), caller, &ov);
    PEER_OK(req, peer.Wait());
    EXPECT_GE(req.U64("pdlen"), caller);
    EXPECT_EQ(req.Str("pd").substr(0, 2 * caller), PdHex(big.substr(0, caller)))
        << "the passive side did not get the caller's private data";
    // Passive: one byte over MaxCalleeData, then exactly at it.
    std::string reply(callee + 1, 'r');
    for (size_t k = 0; k < reply.size(); ++k) reply[k] = static_cast<char>('A' + k % 26);
    PEER_OK(a1, peer.Call(Msg("accept").Set("c", 0).Set("pd", PdHex(reply))));
    EXPECT_ND(ND_INVALID_BUFFER_SIZE, ST(a1, "status")) << "Accept with MaxCalleeData + 1 bytes";
    ASSERT_TRUE(peer.Post(Msg("accept").Set("c", 0).Set("pd", PdHex(reply.substr(0, callee)))));
    hr = Finish(c.connector.get(), &ov, hr);
    ASSERT_ND(ND_SUCCESS, hr) << "Connect";
    ULONG len = 0;
    EXPECT_ND(ND_BUFFER_OVERFLOW, c.connector->GetPrivateData(nullptr, &len));
    EXPECT_GE(len, callee);
    std::vector<char> got(len);
    EXPECT_ND(ND_SUCCESS, c.connector->GetPrivateData(got.data(), &len));
    EXPECT_EQ(std::string(got.data(), std::min<size_t>(callee, got.size())), reply.substr(0, callee));
    EXPECT_ND(ND_SUCCESS, c.CompleteConnect());
    PEER_OK(a2, peer.Wait());
    EXPECT_ND(ND_SUCCESS, ST(a2, "status"));

    // Reject: one byte over, then at the limit; the active side reads it.
    Conn c2;
    ASSERT_ND(ND_SUCCESS, c2.Create(node, cq, cq));
    ASSERT_TRUE(peer.Post(Msg("getreq")));
    ASSERT_ND(ND_SUCCESS, c2.connector->Bind(local.sa(), local.length()));
    Ov ov2;
    hr = c2.connector->Connect(c2.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov2);
    PEER_OK(req2, peer.Wait());
    PEER_OK(rj1, peer.Call(Msg("reject").Set("c", req2.U64("c")).Set("pd", PdHex(reply))));
    EXPECT_ND(ND_INVALID_BUFFER_SIZE, ST(rj1, "status")) << "Reject with MaxCalleeData + 1 bytes";
    PEER_OK(rj2, peer.Call(Msg("reject").Set("c", req2.U64("c")).Set("pd", PdHex(reply.substr(0, callee)))));
    EXPECT_ND(ND_SUCCESS, ST(rj2, "status"));
    EXPECT_ND(ND_CONNECTION_REFUSED, Finish(c2.connector.get(), &ov2, hr));
    len = callee;
    std::vector<char> rj(callee + 64);
    len = static_cast<ULONG>(rj.size());
    EXPECT_ND(ND_SUCCESS, c2.connector->GetPrivateData(rj.data(), &len));
    EXPECT_GE(len, callee);
    EXPECT_EQ(std::string(rj.data(), std::min<size_t>(callee, len)), reply.substr(0, callee));
}

// Read limits (§6.4, R120): offers are clamped to the adapter and to the
// peer's matching offer; GetReadLimits shows the result on both sides.
TEST_F(Limits, ReadLimitsNegotiatedAndClampedR120) {
    const ND2_ADAPTER_INFO &i = node.info;
    ULONG max_in = i.MaxInboundReadLimit, max_out = i.MaxOutboundReadLimit;  // the expectations clamp to them
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    struct Case {
        ULONG a_in, a_out, p_in, p_out;
    } cases[] = {
        {3, 5, 100, 100},               // passive asks for more than offered
        {3, 5, 2, 1},                   // passive asks for less
        {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF},  // everything above the adapter
        {0, 0, 4, 4},                   // no Reads at all
    };
    for (const Case &k : cases) {
        SCOPED_TRACE("active in/out " + std::to_string(k.a_in) + "/" + std::to_string(k.a_out) + ", passive " +
                     std::to_string(k.p_in) + "/" + std::to_string(k.p_out));
        Conn c;
        ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
        ASSERT_TRUE(peer.Post(Msg("getreq")));
        IpAddress local = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
        Ov ov;
        HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), k.a_in, k.a_out, nullptr, 0, &ov);
        PEER_OK(req, peer.Wait());
        // Active offers, clamped to its adapter.
        ULONG a_in = std::min(k.a_in, max_in), a_out = std::min(k.a_out, max_out);
        // Passive sees: in = the active's outbound request, out = its inbound offer (both ≤ its own caps).
        ASSERT_ND(ND_SUCCESS, ST(req, "rlstatus"));
        EXPECT_EQ(req.U64("in"), std::min(a_out, max_in)) << "passive inbound";
        EXPECT_EQ(req.U64("out"), std::min(a_in, max_out)) << "passive outbound";
        ASSERT_TRUE(peer.Post(Msg("accept").Set("c", req.U64("c")).Set("in", k.p_in).Set("out", k.p_out)));
        ASSERT_ND(ND_SUCCESS, Finish(c.connector.get(), &ov, hr));
        ULONG p_in = std::min({k.p_in, max_in, a_out}), p_out = std::min({k.p_out, max_out, a_in});
        ULONG in = 99, out = 99;
        ASSERT_ND(ND_SUCCESS, c.connector->GetReadLimits(&in, &out));
        EXPECT_EQ(in, p_out) << "active inbound = the passive side's final outbound";
        EXPECT_EQ(out, p_in) << "active outbound = the passive side's final inbound";
        ASSERT_ND(ND_SUCCESS, c.CompleteConnect());
        PEER_OK(acc, peer.Wait());
        EXPECT_ND(ND_SUCCESS, ST(acc, "status"));
        EXPECT_ND(ND_SUCCESS, c.Disconnect());
    }
}

// Reads at the negotiated outbound limit, and one more than it: the extra
// one waits for a slot (derived: IB/iWARP initiators queue Reads beyond the
// limit); all complete with the right data.
TEST_F(Limits, ConcurrentReadsAtLimitAndOnePast) {
    const ULONG kLimit = std::min({ULONG(2), node.info.MaxOutboundReadLimit, node.info.MaxInboundReadLimit});
    if (kLimit == 0) {
        SUCCEED() << "the adapter allows no concurrent Reads: no limit to reach";
        return;
    }
    Pair p;
    Msg serve("serve");
    serve.Set("in", kLimit).Set("out", kLimit);
    Peer &peer = p.peer;
    std::string err = peer.Start(addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(l, peer.Call(Msg("listen")));
    ASSERT_ND(ND_SUCCESS, p.rcq.Create(node.adapter.get(), node.file, 256));
    ASSERT_ND(ND_SUCCESS, p.conn.Create(node, p.rcq, p.rcq));
    ASSERT_TRUE(peer.Post(serve));
    ASSERT_ND(ND_SUCCESS, p.conn.Connect(WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port"))), nullptr, 0, kLimit,
                                         kLimit));
    PEER_OK(s, peer.Wait());
    ULONG in = 0, out = 0;
    ASSERT_ND(ND_SUCCESS, p.conn.connector->GetReadLimits(&in, &out));
    ASSERT_EQ(out, kLimit);
    const size_t kSize = 1 << 20;
    Remote rb = PeerRegister(peer, "rb", kSize, kAllRights, 41);
    Mem m(kSize * (kLimit + 1));
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (ULONG k = 0; k <= kLimit; ++k) {
        ND2_SGE sge = m.Sge(k * kSize, kSize);
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(reinterpret_cast<void *>(uintptr_t(k)), &sge, 1, rb.addr, rb.token, 0))
            << "Read " << k;
    }
    for (ULONG k = 0; k <= kLimit; ++k) {
        ND2_RESULT r;
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeRead, &r)) << "Read " << k;
        EXPECT_EQ(r.RequestContext, reinterpret_cast<void *>(uintptr_t(k))) << "completion order";
        EXPECT_EQ(CheckPattern(m.data() + k * kSize, kSize, 41), "") << "Read " << k;
    }
}

}  // namespace
}  // namespace ndc
