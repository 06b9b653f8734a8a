#include "ndk_test_util.h"

namespace ndk_test {
namespace {

template <class T, class F>
NTSTATUS CloseWith(T *o, F fn, Completion *c) {
    if (!o) return STATUS_SUCCESS;
    Completion own;
    Completion *target = c ? c : &own;
    NTSTATUS s = fn(&o->Header, Completion::Close, target);
    if (s == STATUS_PENDING && !c) {
        EXPECT_TRUE(own.Wait()) << "close did not complete";
    }
    return s;
}

}  // namespace

NTSTATUS Close(NDK_CQ *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkCloseCq : nullptr, c); }
NTSTATUS Close(NDK_PD *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkClosePd : nullptr, c); }
NTSTATUS Close(NDK_MR *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkCloseMr : nullptr, c); }
NTSTATUS Close(NDK_MW *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkCloseMw : nullptr, c); }
NTSTATUS Close(NDK_SRQ *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkCloseSrq : nullptr, c); }
NTSTATUS Close(NDK_QP *o, Completion *c) { return CloseWith(o, o ? o->Dispatch->NdkCloseQp : nullptr, c); }
NTSTATUS Close(NDK_CONNECTOR *o, Completion *c) {
    return CloseWith(o, o ? o->Dispatch->NdkCloseConnector : nullptr, c);
}
NTSTATUS Close(NDK_SHARED_ENDPOINT *o, Completion *c) {
    return CloseWith(o, o ? o->Dispatch->NdkCloseSharedEndpoint : nullptr, c);
}
NTSTATUS Close(NDK_LISTENER *o, Completion *c) {
    return CloseWith(o, o ? o->Dispatch->NdkCloseListener : nullptr, c);
}
NTSTATUS Close(NDK_ADAPTER *o, Completion *c) {
    if (!o) return STATUS_SUCCESS;
    Completion own;
    NTSTATUS s = NdkCloseAdapter(o, Completion::Close, c ? c : &own);
    if (s == STATUS_PENDING && !c) {
        EXPECT_TRUE(own.Wait()) << "adapter close did not complete";
    }
    return s;
}

bool Region::Register(NDK_PD *pd, size_t size, ULONG flags) {
    bytes.assign(size, 0);
    if (pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &mr) != STATUS_SUCCESS) return false;
    MmInitializeMdl(&mdl, bytes.data(), bytes.size());
    Completion c;
    NTSTATUS s = mr->Dispatch->NdkRegisterMr(mr, &mdl, bytes.size(), flags, Completion::Request, &c);
    return Finish(s, c) == STATUS_SUCCESS;
}

NDK_SGE Region::Sge(size_t offset, size_t length) {
    if (length == SIZE_MAX) length = bytes.size() - offset;
    NDK_SGE s{};
    s.VirtualAddress = bytes.data() + offset;
    s.Length = static_cast<ULONG>(length);
    s.MemoryRegionToken = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
    return s;
}

void Region::Release() {
    Close(mr);
    mr = nullptr;
}

bool Side::Create(NDK_ADAPTER *adapter, size_t buffer, ULONG depth) {
    const NDK_ADAPTER_DISPATCH *d = adapter->Dispatch;
    if (d->NdkCreateCq(adapter, depth * 2, Completion::Notify, &notified, nullptr, nullptr, nullptr, &cq)) return false;
    if (d->NdkCreatePd(adapter, nullptr, nullptr, &pd)) return false;
    if (pd->Dispatch->NdkCreateQp(pd, cq, cq, this, depth, depth, 4, 4, 64, nullptr, nullptr, &qp)) return false;
    if (d->NdkCreateConnector(adapter, nullptr, nullptr, &connector)) return false;
    return region.Register(pd, buffer);
}

void Side::Release() {
    Close(connector);
    Close(qp);
    region.Release();
    Close(pd);
    Close(cq);
    connector = nullptr;
    qp = nullptr;
    pd = nullptr;
    cq = nullptr;
}

NDK_RESULT_EX Side::Next(std::chrono::milliseconds timeout) {
    NDK_RESULT_EX r{};
    auto deadline = Clock::now() + timeout;
    while (cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1) == 0) {
        if (Clock::now() > deadline) {
            r = NDK_RESULT_EX{};
            r.Status = STATUS_IO_TIMEOUT;
            return r;
        }
        std::this_thread::yield();
    }
    return r;
}

