// The overlapped model (§4, COMPAT "Overlapped model"): ND_PENDING then
// exactly one completion (port packet and event), skip-on-success, no
// notification for immediate errors, hEvent bit 0, GetOverlappedResult
// without wait, errors that stay errors. Waiting, concurrency,
// cancellation and closing the file early: overlapped_waits.cpp.
#include <map>

#include "suite.h"

namespace ndc {
namespace {


// Counts packets per OVERLAPPED on a port bound to the node's file and
// checks the rules of §4.2 for each overlapped call it is shown.
class Tracker {
public:
    explicit Tracker(HANDLE file) {
        port_ = CreateIoCompletionPort(file, nullptr, kKey, 0);
    }
    ~Tracker() {
        if (port_) CloseHandle(port_);
    }
    bool ok() const { return port_ != nullptr; }
    HANDLE port() const { return port_; }

    // hr is what the call returned. Pending: exactly one packet (and the
    // event, if any) must come, then GetOverlappedResult gives the final
    // status. Immediate success or error: no packet and no event.
    HRESULT Complete(IND2Overlapped *obj, Ov &ov, HRESULT hr, const char *what) {
        SCOPED_TRACE(what);
        if (hr != ND_PENDING) {
            Drain(QuietMs());
            EXPECT_EQ(packets_[&ov], 0) << what << " returned " << StatusName(hr)
                                        << " at once, yet a completion packet was posted (R021/R022)";
            EXPECT_FALSE(ov.Signaled()) << what << " returned " << StatusName(hr)
                                        << " at once, yet its event was signalled (R021/R022)";
            return hr;
        }
        Deadline d(WaitMs());
        while (packets_[&ov] == 0 && !d.Expired()) Drain(20);
        EXPECT_EQ(packets_[&ov], 1) << what << ": expected exactly one completion packet (R023)";
        if (packets_[&ov] == 0) {
            Finish(obj, &ov, ND_PENDING, 1);  // cancels
            return kHang;
        }
        EXPECT_TRUE(ov.Signaled()) << what << ": the event was not signalled (R023)";
        HRESULT final_status = obj->GetOverlappedResult(&ov, FALSE);
        EXPECT_NE(final_status, ND_PENDING) << what << ": a packet came but GetOverlappedResult says ND_PENDING";
        EXPECT_EQ(static_cast<HRESULT>(ov.Internal), final_status)
            << what << ": OVERLAPPED.Internal differs from GetOverlappedResult";
        done_.push_back(&ov);
        return final_status;
    }

    // After everything: no request got a second packet.
    void NoExtraPackets() {
        Drain(QuietMs());
        for (auto &[ov, n] : packets_)
            EXPECT_LE(n, 1) << "an OVERLAPPED received " << n << " completion packets (exactly one allowed)";
    }
    int packets(OVERLAPPED *ov) { return packets_[ov]; }
    void Drain(DWORD ms) {
        OVERLAPPED_ENTRY e;
        while (DequeuePacket(port_, &e, ms)) {
            EXPECT_EQ(e.lpCompletionKey, kKey);
            ++packets_[e.lpOverlapped];
            ms = 0;
        }
    }

private:
    static constexpr ULONG_PTR kKey = 0x4E44;
    HANDLE port_ = nullptr;
    std::map<OVERLAPPED *, int> packets_;
    std::vector<OVERLAPPED *> done_;
};

TEST_F(Overlapped, FileBindsToCompletionPortR019) {
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 77, 0);
    ASSERT_NE(port, nullptr) << "the overlapped file cannot be associated with a completion port";
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Conn c;
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16));
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    Ov ov;
    ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(c.connector.get(), &ov));
    ASSERT_ND(ND_SUCCESS, l.listener->CancelOverlappedRequests());
    OVERLAPPED_ENTRY e{};
    ASSERT_TRUE(DequeuePacket(port, &e, static_cast<DWORD>(WaitMs()))) << "no packet for the cancelled request";
    EXPECT_EQ(e.lpCompletionKey, 77u);
    EXPECT_EQ(e.lpOverlapped, &ov);
    EXPECT_ND(ND_CANCELED, l.listener->GetOverlappedResult(&ov, FALSE));
    CloseHandle(port);
}

