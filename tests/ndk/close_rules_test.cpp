// The NDK close rules: a close completes only after every callback on the
// object has returned; a callback may close its own object; a parent closed
// before its children stays pending until they close; a close cancels the
// object's pending requests.
#include <atomic>

#include "ndk_test_util.h"

using namespace ndk_test;

namespace {

// Records the order callbacks happen in.
struct Order {
    std::mutex mu;
    std::vector<std::string> events;
    void Add(const std::string &e) {
        std::lock_guard<std::mutex> lock(mu);
        events.push_back(e);
    }
    std::vector<std::string> Get() {
        std::lock_guard<std::mutex> lock(mu);
        return events;
    }
};

}  // namespace

TEST(NdkClose, NothingOutstandingClosesInlineWithoutCallback) {
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_PD *pd = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    Completion closed;
    EXPECT_EQ(pd->Dispatch->NdkClosePd(&pd->Header, Completion::Close, &closed), STATUS_SUCCESS);
    EXPECT_EQ(NdkCloseAdapter(a, Completion::Close, &closed), STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(closed.Count(), 0);
}

// A request callback still running when its object is closed from another
// thread: the close pends until the callback has returned.
TEST(NdkClose, CloseWaitsForARunningRequestCallback) {
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_PD *pd = nullptr;
    NDK_MR *mr = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    ASSERT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    std::vector<char> buffer(4096);
    MDL mdl;
    MmInitializeMdl(&mdl, buffer.data(), buffer.size());
    Completion registered;
    registered.sleep_ms = 300;
    ASSERT_EQ(mr->Dispatch->NdkRegisterMr(mr, &mdl, buffer.size(), 0, Completion::Request, &registered),
              STATUS_PENDING);
    ASSERT_TRUE(registered.Wait());  // entered; sleeping on the adapter's thread
    struct Closed {
        Completion *running;
        int returned_at_close = -1;
        Completion done;
        static VOID Done(PVOID ctx) {
            Closed *c = static_cast<Closed *>(ctx);
            c->returned_at_close = c->running->Returned();
            c->done.Hit(STATUS_SUCCESS);
        }
    };
    Closed closed;
    closed.running = &registered;
    EXPECT_EQ(mr->Dispatch->NdkCloseMr(&mr->Header, Closed::Done, &closed), STATUS_PENDING);
    ASSERT_TRUE(closed.done.Wait());
    EXPECT_EQ(closed.returned_at_close, 1);
    EXPECT_EQ(Close(pd), STATUS_SUCCESS);
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
}

// The same for a CQ notification callback.
TEST(NdkClose, CloseWaitsForARunningNotification) {
    Pair pair;
    ASSERT_TRUE(pair.Open());
    ASSERT_TRUE(pair.Connect());
    Side &s = pair.server;
    s.notified.sleep_ms = 300;
    s.cq->Dispatch->NdkArmCq(s.cq, NDK_CQ_NOTIFY_ANY);
    NDK_SGE rs = s.region.Sge(0, 64), ss = pair.client.region.Sge(0, 8);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    ASSERT_EQ(pair.client.qp->Dispatch->NdkSend(pair.client.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
    ASSERT_TRUE(s.notified.Wait());  // the callback is now sleeping on the adapter's thread
    // Close the CQ's dependents and the CQ without waiting (their completions
    // queue behind the sleeping callback on the same thread).
    Completion connector_closed, qp_closed;
    Close(s.connector, &connector_closed);
    Close(s.qp, &qp_closed);
    struct Closed {
        Completion *running;
        int returned_at_close = -1;
        Completion done;
        static VOID Done(PVOID ctx) {
            Closed *c = static_cast<Closed *>(ctx);
            c->returned_at_close = c->running->Returned();
            c->done.Hit(STATUS_SUCCESS);
        }
    };
    Closed closed;
    closed.running = &s.notified;
    EXPECT_EQ(s.cq->Dispatch->NdkCloseCq(&s.cq->Header, Closed::Done, &closed), STATUS_PENDING);
    ASSERT_TRUE(closed.done.Wait());
    EXPECT_EQ(closed.returned_at_close, 1);
    s.connector = nullptr;
    s.qp = nullptr;
    s.cq = nullptr;
    pair.Release();
}

// Callbacks that close their own object: the close returns STATUS_PENDING
// inside the callback and completes after the callback returns.
TEST(NdkClose, ACallbackMayCloseItsOwnObject) {
    struct Ctx {
        Order order;
        NDK_MR *mr = nullptr;
        NTSTATUS close_status = STATUS_SUCCESS;
        Completion closed;
        static VOID Closed(PVOID c) {
            static_cast<Ctx *>(c)->order.Add("close completed");
            static_cast<Ctx *>(c)->closed.Hit(STATUS_SUCCESS);
        }
        static VOID Registered(PVOID c, NTSTATUS) {
            Ctx *x = static_cast<Ctx *>(c);
            x->close_status = x->mr->Dispatch->NdkCloseMr(&x->mr->Header, Closed, x);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            x->order.Add("register callback returned");
        }
    };
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_PD *pd = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    Ctx ctx;
    ASSERT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &ctx.mr), STATUS_SUCCESS);
    std::vector<char> buffer(8192);
    MDL mdl;
    MmInitializeMdl(&mdl, buffer.data(), buffer.size());
    ASSERT_EQ(ctx.mr->Dispatch->NdkRegisterMr(ctx.mr, &mdl, buffer.size(), 0, Ctx::Registered, &ctx),
              STATUS_PENDING);
    ASSERT_TRUE(ctx.closed.Wait());
    EXPECT_EQ(ctx.close_status, STATUS_PENDING);
    EXPECT_EQ(ctx.order.Get(), (std::vector<std::string>{"register callback returned", "close completed"}));
    EXPECT_EQ(Close(pd), STATUS_SUCCESS);
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
}

// The same without a pause, many times: the request's callback may close
// the MR before NdkRegisterMr has even returned on the consumer's thread.
// That thread holds the object until the call is out of the provider; each
// close still completes exactly once (on the adapter's thread).
TEST(NdkClose, ACallbackClosingItsObjectRacesTheCallThatStartedIt) {
    struct Ctx {
        NDK_MR *mr = nullptr;
        Completion closed;
        static VOID Closed(PVOID c) { static_cast<Ctx *>(c)->closed.Hit(STATUS_SUCCESS); }
        static VOID Registered(PVOID c, NTSTATUS) {
            Ctx *x = static_cast<Ctx *>(c);
            x->mr->Dispatch->NdkCloseMr(&x->mr->Header, Closed, x);
        }
    };
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_PD *pd = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    std::vector<char> buffer(8192);
    MDL mdl;
    MmInitializeMdl(&mdl, buffer.data(), buffer.size());
    constexpr int kRounds = 200;
    std::vector<Ctx> ctx(kRounds);
    for (Ctx &x : ctx) {
        ASSERT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &x.mr), STATUS_SUCCESS);
        ASSERT_EQ(x.mr->Dispatch->NdkRegisterMr(x.mr, &mdl, buffer.size(), 0, Ctx::Registered, &x), STATUS_PENDING);
    }
    for (Ctx &x : ctx) ASSERT_TRUE(x.closed.Wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (Ctx &x : ctx) EXPECT_EQ(x.closed.Count(), 1);
    EXPECT_EQ(Close(pd), STATUS_SUCCESS);  // no MR left behind
    EXPECT_EQ(Close(a), STATUS_SUCCESS);
}

