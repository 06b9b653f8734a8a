// The kit's connector and listener (SPI §6, §11) over the loopback
// provider's in-process transport: a second transport under the same state
// machine ndsoft uses, driven call by call from one process.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "support/loopback_adapter.h"

using namespace testing_support;
using opennd::net::IpAddress;
using opennd::net::SetPort;

namespace {

constexpr ULONG kLimit = 8;  // the loopback adapter's read limits

class KitConnection : public LoopbackAdapterTest {
protected:
    void SetUp() override {
        LoopbackAdapterTest::SetUp();
        cq = NewCq(64);
        for (IND2QueuePair **qp : {&active_qp, &passive_qp})
            ASSERT_EQ(adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, nullptr, 8, 8, 1, 1, 0,
                                               reinterpret_cast<void **>(qp)),
                      ND_SUCCESS);
        active = NewConnector();
        passive = NewConnector();
        for (OVERLAPPED *ov : {&a_ov, &p_ov, &l_ov, &n_ov}) ov->hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    }
    void TearDown() override {
        for (IUnknown *u : std::initializer_list<IUnknown *>{active, passive, listener, active_qp, passive_qp, cq})
            if (u) u->Release();
        for (OVERLAPPED *ov : {&a_ov, &p_ov, &l_ov, &n_ov}) CloseHandle(ov->hEvent);
        LoopbackAdapterTest::TearDown();
    }
    IND2Connector *NewConnector() {
        IND2Connector *c = nullptr;
        EXPECT_EQ(adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&c)), ND_SUCCESS);
        return c;
    }
    // Listens on 127.0.0.1, port chosen by the provider; returns the address.
    IpAddress Listen() {
        EXPECT_EQ(adapter->CreateListener(IID_IND2Listener, file, reinterpret_cast<void **>(&listener)), ND_SUCCESS);
        IpAddress a = Ip("127.0.0.1");
        EXPECT_EQ(listener->Bind(a.sa(), a.length()), ND_SUCCESS);
        EXPECT_EQ(listener->Listen(0), ND_SUCCESS);
        ULONG size = sizeof a.storage;
        EXPECT_EQ(listener->GetLocalAddress(a.sa(), &size), ND_SUCCESS);
        return a;
    }
    // The request's status once it completed (bounded wait).
    HRESULT Done(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr) {
        if (hr != ND_PENDING) return hr;
        if (WaitForSingleObject(ov->hEvent, 5000) != WAIT_OBJECT_0) return ND_TIMEOUT;
        ResetEvent(ov->hEvent);
        return obj->GetOverlappedResult(ov, FALSE);
    }
    HRESULT Connect(const IpAddress &dest, const std::string &data, ULONG in = kLimit, ULONG out = kLimit) {
        return active->Connect(active_qp, dest.sa(), dest.length(), in, out, data.data(),
                               static_cast<ULONG>(data.size()), &a_ov);
    }
    std::string PrivateData(IND2Connector *c) {
        char buf[256];
        ULONG size = sizeof buf;
        EXPECT_EQ(c->GetPrivateData(buf, &size), ND_SUCCESS);
        return std::string(buf, size);
    }
    // A Receive on `qp` into rbuf; a Send of `text` on `from`; the receive's completion.
    ND2_RESULT Exchange(IND2QueuePair *from, IND2QueuePair *to, const std::string &text) {
        std::memset(rbuf, 0, sizeof rbuf);
        ND2_SGE r{rbuf, sizeof rbuf, 0};
        EXPECT_EQ(to->Receive(&recv_ctx, &r, 1), ND_SUCCESS);
        ND2_SGE sge{const_cast<char *>(text.data()), static_cast<ULONG>(text.size()), 0};
        EXPECT_EQ(from->Send(&send_ctx, &sge, 1, 0), ND_SUCCESS);
        ND2_RESULT got[4];
        ND2_RESULT receive{};
        ULONG n = cq->GetResults(got, 4);
        EXPECT_EQ(n, 2u);  // the receive and the send, at once
        for (ULONG i = 0; i < n; ++i)
            if (got[i].RequestType == Nd2RequestTypeReceive) receive = got[i];
        return receive;
    }

    IND2CompletionQueue *cq = nullptr;
    IND2QueuePair *active_qp = nullptr, *passive_qp = nullptr;
    IND2Connector *active = nullptr, *passive = nullptr;
    IND2Listener *listener = nullptr;
    OVERLAPPED a_ov{}, p_ov{}, l_ov{}, n_ov{};
    char rbuf[64];
    int recv_ctx = 0, send_ctx = 0;
};