void Side::ExpectQuiet(std::chrono::milliseconds settle) {
    std::this_thread::sleep_for(settle);  // (absence has no event to wait for)
    NDK_RESULT_EX r{};
    EXPECT_EQ(cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1), 0u) << "a refused request completed";
}

VOID Pair::OnConnect(PVOID context, NDK_CONNECTOR *connector) {
    Pair *p = static_cast<Pair *>(context);
    std::lock_guard<std::mutex> lock(p->mu);
    p->incoming.push_back(connector);
    p->cv.notify_all();
}

NDK_CONNECTOR *Pair::NextIncoming(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, timeout, [&] { return !incoming.empty(); })) return nullptr;
    NDK_CONNECTOR *c = incoming.front();
    incoming.erase(incoming.begin());
    return c;
}

bool Pair::Open() {
    if (OpenLoopback(&adapter) != STATUS_SUCCESS) return false;
    if (adapter->Dispatch->NdkCreateListener(adapter, OnConnect, this, nullptr, nullptr, &listener)) return false;
    sockaddr_in a = Loopback();
    Completion c;
    if (Finish(listener->Dispatch->NdkListen(listener, Sa(&a), sizeof a, Completion::Request, &c), c)) return false;
    ULONG len = sizeof a;
    if (listener->Dispatch->NdkGetLocalAddress(listener, Sa(&a), &len)) return false;
    port = ntohs(a.sin_port);
    return server.Create(adapter) && client.Create(adapter);
}

bool Pair::Connect() { return Connect(client, server, port); }

bool Pair::Connect(Side &client, Side &server, uint16_t port, NDK_SHARED_ENDPOINT *endpoint) {
    sockaddr_in src = Loopback(), dst = Loopback(port);
    Completion connected, accepted, completed;
    const NDK_CONNECTOR_DISPATCH *d = client.connector->Dispatch;
    NTSTATUS cs = endpoint ? d->NdkConnectWithSharedEndpoint(client.connector, client.qp, endpoint, Sa(&dst),
                                                             sizeof dst, 8, 8, nullptr, 0, Completion::Request,
                                                             &connected)
                           : d->NdkConnect(client.connector, client.qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst,
                                           8, 8, nullptr, 0, Completion::Request, &connected);
    if (cs != STATUS_PENDING && cs != STATUS_SUCCESS) return false;
    // The server side takes the connector the listener delivered (its own
    // pre-created one is not used for a passive connection).
    Close(server.connector);
    server.connector = NextIncoming();
    if (!server.connector) return false;
    NTSTATUS s = server.connector->Dispatch->NdkAccept(server.connector, server.qp, 8, 8, nullptr, 0, Completion::Event,
                                              &server.disconnected, Completion::Request, &accepted);
    if (s != STATUS_PENDING && s != STATUS_SUCCESS) return false;
    const NTSTATUS accept_status = s;
    if (Finish(cs, connected) != STATUS_SUCCESS) return false;
    s = client.connector->Dispatch->NdkCompleteConnect(client.connector, Completion::Event, &client.disconnected,
                                                       Completion::Request, &completed);
    if (Finish(s, completed) != STATUS_SUCCESS) return false;
    return Finish(accept_status, accepted) == STATUS_SUCCESS;
}

void Pair::Release() {
    server.Release();
    client.Release();
    {
        std::lock_guard<std::mutex> lock(mu);
        for (NDK_CONNECTOR *c : incoming) Close(c);
        incoming.clear();
    }
    Close(listener);
    listener = nullptr;
    if (adapter) {
        EXPECT_EQ(Close(adapter), STATUS_SUCCESS);
    }
    adapter = nullptr;
}

NDK_MW *Side::BindWindow(size_t length) {
    NDK_MW *mw = nullptr;
    EXPECT_EQ(pd->Dispatch->NdkCreateMw(pd, nullptr, nullptr, &mw), STATUS_SUCCESS);
    if (!mw) return nullptr;
    EXPECT_EQ(qp->Dispatch->NdkBind(qp, mw, region.mr, mw, region.bytes.data(), length, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    NDK_RESULT_EX bound = Next();
    EXPECT_EQ(bound.Status, STATUS_SUCCESS);
    return bound.Status == STATUS_SUCCESS ? mw : nullptr;
}

}  // namespace ndk_test
