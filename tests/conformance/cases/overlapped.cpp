// The overlapped model (§4, COMPAT "Overlapped model"): ND_PENDING then
// exactly one completion (port packet and event), skip-on-success, no
// notification for immediate errors, hEvent bit 0, GetOverlappedResult with
// and without wait, concurrent waits, cancellation order, completion ports
// used by a pool of threads, and closing the overlapped file early.
#include <dirent.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "suite.h"

namespace ndc {
namespace {


// One completion packet from the port (bounded); false if none.
bool Dequeue(HANDLE port, OVERLAPPED_ENTRY *e, DWORD ms) {
    ULONG n = 0;
    return GetQueuedCompletionStatusEx(port, e, 1, &n, ms, FALSE) && n == 1;
}

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
        while (Dequeue(port_, &e, ms)) {
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
    ASSERT_TRUE(Dequeue(port, &e, static_cast<DWORD>(WaitMs()))) << "no packet for the cancelled request";
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
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.pv()));
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
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.pv()));
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
    EXPECT_FALSE(Dequeue(port, &e, static_cast<DWORD>(QuietMs()))) << "a packet was posted despite hEvent bit 0";
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

// A request waited for by another thread; the state outlives the test if
// the wait never returns (the case then fails instead of hanging).
struct Waiter {
    Ref<IND2Listener> listener;
    Ref<IND2Connector> connector;
    Ov ov;
    std::atomic<bool> done{false};
    std::atomic<HRESULT> result{kHang};
};

TEST_F(Overlapped, GetOverlappedResultWaitBlocksUntilDoneR028) {
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    auto w = std::make_shared<Waiter>();
    w->listener = l.listener;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, w->connector.pv()));
    ASSERT_ND(ND_PENDING, w->listener->GetConnectionRequest(w->connector.get(), &w->ov));
    std::thread([w] {
        w->result = w->listener->GetOverlappedResult(&w->ov, TRUE);
        w->done = true;
    }).detach();
    SleepMs(100);
    EXPECT_FALSE(w->done.load()) << "GetOverlappedResult(TRUE) returned before the request completed: "
                                 << StatusName(w->result.load());
    ASSERT_ND(ND_SUCCESS, w->listener->CancelOverlappedRequests());
    Deadline d(WaitMs());
    while (!w->done && !d.Expired()) SleepMs(1);
    ASSERT_TRUE(w->done.load()) << "GetOverlappedResult(TRUE) did not return after the request completed";
    EXPECT_ND(ND_CANCELED, w->result.load());
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

TEST_F(Overlapped, ConcurrentGetOverlappedResultR030) {
    constexpr int kWaiters = 4;
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    std::vector<std::shared_ptr<Waiter>> ws;
    for (int i = 0; i < kWaiters; ++i) {
        auto w = std::make_shared<Waiter>();
        w->listener = l.listener;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, w->connector.pv()));
        ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(w->connector.get(), &w->ov));
        ws.push_back(w);
    }
    for (auto &w : ws)
        std::thread([w] {
            w->result = w->listener->GetOverlappedResult(&w->ov, TRUE);
            w->done = true;
        }).detach();
    SleepMs(20);
    // One connection request: exactly one waiter gets it; reject it.
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    ASSERT_TRUE(peer.Post(Msg("connect").Set("addr", IpText(addr)).Set("port", l.port)));
    Deadline d(WaitMs());
    std::shared_ptr<Waiter> got;
    while (!got && !d.Expired()) {
        for (auto &w : ws)
            if (w->done) got = w;
        SleepMs(1);
    }
    ASSERT_TRUE(got) << "no waiter returned for the incoming request";
    EXPECT_ND(ND_SUCCESS, got->result.load());
    EXPECT_ND(ND_SUCCESS, got->connector->Reject(nullptr, 0));
    PEER_OK(r, peer.Wait());
    EXPECT_ND(ND_CONNECTION_REFUSED, ST(r, "status"));
    // The others are still waiting; cancel releases them all.
    for (auto &w : ws)
        if (w != got) {
            EXPECT_FALSE(w->done.load()) << "a second waiter returned for one request";
        }
    ASSERT_ND(ND_SUCCESS, l.listener->CancelOverlappedRequests());
    Deadline d2(WaitMs());
    for (auto &w : ws) {
        while (!w->done && !d2.Expired()) SleepMs(1);
        ASSERT_TRUE(w->done.load()) << "a waiter never returned";
        if (w != got) {
            EXPECT_ND(ND_CANCELED, w->result.load());
        }
    }
}