TEST(NdkClose, ADisconnectEventMayCloseItsConnector) {
    struct Ctx {
        NDK_CONNECTOR *connector = nullptr;
        NTSTATUS status = STATUS_SUCCESS;
        Completion closed;
        static VOID Disconnected(PVOID c) {
            Ctx *x = static_cast<Ctx *>(c);
            x->status = x->connector->Dispatch->NdkCloseConnector(&x->connector->Header, Completion::Close, &x->closed);
        }
    };
    Pair pair;
    ASSERT_TRUE(pair.Open());
    ASSERT_TRUE(pair.Connect());
    // Re-arm the server's disconnect event with one that closes the connector:
    // accept a second connection for that.
    Side extra;
    ASSERT_TRUE(extra.Create(pair.adapter, 4096, 4));
    sockaddr_in src = Loopback(), dst = Loopback(pair.port);
    Completion connected, accepted, completed;
    NTSTATUS cs = extra.connector->Dispatch->NdkConnect(extra.connector, extra.qp, Sa(&src), sizeof src, Sa(&dst),
                                                        sizeof dst, 1, 1, nullptr, 0, Completion::Request, &connected);
    Ctx ctx;
    ctx.connector = pair.NextIncoming();
    ASSERT_NE(ctx.connector, nullptr);
    NDK_QP *qp = nullptr;
    ASSERT_EQ(pair.server.pd->Dispatch->NdkCreateQp(pair.server.pd, pair.server.cq, pair.server.cq, nullptr, 4, 4, 1,
                                                    1, 0, nullptr, nullptr, &qp),
              STATUS_SUCCESS);
    NTSTATUS as = ctx.connector->Dispatch->NdkAccept(ctx.connector, qp, 1, 1, nullptr, 0, Ctx::Disconnected, &ctx,
                                                     Completion::Request, &accepted);
    ASSERT_EQ(Finish(cs, connected), STATUS_SUCCESS);
    ASSERT_EQ(Finish(extra.connector->Dispatch->NdkCompleteConnect(extra.connector, nullptr, nullptr,
                                                                   Completion::Request, &completed),
                     completed),
              STATUS_SUCCESS);
    ASSERT_EQ(Finish(as, accepted), STATUS_SUCCESS);
    Completion done;
    ASSERT_EQ(Finish(extra.connector->Dispatch->NdkDisconnect(extra.connector, Completion::Request, &done), done),
              STATUS_SUCCESS);
    ASSERT_TRUE(ctx.closed.Wait());
    EXPECT_EQ(ctx.status, STATUS_PENDING);
    EXPECT_EQ(Close(qp), STATUS_SUCCESS);
    extra.Release();
    pair.Release();
}

