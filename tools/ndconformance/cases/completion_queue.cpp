// Completion queues: Notify types and arming rules (no lost wake-ups, one
// trigger releases every waiter, each completion triggers once), overrun,
// destruction, GetResults counts, Resize.
#include <memory>

#include "opennd/cq_moderation.h"
#include "suite.h"

namespace ndc {
namespace {

// A connected QP whose CQ is not reaped behind the case's back; the peer
// sends it 64-byte messages on request.
struct CqPair {
    Pair p;
    Mem m{65536};
    std::string Setup(Node &node, const IpAddress &addr, int receives = 16, ULONG cq_depth = 256,
                      Msg serve = Msg("serve")) {
        QpShape s;
        s.receive_depth = std::max(64, receives);
        std::string err = p.Connect(node, addr, serve, s, false, cq_depth);
        if (!err.empty()) return err;
        p.rcq.pump = false;
        HRESULT hr = m.Register(node.adapter.get(), node.file, kAllRights);
        if (FAILED(hr)) return "Register: " + StatusName(hr);
        for (int i = 0; i < receives; ++i)
            if (FAILED(hr = p.conn.PostReceive(m, 0, 64, reinterpret_cast<void *>(uintptr_t(i + 1)))))
                return "Receive: " + StatusName(hr);
        Msg r = p.peer.Call(Msg("reg").Set("name", "m").Set("size", 4096));
        return r.ok() ? "" : r.error();
    }
    bool Send(ULONG flags = 0, int n = 1) {
        return p.peer.Call(Msg("send").Set("c", 0).Set("mem", "m").Set("len", 64).Set("n", n).Set("stride", 0).Set(
                               "flags", static_cast<uint64_t>(flags)))
            .ok();
    }
    // The peer saw its n Sends complete: the messages are in this CQ.
    bool Delivered(int n = 1) {
        Msg r = p.peer.Call(Msg("reap").Set("c", 0).Set("n", n));
        return r.ok() && r.U64("count") == static_cast<uint64_t>(n);
    }
    // Reaps everything now in the CQ.
    int Drain() {
        int n = 0;
        ND2_RESULT r[8];
        ULONG got;
        while ((got = p.rcq->GetResults(r, 8)) > 0) {
            n += static_cast<int>(got);
            if (got < 8) break;
        }
        return n;
    }
};

bool StillPending(IND2Overlapped *obj, OVERLAPPED *ov, uint64_t ms) {
    Deadline d(ms);
    while (!d.Expired()) {
        if (obj->GetOverlappedResult(ov, FALSE) != ND_PENDING) return false;
        SleepMs(5);
    }
    return obj->GetOverlappedResult(ov, FALSE) == ND_PENDING;
}

// R052: a CQ posts nothing until Notify arms it; then entries already
// queued satisfy the Notify (R059).
TEST_F(CompletionQueue, NoNotificationUntilArmedR052) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 1, 0);  // after the connection's own requests
    ASSERT_NE(port, nullptr);
    ASSERT_TRUE(c.Send(0, 3));
    SleepMs(200);
    OVERLAPPED_ENTRY e;
    ULONG n = 0;
    EXPECT_FALSE(GetQueuedCompletionStatusEx(port, &e, 1, &n, 0, FALSE) && n > 0)
        << "a packet was posted without a Notify";
    Ov ov;
    HRESULT hr = c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov);
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, hr)) << "three completions are waiting";
    EXPECT_TRUE(c.Delivered(3));
    int got = 0;
    Deadline d(WaitMs());
    while (got < 3 && !d.Expired()) got += c.Drain();
    EXPECT_EQ(got, 3);
    CloseHandle(port);
}

TEST_F(CompletionQueue, NotifyAnyCompletesOnNextCompletionR053) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    EXPECT_EQ(c.Drain(), 0);
    Ov ov;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov));
    EXPECT_TRUE(StillPending(c.p.rcq.get(), &ov, 100)) << "Notify completed with nothing new";
    ASSERT_TRUE(c.Send());
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, ND_PENDING));
    ND2_RESULT r;
    ASSERT_TRUE(NextIs(c.p.rcq, ND_SUCCESS, Nd2RequestTypeReceive, &r));
}