// COMPAT: Register, Deregister, Connect, Accept, CompleteConnect,
// GetConnectionRequest, Notify, Disconnect and NotifyDisconnect return
// ND_PENDING and deliver exactly one completion (R023), both the port packet
// and the event.
TEST_F(Overlapped, AcceptedCallsPendThenCompleteExactlyOnceR023) {
    Tracker t(node.file);
    ASSERT_TRUE(t.ok());
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");

    // Register.
    Mem m(65536);
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    Ov ov_reg;
    HRESULT hr = mr->Register(m.data(), m.size(), kAllRights, &ov_reg);
    EXPECT_ND(ND_PENDING, hr) << "Register";
    EXPECT_ND(ND_SUCCESS, t.Complete(mr.get(), ov_reg, hr, "Register"));

    // Passive connection: GetConnectionRequest, Accept.
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 64));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    ND2_SGE rs{m.data(), 4096, mr->GetLocalToken()};
    ASSERT_ND(ND_SUCCESS, c.qp->Receive(nullptr, &rs, 1));
    Ov ov_get;
    hr = l.listener->GetConnectionRequest(c.connector.get(), &ov_get);
    EXPECT_ND(ND_PENDING, hr) << "GetConnectionRequest";
    ASSERT_TRUE(peer.Post(Msg("connect").Set("addr", IpText(addr)).Set("port", l.port)));
    EXPECT_ND(ND_SUCCESS, t.Complete(l.listener.get(), ov_get, hr, "GetConnectionRequest"));
    Ov ov_acc;
    hr = c.connector->Accept(c.qp.get(), 8, 8, nullptr, 0, &ov_acc);
    EXPECT_ND(ND_PENDING, hr) << "Accept";
    EXPECT_ND(ND_SUCCESS, t.Complete(c.connector.get(), ov_acc, hr, "Accept"));
    PEER_OK(cr, peer.Wait());
    ASSERT_ND(ND_SUCCESS, ST(cr, "status"));

    // Notify(ANY), satisfied by the peer's Send; NotifyDisconnect.
    cq.pump = false;
    Ov ov_nd;
    HRESULT hr_nd = c.connector->NotifyDisconnect(&ov_nd);
    EXPECT_ND(ND_PENDING, hr_nd) << "NotifyDisconnect";
    Ov ov_notify;
    hr = cq->Notify(ND_CQ_NOTIFY_ANY, &ov_notify);
    EXPECT_ND(ND_PENDING, hr) << "Notify";
    PEER_OK(rr, peer.Call(Msg("reg").Set("name", "m").Set("size", 4096)));
    PEER_OK(sr, peer.Call(Msg("send").Set("c", 0).Set("mem", "m").Set("len", 64)));
    EXPECT_ND(ND_SUCCESS, t.Complete(cq.get(), ov_notify, hr, "Notify"));
    EXPECT_TRUE(NextIs(cq, ND_SUCCESS, Nd2RequestTypeReceive));

    // Disconnect; NotifyDisconnect completes (not cancelled).
    Ov ov_disc;
    hr = c.connector->Disconnect(&ov_disc);
    EXPECT_ND(ND_PENDING, hr) << "Disconnect";
    EXPECT_ND(ND_SUCCESS, t.Complete(c.connector.get(), ov_disc, hr, "Disconnect"));
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected), t.Complete(c.connector.get(), ov_nd, hr_nd, "NotifyDisconnect"));

    // Active connection: Connect, CompleteConnect.
    PEER_OK(lr, peer.Call(Msg("listen").Set("name", "l2")));
    ASSERT_TRUE(peer.Post(Msg("serve").Set("l", "l2")));
    Conn a;
    ASSERT_ND(ND_SUCCESS, a.Create(node, cq, cq));
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, a.connector->Bind(local.sa(), local.length()));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(lr.U64("port")));
    Ov ov_conn;
    hr = a.connector->Connect(a.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov_conn);
    EXPECT_ND(ND_PENDING, hr) << "Connect";
    EXPECT_ND(ND_SUCCESS, t.Complete(a.connector.get(), ov_conn, hr, "Connect"));
    Ov ov_cc;
    hr = a.connector->CompleteConnect(&ov_cc);
    EXPECT_ND(ND_PENDING, hr) << "CompleteConnect";
    EXPECT_ND(ND_SUCCESS, t.Complete(a.connector.get(), ov_cc, hr, "CompleteConnect"));
    PEER_OK(serve, peer.Wait());
    EXPECT_ND(ND_SUCCESS, ST(serve, "status"));

    // Deregister.
    Ov ov_dereg;
    hr = mr->Deregister(&ov_dereg);
    EXPECT_ND(ND_PENDING, hr) << "Deregister";
    EXPECT_ND(ND_SUCCESS, t.Complete(mr.get(), ov_dereg, hr, "Deregister"));
    t.NoExtraPackets();
}

// R022: a call that fails at once posts nothing and signals nothing.
TEST_F(Overlapped, ImmediateErrorsNotifyNothingR022) {
    Tracker t(node.file);
    ASSERT_TRUE(t.ok());
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    {
        Ov ov;
        HRESULT hr = c.connector->CompleteConnect(&ov);
        EXPECT_TRUE(FAILED(hr) || hr == ND_PENDING);
        t.Complete(c.connector.get(), ov, hr, "CompleteConnect without Connect");
    }
    {
        Ov ov;
        t.Complete(c.connector.get(), ov, c.connector->NotifyDisconnect(&ov), "NotifyDisconnect, never connected");
    }
    {
        Ov ov;
        t.Complete(c.connector.get(), ov, c.connector->Disconnect(&ov), "Disconnect, not connected");
    }
    {
        Mem m(4096);
        Ref<IND2MemoryRegion> mr;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
        Ov ov;
        SIZE_T too_big = node.info.MaxRegistrationSize + 1;
        t.Complete(mr.get(), ov, mr->Register(m.data(), too_big, kAllRights, &ov), "Register above MaxRegistrationSize");
    }
    {
        Ov ov;
        IpAddress local = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
        std::vector<char> pd(node.info.MaxCallerData + 1, 'x');
        IpAddress dest = WithPort(addr, 9);
        t.Complete(c.connector.get(), ov,
                   c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 0, 0, pd.data(),
                                        static_cast<ULONG>(pd.size()), &ov),
                   "Connect with too much private data");
    }
    t.NoExtraPackets();
}