TEST(NdkClose, ParentsAndAntecedentsClosedFirstStayPending) {
    NDK_ADAPTER *a = nullptr;
    ASSERT_EQ(OpenLoopback(&a), STATUS_SUCCESS);
    NDK_PD *pd = nullptr;
    NDK_CQ *cq = nullptr;
    NDK_QP *qp = nullptr;
    NDK_MR *mr = nullptr;
    ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    ASSERT_EQ(a->Dispatch->NdkCreateCq(a, 16, nullptr, nullptr, nullptr, nullptr, nullptr, &cq), STATUS_SUCCESS);
    ASSERT_EQ(pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 4, 4, 1, 1, 0, nullptr, nullptr, &qp), STATUS_SUCCESS);
    ASSERT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    Completion adapter_closed, pd_closed, cq_closed;
    EXPECT_EQ(Close(a, &adapter_closed), STATUS_PENDING);  // children open
    EXPECT_EQ(Close(pd, &pd_closed), STATUS_PENDING);      // MR and QP open
    EXPECT_EQ(Close(cq, &cq_closed), STATUS_PENDING);      // QP open
    EXPECT_EQ(Close(mr), STATUS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(pd_closed.Count(), 0);  // the QP is still open
    EXPECT_EQ(Close(qp), STATUS_SUCCESS);
    EXPECT_TRUE(pd_closed.Wait());
    EXPECT_TRUE(cq_closed.Wait());
    EXPECT_TRUE(adapter_closed.Wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(pd_closed.Count() + cq_closed.Count() + adapter_closed.Count(), 3);
}

TEST(NdkClose, ListenerClosedBeforeItsConnectorsStopsListeningAtOnce) {
    Pair pair;
    ASSERT_TRUE(pair.Open());
    Completion connected;
    sockaddr_in src = Loopback(), dst = Loopback(pair.port);
    NDK_CONNECTOR *c = pair.client.connector;
    NTSTATUS cs = c->Dispatch->NdkConnect(c, pair.client.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 1, 1, nullptr,
                                          0, Completion::Request, &connected);
    NDK_CONNECTOR *incoming = pair.NextIncoming();
    ASSERT_NE(incoming, nullptr);
    Completion listener_closed;
    EXPECT_EQ(Close(pair.listener, &listener_closed), STATUS_PENDING);
    pair.listener = nullptr;
    // Not listening any more: a new connect is refused.
    Side late;
    ASSERT_TRUE(late.Create(pair.adapter, 4096, 4));
    Completion refused;
    NTSTATUS ls = late.connector->Dispatch->NdkConnect(late.connector, late.qp, Sa(&src), sizeof src, Sa(&dst),
                                                       sizeof dst, 1, 1, nullptr, 0, Completion::Request, &refused);
    EXPECT_EQ(Finish(ls, refused), STATUS_CONNECTION_REFUSED);
    EXPECT_EQ(incoming->Dispatch->NdkReject(incoming, nullptr, 0), STATUS_SUCCESS);
    EXPECT_EQ(Finish(cs, connected), STATUS_CONNECTION_REFUSED);
    EXPECT_EQ(listener_closed.Count(), 0);
    EXPECT_EQ(Close(incoming), STATUS_SUCCESS);
    EXPECT_TRUE(listener_closed.Wait());
    late.Release();
    pair.Release();
}

TEST(NdkClose, CloseCancelsPendingRequestsBeforeCompleting) {
    Pair pair;
    ASSERT_TRUE(pair.Open());
    Order order;
    struct Cb {
        static VOID Connected(PVOID ctx, NTSTATUS s) {
            static_cast<Order *>(ctx)->Add(s == STATUS_CANCELLED ? "connect cancelled" : "connect other");
        }
        static VOID Closed(PVOID ctx) { static_cast<Order *>(ctx)->Add("close completed"); }
    };
    sockaddr_in src = Loopback(), dst = Loopback(pair.port);
    NDK_CONNECTOR *c = pair.client.connector;
    ASSERT_EQ(c->Dispatch->NdkConnect(c, pair.client.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 1, 1, nullptr, 0,
                                      Cb::Connected, &order),
              STATUS_PENDING);
    NDK_CONNECTOR *incoming = pair.NextIncoming();  // delivered, never answered
    ASSERT_NE(incoming, nullptr);
    NTSTATUS s = c->Dispatch->NdkCloseConnector(&c->Header, Cb::Closed, &order);
    pair.client.connector = nullptr;
    if (s == STATUS_SUCCESS) {
        // Legal only if the cancelled request's callback had already returned.
        EXPECT_EQ(order.Get(), (std::vector<std::string>{"connect cancelled"}));
    } else {
        EXPECT_EQ(s, STATUS_PENDING);
        auto deadline = Clock::now() + kWait;
        while (order.Get().size() < 2 && Clock::now() < deadline) std::this_thread::yield();
        EXPECT_EQ(order.Get(), (std::vector<std::string>{"connect cancelled", "close completed"}));
    }
    EXPECT_EQ(Close(incoming), STATUS_SUCCESS);
    pair.Release();
}

TEST(NdkClose, AdapterCloseFromACallbackCompletesAfterIt) {
    struct Ctx {
        NDK_ADAPTER *adapter = nullptr;
        NDK_PD *pd = nullptr;
        NDK_MR *mr = nullptr;
        NTSTATUS statuses[3] = {};
        Order order;
        Completion adapter_closed;
        static VOID MrClosed(PVOID c) { static_cast<Ctx *>(c)->order.Add("mr closed"); }
        static VOID AdapterClosed(PVOID c) {
            static_cast<Ctx *>(c)->order.Add("adapter closed");
            static_cast<Ctx *>(c)->adapter_closed.Hit(STATUS_SUCCESS);
        }
        static VOID Registered(PVOID c, NTSTATUS) {
            Ctx *x = static_cast<Ctx *>(c);
            x->statuses[0] = x->mr->Dispatch->NdkCloseMr(&x->mr->Header, MrClosed, x);
            x->statuses[1] = x->pd->Dispatch->NdkClosePd(&x->pd->Header, nullptr, nullptr);
            x->statuses[2] = NdkCloseAdapter(x->adapter, AdapterClosed, x);
            x->order.Add("callback returned");
        }
    };
    Ctx ctx;
    ASSERT_EQ(OpenLoopback(&ctx.adapter), STATUS_SUCCESS);
    ASSERT_EQ(ctx.adapter->Dispatch->NdkCreatePd(ctx.adapter, nullptr, nullptr, &ctx.pd), STATUS_SUCCESS);
    ASSERT_EQ(ctx.pd->Dispatch->NdkCreateMr(ctx.pd, FALSE, nullptr, nullptr, &ctx.mr), STATUS_SUCCESS);
    std::vector<char> buffer(4096);
    MDL mdl;
    MmInitializeMdl(&mdl, buffer.data(), buffer.size());
    ASSERT_EQ(ctx.mr->Dispatch->NdkRegisterMr(ctx.mr, &mdl, buffer.size(), 0, Ctx::Registered, &ctx), STATUS_PENDING);
    ASSERT_TRUE(ctx.adapter_closed.Wait());
    EXPECT_EQ(ctx.statuses[0], STATUS_PENDING);
    EXPECT_EQ(ctx.statuses[1], STATUS_PENDING);
    EXPECT_EQ(ctx.statuses[2], STATUS_PENDING);
    EXPECT_EQ(ctx.order.Get(), (std::vector<std::string>{"callback returned", "mr closed", "adapter closed"}));
}
