// The overlapped model (§4, COMPAT "Overlapped model"), waiting and
// concurrency: GetOverlappedResult blocking until done, concurrent waits,
// cancellation in issue order, completion ports used by a pool of threads,
// and closing the overlapped file early.
#include <dirent.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "suite.h"

namespace ndc {
namespace {

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
    w->listener = l.listener.Share();
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, w->connector.put_void()));
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

TEST_F(Overlapped, ConcurrentGetOverlappedResultR030) {
    constexpr int kWaiters = 4;
    Listener l;
    ASSERT_EQ(l.Start(node, WithPort(addr, 0)), "");
    std::vector<std::shared_ptr<Waiter>> ws;
    for (int i = 0; i < kWaiters; ++i) {
        auto w = std::make_shared<Waiter>();
        w->listener = l.listener.Share();
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, w->connector.put_void()));
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
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, cons[i].put_void()));
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
            ASSERT_TRUE(DequeuePacket(port, &e, 0)) << "packet " << i << " was not queued when Cancel returned";
            EXPECT_EQ(e.lpOverlapped, list[i].get()) << "packet " << i << " is out of issue order";
        }
        for (auto &o : list) EXPECT_ND(ND_CANCELED, obj->GetOverlappedResult(o.get(), FALSE));
        OVERLAPPED_ENTRY extra;
        EXPECT_FALSE(DequeuePacket(port, &extra, static_cast<DWORD>(QuietMs()))) << "an extra packet arrived";
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
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, file2, lis.put_void()));
        IpAddress la = WithPort(addr, 0);
        ASSERT_ND(ND_SUCCESS, lis->Bind(la.sa(), la.length()));
        ASSERT_ND(ND_SUCCESS, lis->Listen(0));
        Ref<IND2Connector> con;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, file2, con.put_void()));
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