// R021: calls that may legitimately finish inline (NotifyDisconnect on a
// connection that is already gone, Notify with completions waiting): if
// they return ND_SUCCESS, nothing is posted and no event is set; if they
// pend, exactly one completion comes.
TEST_F(Overlapped, InlineSuccessNotifiesNothingR021) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 64));
    ASSERT_TRUE(err.empty()) << err;
    Tracker t(node.file);  // after the connection's own requests
    ASSERT_TRUE(t.ok());
    p.rcq.pump = false;
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 0, 64));
    SleepMs(50);
    Ov ov_notify;
    HRESULT hr = p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov_notify);
    EXPECT_ND(ND_SUCCESS, t.Complete(p.rcq.get(), ov_notify, hr, "Notify with a completion waiting"));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(d, p.peer.Call(Msg("disconnect").Set("c", 0)));
    SleepMs(50);
    Ov ov_nd;
    hr = p.conn.connector->NotifyDisconnect(&ov_nd);
    EXPECT_ND_IN(Any(ND_SUCCESS, kConnectionDisconnected),
                 t.Complete(p.conn.connector.get(), ov_nd, hr, "NotifyDisconnect after the peer disconnected"));
    t.NoExtraPackets();
}

// COMPAT: hEvent with bit 0 set signals the event and posts no packet;
// CloseHandle accepts the tagged value.
TEST_F(Overlapped, EventBitZeroSignalsEventOnly) {
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 1, 0);
    ASSERT_NE(port, nullptr);
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    HANDLE event = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_NE(event, nullptr);
    OVERLAPPED ov{};
    ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(event) | 1);
    ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(c.connector.get(), &ov));
    ASSERT_ND(ND_SUCCESS, l.listener->CancelOverlappedRequests());
    EXPECT_EQ(WaitForSingleObject(event, static_cast<DWORD>(WaitMs())), WAIT_OBJECT_0) << "the event was not set";
    OVERLAPPED_ENTRY e;
    EXPECT_FALSE(DequeuePacket(port, &e, static_cast<DWORD>(QuietMs()))) << "a packet was posted despite hEvent bit 0";
    EXPECT_ND(ND_CANCELED, l.listener->GetOverlappedResult(&ov, FALSE));
    EXPECT_TRUE(CloseHandle(ov.hEvent)) << "CloseHandle refused the tagged event handle";
    CloseHandle(port);
}

TEST_F(Overlapped, GetOverlappedResultNoWaitIsPendingR027) {
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    Ov ov;
    ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(c.connector.get(), &ov));
    for (int i = 0; i < 3; ++i) {
        EXPECT_ND(ND_PENDING, l.listener->GetOverlappedResult(&ov, FALSE));
        SleepMs(10);
    }
    EXPECT_FALSE(ov.Signaled());
    ASSERT_ND(ND_SUCCESS, l.listener->CancelOverlappedRequests());
    EXPECT_ND(ND_CANCELED, Finish(l.listener.get(), &ov, ND_PENDING));
}

// R029: a failed request is reported as failed everywhere (OVERLAPPED,
// port packet, GetOverlappedResult).
TEST_F(Overlapped, ErrorsStayErrorsR029) {
    Tracker t(node.file);
    ASSERT_TRUE(t.ok());
    // A port with no listener behind it: the Connect fails (refused).
    Listener probe;
    ASSERT_EQ(probe.Start(node, WithPort(addr, 0)), "");
    uint16_t dead_port = probe.port;
    probe.listener.reset();
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16));
    Conn c;
    ASSERT_ND(ND_SUCCESS, c.Create(node, cq, cq));
    IpAddress local = WithPort(addr, 0);
    ASSERT_ND(ND_SUCCESS, c.connector->Bind(local.sa(), local.length()));
    IpAddress dest = WithPort(addr, dead_port);
    Ov ov;
    HRESULT hr = c.connector->Connect(c.qp.get(), dest.sa(), dest.length(), 0, 0, nullptr, 0, &ov);
    HRESULT final_status = t.Complete(c.connector.get(), ov, hr, "Connect to a closed port");
    EXPECT_TRUE(FAILED(final_status)) << StatusName(final_status);
    if (hr == ND_PENDING) {
        EXPECT_TRUE(FAILED(static_cast<HRESULT>(ov.Internal))) << "OVERLAPPED.Internal holds a success status";
        DWORD bytes = 0;
        EXPECT_FALSE(GetOverlappedResult(node.file, &ov, &bytes, FALSE)) << "Win32 GetOverlappedResult says success";
        EXPECT_ND(final_status, c.connector->GetOverlappedResult(&ov, FALSE)) << "asked twice";
    }
}

}  // namespace
}  // namespace ndc