// R031 + COMPAT: every cancelled request reaches the port with ND_CANCELED
// before CancelOverlappedRequests returns, in the order issued.
TEST_F(Overlapped, CancelCompletesAllInIssueOrderR031) {
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 5, 0);
    ASSERT_NE(port, nullptr);
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16, false));
    constexpr int kN = 5;
    std::vector<std::unique_ptr<Ov>> ovs;
    std::vector<Ref<IND2Connector>> cons(kN);
    for (int i = 0; i < kN; ++i) {
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, cons[i].pv()));
        ovs.push_back(std::make_unique<Ov>());
        ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(cons[i].get(), ovs.back().get()));
    }
    std::vector<std::unique_ptr<Ov>> novs;
    for (int i = 0; i < 3; ++i) {
        novs.push_back(std::make_unique<Ov>());
        ASSERT_ND(ND_PENDING, cq->Notify(i == 0 ? ND_CQ_NOTIFY_ANY : i == 1 ? ND_CQ_NOTIFY_SOLICITED
                                                                              : ND_CQ_NOTIFY_ERRORS,
                                         novs.back().get()));
    }
    auto check = [&](IND2Overlapped *obj, std::vector<std::unique_ptr<Ov>> &list, const char *what) {
        SCOPED_TRACE(what);
        ASSERT_ND(ND_SUCCESS, obj->CancelOverlappedRequests());
        // Already completed when Cancel returned: status set, packets queued.
        for (auto &o : list) {
            EXPECT_ND(ND_CANCELED, static_cast<HRESULT>(o->Internal)) << "not completed when Cancel returned";
            EXPECT_TRUE(o->Signaled()) << "event not set when Cancel returned";
        }
        for (size_t i = 0; i < list.size(); ++i) {
            OVERLAPPED_ENTRY e{};
            ASSERT_TRUE(Dequeue(port, &e, 0)) << "packet " << i << " was not queued when Cancel returned";
            EXPECT_EQ(e.lpOverlapped, list[i].get()) << "packet " << i << " is out of issue order";
        }
        for (auto &o : list) EXPECT_ND(ND_CANCELED, obj->GetOverlappedResult(o.get(), FALSE));
        OVERLAPPED_ENTRY extra;
        EXPECT_FALSE(Dequeue(port, &extra, static_cast<DWORD>(QuietMs()))) << "an extra packet arrived";
    };
    check(l.listener.get(), ovs, "listener GetConnectionRequest x5");
    check(cq.get(), novs, "CQ Notify x3");
    CloseHandle(port);
}

// COMPAT: a pool of threads drives connection setup entirely from
// GetQueuedCompletionStatus.
TEST_F(Overlapped, CompletionPortWorkerPool) {
    constexpr int kConnections = 16, kThreads = 4;
    constexpr ULONG_PTR kStop = 0xDEAD;
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 1, kThreads);
    ASSERT_NE(port, nullptr);
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 1024));
    struct Ctx {
        OVERLAPPED ov{};
        Conn conn;
        int stage = 0;  // 0: request pending, 1: accepting, 2: connected, -1: failed
        int packets = 0;
        HRESULT status = ND_SUCCESS;
    };
    std::vector<std::unique_ptr<Ctx>> ctx;
    for (int i = 0; i < kConnections; ++i) {
        ctx.push_back(std::make_unique<Ctx>());
        ASSERT_ND(ND_SUCCESS, ctx.back()->conn.Create(node, cq, cq));
    }
    std::mutex mu;
    std::atomic<int> connected{0}, failed{0};
    auto worker = [&] {
        for (;;) {
            DWORD bytes;
            ULONG_PTR key;
            OVERLAPPED *ov = nullptr;
            GetQueuedCompletionStatus(port, &bytes, &key, &ov, INFINITE);
            if (key == kStop) return;
            if (!ov) continue;
            Ctx *c = reinterpret_cast<Ctx *>(reinterpret_cast<char *>(ov) - offsetof(Ctx, ov));
            std::lock_guard<std::mutex> lock(mu);
            ++c->packets;
            if (c->stage == 0) {
                HRESULT hr = l.listener->GetOverlappedResult(ov, FALSE);
                if (FAILED(hr)) {
                    c->stage = -1, c->status = hr, ++failed;
                    continue;
                }
                c->stage = 1;
                c->ov = OVERLAPPED{};
                hr = c->conn.connector->Accept(c->conn.qp.get(), 0, 0, nullptr, 0, &c->ov);
                if (hr != ND_PENDING) c->stage = -1, c->status = hr, ++failed;
            } else if (c->stage == 1) {
                HRESULT hr = c->conn.connector->GetOverlappedResult(ov, FALSE);
                c->status = hr;
                if (FAILED(hr))
                    c->stage = -1, ++failed;
                else
                    c->stage = 2, ++connected;
            }
        }
    };
    for (auto &c : ctx) ASSERT_ND(ND_PENDING, l.listener->GetConnectionRequest(c->conn.connector.get(), &c->ov));
    std::vector<std::thread> pool;
    for (int i = 0; i < kThreads; ++i) pool.emplace_back(worker);
    Peer peer;
    std::string err = peer.Start(addr);
    for (int i = 0; err.empty() && i < kConnections; ++i) {
        Msg r = peer.Call(Msg("connect").Set("addr", IpText(addr)).Set("port", l.port).Set("in", 0).Set("out", 0));
        if (!r.ok() || FAILED(ST(r, "status"))) {
            err = "peer connect " + std::to_string(i) + ": " + (r.ok() ? StatusName(ST(r, "status")) : r.error());
            break;
        }
    }
    Deadline d(WaitMs());
    while (connected + failed < kConnections && !d.Expired()) SleepMs(2);
    for (int i = 0; i < kThreads; ++i) PostQueuedCompletionStatus(port, 0, kStop, nullptr);
    for (auto &t : pool) t.join();
    EXPECT_TRUE(err.empty()) << err;
    EXPECT_EQ(connected.load(), kConnections) << failed.load() << " failed";
    for (auto &c : ctx) {
        EXPECT_EQ(c->packets, c->stage == 2 ? 2 : c->packets) << "one packet per request";
        if (c->stage == -1) ADD_FAILURE() << "a connection failed: " << StatusName(c->status);
    }
    // Stop anything still pending before the contexts go away.
    l.listener->CancelOverlappedRequests();
    for (auto &c : ctx)
        if (c->stage == 1) Finish(c->conn.connector.get(), &c->ov, ND_PENDING, 1);
    peer.Stop();
    CloseHandle(port);
}