TEST_F(CompletionQueue, NotifySolicitedOnlyForSolicitedSendsR054) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ov ov;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_SOLICITED, &ov));
    ASSERT_TRUE(c.Send(0));
    ASSERT_TRUE(c.Delivered()) << "the unflagged Send never completed while a Notify was armed";
    EXPECT_TRUE(StillPending(c.p.rcq.get(), &ov, 150)) << "SOLICITED completed for an unsolicited receive";
    ASSERT_TRUE(c.Send(ND_OP_FLAG_SEND_AND_SOLICIT_EVENT));
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, ND_PENDING)) << "SOLICITED did not complete for a solicited Send";
    std::vector<ND2_RESULT> got = c.p.rcq.Take(2);
    EXPECT_EQ(got.size(), 2u);
}

// R055: an error completion satisfies every outstanding Notify, whatever
// its type.
TEST_F(CompletionQueue, ErrorCompletionSatisfiesEveryNotifyR055) {
    CqPair c;
    std::string err = c.Setup(node, addr, 0);
    ASSERT_TRUE(err.empty()) << err;
    Remote rb = PeerRegister(c.p.peer, "rb", 64);
    Ov solicited, errors;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_SOLICITED, &solicited));
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ERRORS, &errors));
    ND2_SGE sge = c.m.Sge(0, 64);
    ASSERT_ND(ND_SUCCESS, c.p.conn.qp->Read(nullptr, &sge, 1, rb.addr, rb.token ^ 0x0F0F0F0F, 0));
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &solicited, ND_PENDING)) << "Notify(SOLICITED) on an error completion";
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &errors, ND_PENDING)) << "Notify(ERRORS) on an error completion";
    EXPECT_TRUE(NextIs(c.p.rcq, ND_ACCESS_VIOLATION, Nd2RequestTypeRead));
}

// R056, R057: ANY upgrades a pending SOLICITED, and one trigger releases
// every outstanding Notify.
TEST_F(CompletionQueue, OneTriggerReleasesEveryNotifyR056R057) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    std::vector<std::unique_ptr<Ov>> ovs;
    ULONG types[] = {ND_CQ_NOTIFY_SOLICITED, ND_CQ_NOTIFY_ANY, ND_CQ_NOTIFY_ANY, ND_CQ_NOTIFY_ANY};
    for (ULONG t : types) {
        ovs.push_back(std::make_unique<Ov>());
        ASSERT_ND(ND_PENDING, c.p.rcq->Notify(t, ovs.back().get()));
    }
    ASSERT_TRUE(c.Send(0));  // an ordinary completion
    for (size_t i = 0; i < ovs.size(); ++i)
        EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), ovs[i].get(), ND_PENDING))
            << "Notify " << i << (i == 0 ? " (SOLICITED, upgraded by ANY)" : " (ANY)");
}

// R058: the completions that triggered a notification do not trigger the
// next Notify (the documented cycle: Notify, E1, GetResults until empty,
// Notify again: pending until E2).
TEST_F(CompletionQueue, EachCompletionTriggersOnceR058) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ov ov;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov));
    ASSERT_TRUE(c.Send());
    ASSERT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, ND_PENDING));
    ASSERT_TRUE(c.Delivered());
    int drained = 0;
    Deadline d(WaitMs());
    while (drained < 1 && !d.Expired()) drained += c.Drain();
    ASSERT_EQ(drained, 1);
    EXPECT_EQ(c.Drain(), 0);
    ov.Reuse();
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov)) << "E1 re-triggered the CQ";
    EXPECT_TRUE(StillPending(c.p.rcq.get(), &ov, 150));
    ASSERT_TRUE(c.Send());
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, ND_PENDING));
}