TEST_F(KitConnection, TheWholeHandshakeThenDataThenDisconnect) {
    IpAddress dest = Listen();
    ASSERT_EQ(listener->GetConnectionRequest(passive, &l_ov), ND_PENDING);
    // The initiator serves 100 Reads (clamped to the adapter's 8) and
    // issues 3.
    ASSERT_EQ(Connect(dest, "hello", 100, 3), ND_PENDING);
    ASSERT_EQ(Done(listener, &l_ov, ND_PENDING), ND_SUCCESS);
    // Passive side, Requested: the request's private data and read limits,
    // seen from its side.
    EXPECT_EQ(PrivateData(passive), "hello");
    ULONG in = 0, out = 0;
    EXPECT_EQ(passive->GetReadLimits(&in, &out), ND_SUCCESS);
    EXPECT_EQ(in, 3u);
    EXPECT_EQ(out, kLimit);
    EXPECT_EQ(passive->CompleteConnect(&p_ov), ND_CONNECTION_INVALID) << "not the passive side's call";
    // Accept offering to serve 5: the initiator issues at most 3, so 3 (R120).
    ASSERT_EQ(passive->Accept(passive_qp, 5, kLimit, "welcome", 7, &p_ov), ND_PENDING);
    EXPECT_EQ(passive->GetReadLimits(&in, &out), ND_SUCCESS);
    EXPECT_EQ(in, 3u);
    EXPECT_EQ(out, kLimit);
    ASSERT_EQ(Done(active, &a_ov, ND_PENDING), ND_SUCCESS);
    EXPECT_EQ(PrivateData(active), "welcome");
    EXPECT_EQ(active->GetReadLimits(&in, &out), ND_SUCCESS);
    EXPECT_EQ(in, kLimit);
    EXPECT_EQ(out, 3u);
    EXPECT_EQ(WaitForSingleObject(p_ov.hEvent, 50), static_cast<DWORD>(WAIT_TIMEOUT)) << "Accept waits for CompleteConnect";
    ASSERT_EQ(Done(active, &a_ov, active->CompleteConnect(&a_ov)), ND_SUCCESS);
    ASSERT_EQ(Done(passive, &p_ov, ND_PENDING), ND_SUCCESS);
    // Data both ways, each Send into the other side's Receive.
    ND2_RESULT r = Exchange(active_qp, passive_qp, "ping");
    EXPECT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(r.BytesTransferred, 4u);
    EXPECT_EQ(std::string(rbuf), "ping");
    r = Exchange(passive_qp, active_qp, "pong!");
    EXPECT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(std::string(rbuf), "pong!");
    // The active side disconnects: the passive side's NotifyDisconnect
    // fires and its posted Receive is flushed.
    ND2_SGE sge{rbuf, sizeof rbuf, 0};
    ASSERT_EQ(passive_qp->Receive(&recv_ctx, &sge, 1), ND_SUCCESS);
    ASSERT_EQ(passive->NotifyDisconnect(&n_ov), ND_PENDING);
    ASSERT_EQ(Done(active, &a_ov, active->Disconnect(&a_ov)), ND_SUCCESS);
    ASSERT_EQ(Done(passive, &n_ov, ND_PENDING), ND_SUCCESS);
    ND2_RESULT flushed{};
    ASSERT_EQ(cq->GetResults(&flushed, 1), 1u);
    EXPECT_EQ(flushed.Status, ND_CANCELED);
    EXPECT_EQ(Done(passive, &p_ov, passive->Disconnect(&p_ov)), ND_SUCCESS) << "after the peer went: cleanup";
    EXPECT_EQ(active->Connect(active_qp, dest.sa(), dest.length(), 0, 0, nullptr, 0, &a_ov), ND_INVALID_DEVICE_STATE);
}