size_t OpenFdCount() {
    size_t n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}

// R025: closing the overlapped file while objects use it leaks nothing,
// crashes nothing and does not disturb other users of the adapter.
TEST_F(Overlapped, ClosingTheFileEarlyIsHarmlessR025) {
    for (int round = 0; round < 2; ++round) {
        HANDLE file2 = nullptr;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateOverlappedFile(&file2));
        Cq cq2;
        ASSERT_ND(ND_SUCCESS, cq2.Create(node.adapter.get(), file2, 16, false));
        Mem m(4096);
        ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), file2, kAllRights));
        Ref<IND2Listener> lis;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, file2, lis.pv()));
        IpAddress la = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, lis->Bind(la.sa(), la.length()));
        ASSERT_ND(ND_SUCCESS, lis->Listen(0));
        Ref<IND2Connector> con;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, file2, con.pv()));
        Ov ov_get, ov_notify;
        ASSERT_ND(ND_PENDING, lis->GetConnectionRequest(con.get(), &ov_get));
        ASSERT_ND(ND_PENDING, cq2->Notify(ND_CQ_NOTIFY_ANY, &ov_notify));
        EXPECT_TRUE(CloseHandle(file2));
        // The requests still finish (cancelled); objects release cleanly.
        EXPECT_ND(ND_SUCCESS, lis->CancelOverlappedRequests());
        EXPECT_ND(ND_CANCELED, Finish(lis.get(), &ov_get, ND_PENDING));
        if (round == 0) {
            EXPECT_ND(ND_SUCCESS, cq2->CancelOverlappedRequests());
            EXPECT_ND(ND_CANCELED, Finish(cq2.get(), &ov_notify, ND_PENDING));
        } else {
            cq2.Release();  // destroying the CQ completes its Notify
            Deadline d(WaitMs());
            while (ov_notify.Internal == ND_PENDING && !d.Expired()) SleepMs(1);
            EXPECT_ND(ND_CANCELED, static_cast<HRESULT>(ov_notify.Internal));
        }
        EXPECT_ND(ND_SUCCESS, m.Deregister());
    }
    // Other users of the adapter are unaffected: a connection on node.file.
    Pair pair;
    std::string err = pair.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 64));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, pair.conn.PostSend(m, 0, 64));
    EXPECT_TRUE(NextIs(pair.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    pair.peer.Stop();

    // No descriptor leak over many early closes.
    auto cycle = [&] {
        HANDLE f = nullptr;
        if (FAILED(node.adapter->CreateOverlappedFile(&f))) return;
        Cq c;
        c.Create(node.adapter.get(), f, 16, false);
        Mem mm(4096);
        mm.Register(node.adapter.get(), f, kAllRights);
        CloseHandle(f);
        mm.Deregister();
    };
    for (int i = 0; i < 5; ++i) cycle();
    size_t before = OpenFdCount();
    for (int i = 0; i < 200; ++i) cycle();
    size_t after = OpenFdCount();
    EXPECT_LE(after, before + 2) << "file descriptors leak when the overlapped file is closed early";
}

}  // namespace
}  // namespace ndc