// R059 variant A: GetResults found nothing, an entry arrives, then Notify:
// it completes (at once or right away).
TEST_F(CompletionQueue, EntryBeforeNotifySatisfiesItR059) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    EXPECT_EQ(c.Drain(), 0);
    ASSERT_TRUE(c.Send());
    SleepMs(50);
    Ov ov;
    HRESULT hr = c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov);
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, hr)) << "a completion queued before Notify was lost";
}

// R059 under load: a ping-pong driven only by notifications (no polling
// between them). A lost wake-up hangs, which fails the case.
TEST_F(CompletionQueue, NoLostWakeupsInANotifyDrivenPingPongR059) {
    constexpr int kRounds = 300;
    CqPair c;
    std::string err = c.Setup(node, addr, 0, 256, Msg("serve").Set("recvs", 4).Set("recvsize", 64));
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_TRUE(c.p.peer.Post(Msg("echo").Set("c", 0).Set("n", kRounds).Set("recvsize", 64)));
    for (int i = 0; i < kRounds; ++i) {
        ASSERT_ND(ND_SUCCESS, c.p.conn.PostReceive(c.m, 0, 64));
        ASSERT_ND(ND_SUCCESS, c.p.conn.PostSend(c.m, 64, 64));
        int send_done = 0, recv_done = 0;
        while (send_done + recv_done < 2) {
            ND2_RESULT r[4];
            ULONG n = c.p.rcq->GetResults(r, 4);
            for (ULONG k = 0; k < n; ++k) {
                ASSERT_ND(ND_SUCCESS, r[k].Status) << "round " << i;
                (r[k].RequestType == Nd2RequestTypeSend ? send_done : recv_done)++;
            }
            if (n > 0) continue;
            Ov ov;
            HRESULT hr = c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov);
            hr = Finish(c.p.rcq.get(), &ov, hr);
            ASSERT_ND(ND_SUCCESS, hr) << "round " << i << ": the Notify never completed (lost wake-up)";
        }
    }
    PEER_OK(e, c.p.peer.Wait());
}

// R060 (COMPAT: a CQ shallower than its QP is legal): an overrun is
// reported as ND_BUFFER_OVERFLOW through Notify.
TEST_F(CompletionQueue, OverrunReportedThroughNotifyR060) {
    constexpr int kMessages = 1024;
    CqPair c;
    std::string err = c.Setup(node, addr, kMessages, 1, Msg("serve").Set("idepth", kMessages + 16));
    ASSERT_TRUE(err.empty()) << err;
    Ov ov;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ERRORS, &ov));
    ASSERT_TRUE(c.Send(0, kMessages));
    EXPECT_ND(ND_BUFFER_OVERFLOW, Finish(c.p.rcq.get(), &ov, ND_PENDING))
        << kMessages << " completions into a CQ of depth 1";
    Ov again;
    EXPECT_ND(ND_BUFFER_OVERFLOW, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &again)) << "a later Notify: the CQ is dead";
    c.p.peer.Kill();
}

TEST_F(CompletionQueue, DestroyingTheCqCancelsNotifyR061) {
    HANDLE port = CreateIoCompletionPort(node.file, nullptr, 3, 0);
    ASSERT_NE(port, nullptr);
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16, false));
    Ov a, b;
    ASSERT_ND(ND_PENDING, cq->Notify(ND_CQ_NOTIFY_ANY, &a));
    ASSERT_ND(ND_PENDING, cq->Notify(ND_CQ_NOTIFY_ERRORS, &b));
    cq.Release();
    for (int i = 0; i < 2; ++i) {
        OVERLAPPED_ENTRY e{};
        ULONG n = 0;
        ASSERT_TRUE(GetQueuedCompletionStatusEx(port, &e, 1, &n, static_cast<DWORD>(WaitMs()), FALSE) && n == 1)
            << "no completion for a Notify of the destroyed CQ";
        EXPECT_ND(ND_CANCELED, static_cast<HRESULT>(reinterpret_cast<OVERLAPPED *>(e.lpOverlapped)->Internal));
    }
    EXPECT_TRUE(a.Signaled() && b.Signaled());
    CloseHandle(port);
}