TEST_F(KitConnection, RejectCarriesPrivateDataAndTheInitiatorMayTryAgain) {
    IpAddress dest = Listen();
    ASSERT_EQ(listener->GetConnectionRequest(passive, &l_ov), ND_PENDING);
    ASSERT_EQ(Connect(dest, "may I"), ND_PENDING);
    ASSERT_EQ(Done(listener, &l_ov, ND_PENDING), ND_SUCCESS);
    ASSERT_EQ(passive->Reject("no", 2), ND_SUCCESS);
    EXPECT_EQ(Done(active, &a_ov, ND_PENDING), ND_CONNECTION_REFUSED);
    EXPECT_EQ(PrivateData(active), "no");
    EXPECT_EQ(passive->Accept(passive_qp, 0, 0, nullptr, 0, &p_ov), ND_CONNECTION_INVALID) << "rejected: closed";
    // Still bound: a second attempt, to a fresh passive connector, connects.
    IND2Connector *second = NewConnector();
    ASSERT_EQ(listener->GetConnectionRequest(second, &l_ov), ND_PENDING);
    ASSERT_EQ(Connect(dest, "again"), ND_PENDING);
    ASSERT_EQ(Done(listener, &l_ov, ND_PENDING), ND_SUCCESS);
    EXPECT_EQ(PrivateData(second), "again");
    second->Release();  // the initiator hears of it as a refusal
    EXPECT_EQ(Done(active, &a_ov, ND_PENDING), ND_CONNECTION_REFUSED);
}

TEST_F(KitConnection, BindTakesOnlyTheAdaptersAddressesAndOnlyOnce) {
    IpAddress foreign = Ip("192.0.2.1");  // TEST-NET-1: never the adapter's
    EXPECT_EQ(active->Bind(foreign.sa(), foreign.length()), ND_INVALID_ADDRESS);
    IpAddress local = Ip("::1");
    ASSERT_EQ(active->Bind(local.sa(), local.length()), ND_SUCCESS);
    EXPECT_EQ(active->Bind(local.sa(), local.length()), static_cast<HRESULT>(0xC0000238u))  // COMPAT
        << "bound already: STATUS_ADDRESS_ALREADY_ASSOCIATED";
    IpAddress bound;
    ULONG size = sizeof bound.storage;
    ASSERT_EQ(active->GetLocalAddress(bound.sa(), &size), ND_SUCCESS);
    EXPECT_TRUE(opennd::net::SameIp(bound.sa(), local.sa()));
    EXPECT_NE(opennd::net::Port(bound.sa()), 0) << "port 0 chooses one";
}

TEST_F(KitConnection, NoListenerIsARefusalAndAQueuedRequestCanBeCancelled) {
    IpAddress nobody = Ip("127.0.0.1");
    SetPort(nobody.sa(), 1);
    ASSERT_EQ(Connect(nobody, ""), ND_PENDING);
    EXPECT_EQ(Done(active, &a_ov, ND_PENDING), ND_CONNECTION_REFUSED);
    // A listener that holds the request (no GetConnectionRequest yet): the
    // initiator waits in Connecting until it cancels (R143).
    IpAddress dest = Listen();
    ASSERT_EQ(Connect(dest, ""), ND_PENDING);
    EXPECT_EQ(WaitForSingleObject(a_ov.hEvent, 50), static_cast<DWORD>(WAIT_TIMEOUT));
    ASSERT_EQ(active->CancelOverlappedRequests(), ND_SUCCESS);
    EXPECT_EQ(Done(active, &a_ov, ND_PENDING), ND_CANCELED);
}

TEST_F(KitConnection, AnInitiatorReleasedBeforeCompleteConnectFailsTheAccept) {
    IpAddress dest = Listen();
    ASSERT_EQ(listener->GetConnectionRequest(passive, &l_ov), ND_PENDING);
    ASSERT_EQ(Connect(dest, ""), ND_PENDING);
    ASSERT_EQ(Done(listener, &l_ov, ND_PENDING), ND_SUCCESS);
    ASSERT_EQ(passive->Accept(passive_qp, 1, 1, nullptr, 0, &p_ov), ND_PENDING);
    ASSERT_EQ(Done(active, &a_ov, ND_PENDING), ND_SUCCESS);
    EXPECT_EQ(active->Release(), 0u);  // COMPAT: released between Connect and CompleteConnect
    active = nullptr;
    EXPECT_EQ(Done(passive, &p_ov, ND_PENDING), ND_CONNECTION_REFUSED);
}

}  // namespace