// R062: GetResults writes at most nResults entries and returns fewer only
// when the CQ is empty. Ten flushed receives give 3, 3, 3, 1, 0.
TEST_F(CompletionQueue, GetResultsCountsR062) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Cq &cq = p.rcq;
    cq.pump = false;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int i = 0; i < 10; ++i) ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 64));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Flush());
    SleepMs(QuietMs());  // the flush may still be completing when Flush returns
    ND2_RESULT r[4];
    ULONG expect[] = {3, 3, 3, 1, 0};
    for (ULONG want : expect) {
        std::memset(&r[3], 0x5A, sizeof r[3]);
        ULONG n = cq->GetResults(r, 3);
        EXPECT_EQ(n, want);
        const uint8_t *sentinel = reinterpret_cast<const uint8_t *>(&r[3]);
        for (size_t k = 0; k < sizeof r[3]; ++k) ASSERT_EQ(sentinel[k], 0x5A) << "GetResults wrote past nResults";
        for (ULONG k = 0; k < n; ++k) EXPECT_ND(ND_CANCELED, r[k].Status);
    }
}

TEST_F(CompletionQueue, ResizeR066R067) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve"), QpShape(), false, 64);
    ASSERT_TRUE(err.empty()) << err;
    Cq &cq = p.rcq;
    cq.pump = false;
    HRESULT hr = cq->Resize(128);
    if (!(node.info.AdapterFlags & ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
        EXPECT_ND(ND_NOT_SUPPORTED, hr) << "R066: CQ_RESIZE_SUPPORTED is clear";
        GTEST_SKIP() << "skipped: CQ resize (ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED clear, ND_NOT_SUPPORTED)";
    }
    ASSERT_ND(ND_SUCCESS, hr);
    EXPECT_ND(ND_SUCCESS, cq->Resize(16));
    EXPECT_ND(ND_INVALID_PARAMETER, cq->Resize(node.info.MaxCompletionQueueDepth + 1));
    // R067: below the queued count: ND_BUFFER_OVERFLOW, nothing lost.
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    for (int i = 0; i < 10; ++i)
        ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, 64, reinterpret_cast<void *>(uintptr_t(i))));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Flush());
    SleepMs(QuietMs());
    EXPECT_ND(ND_BUFFER_OVERFLOW, cq->Resize(5));
    std::vector<ND2_RESULT> got = cq.Take(10);
    ASSERT_EQ(got.size(), 10u) << "completions lost by a refused Resize";
    for (int i = 0; i < 10; ++i) EXPECT_EQ(got[i].RequestContext, reinterpret_cast<void *>(uintptr_t(i)));
}

// R068: no completion lost or duplicated by Resize under live traffic.
TEST_F(CompletionQueue, ResizeUnderTrafficLosesNothingR068) {
    constexpr int kMessages = 3000, kWindow = 128;
    CqPair c;
    std::string err = c.Setup(node, addr, kWindow, 256);
    ASSERT_TRUE(err.empty()) << err;
    NDC_SKIP_UNSUPPORTED(c.p.rcq->Resize(512), "IND2CompletionQueue::Resize");
    ASSERT_TRUE(c.p.peer.Post(Msg("stream").Set("c", 0).Set("mem", "m").Set("len", 64).Set("n", kMessages)));
    PEER_OK(started, c.p.peer.Wait());
    int received = 0, posted = kWindow, resizes = 0;
    ULONG sizes[] = {4096, 160, 1024, 200, 512};
    Deadline d(WaitMs() * 3);
    while (received < kMessages && !d.Expired()) {
        ND2_RESULT r[16];
        ULONG n = c.p.rcq->GetResults(r, 16);
        for (ULONG k = 0; k < n; ++k) {
            ASSERT_ND(ND_SUCCESS, r[k].Status) << "receive " << received;
            ASSERT_EQ(r[k].RequestContext, reinterpret_cast<void *>(uintptr_t(received % kWindow + 1)))
                << "receive " << received << ": lost, duplicated or reordered";
            ++received;
            ASSERT_ND(ND_SUCCESS, c.p.conn.PostReceive(c.m, 0, 64, reinterpret_cast<void *>(uintptr_t(posted % kWindow + 1))));
            ++posted;
        }
        if (received / 100 > resizes) {
            HRESULT hr = c.p.rcq->Resize(sizes[resizes % 5]);
            ASSERT_ND_IN(Any(ND_SUCCESS, ND_BUFFER_OVERFLOW), hr);
            ++resizes;
        }
    }
    EXPECT_EQ(received, kMessages);
    EXPECT_GE(resizes, 10);
}

// OpenND's CQ extension (opennd/cq_moderation.h), what NDKPI's interrupt
// moderation runs on: a provider that sets CQ_INTERRUPT_MODERATION answers
// it on every CQ, and a moderated Notify waits for its count, or for its
// interval; every entry is still there to take.
TEST_F(CompletionQueue, InterruptModerationDefersNotifyByCountOrTime) {
    CqPair c;
    std::string err = c.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    IOpenNdCqModeration *mod = nullptr;
    const HRESULT hr = c.p.rcq->QueryInterface(IID_IOpenNdCqModeration, reinterpret_cast<void **>(&mod));
    std::unique_ptr<IOpenNdCqModeration, void (*)(IOpenNdCqModeration *)> hold(
        SUCCEEDED(hr) ? mod : nullptr, [](IOpenNdCqModeration *m) { m->Release(); });
    if (!(node.info.AdapterFlags & ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED))
        GTEST_SKIP() << "skipped: interrupt moderation (ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED clear)";
    ASSERT_EQ(hr, S_OK) << "CQ_INTERRUPT_MODERATION is set, but the CQ does not answer IID_IOpenNdCqModeration";
    constexpr ULONG kNoLimit = 0xFFFFFFFF;
    EXPECT_ND(ND_INVALID_PARAMETER_MIX, mod->Moderate(kNoLimit, kNoLimit)) << "a Notify that could wait forever";
    ASSERT_ND(ND_SUCCESS, mod->Moderate(kNoLimit, 3));
    Ov ov;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &ov));
    ASSERT_TRUE(c.Send(0, 2));
    ASSERT_TRUE(c.Delivered(2));
    EXPECT_TRUE(StillPending(c.p.rcq.get(), &ov, 150)) << "the Notify fired with 2 of its 3 entries";
    ASSERT_TRUE(c.Send());
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &ov, ND_PENDING)) << "the third entry did not fire it";
    EXPECT_EQ(c.Drain(), 3);
    ASSERT_ND(ND_SUCCESS, mod->Moderate(100000, kNoLimit));  // 100 ms, no count
    Ov later;
    ASSERT_ND(ND_PENDING, c.p.rcq->Notify(ND_CQ_NOTIFY_ANY, &later));
    const uint64_t t0 = NowUs();
    ASSERT_TRUE(c.Send());
    EXPECT_ND(ND_SUCCESS, Finish(c.p.rcq.get(), &later, ND_PENDING)) << "the interval passed and nothing fired";
    EXPECT_GE(NowUs() - t0, 100000u) << "fired before its interval";
    EXPECT_EQ(c.Drain(), 1);
    EXPECT_ND(ND_SUCCESS, mod->Moderate(0, 0));
}

TEST_F(CompletionQueue, NotifyWithUnknownTypeRefused) {  // D29
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 16, false));
    Ov ov;
    HRESULT hr = cq->Notify(7, &ov);
    if (hr == ND_PENDING) {
        cq->CancelOverlappedRequests();
        Finish(cq.get(), &ov, hr);
    }
    EXPECT_TRUE(FAILED(hr) && hr != ND_PENDING) << "Notify(7) returned " << StatusName(hr);
}

}  // namespace
}  // namespace ndc
