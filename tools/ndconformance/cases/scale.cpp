// Scale: 1,000 connections on one adapter in bounded time (pipelined
// connection setup, one message each, orderly teardown), and many threads
// each posting to its own QP. Run once per address (IPv4 and IPv6).
#include <atomic>
#include <memory>
#include <thread>

#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(Scale);

TEST_P(Scale, ThousandConnectionsOnOneAdapter) {
    constexpr int kConnections = 1000, kWindow = 32;
    constexpr uint64_t kBoundMs = 60000;  // generous: a provider doing this in minutes fails
    uint64_t t0 = NowMs();
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    ASSERT_TRUE(peer.Post(Msg("serve")
                              .Set("n", kConnections)
                              .Set("window", kWindow)
                              .Set("recvs", 1)
                              .Set("recvsize", 64)
                              .Set("rdepth", 4)
                              .Set("idepth", 4)
                              .Set("cqdepth", 16)));
    Cq cq;
    ASSERT_ND(ND_SUCCESS, cq.Create(node.adapter.get(), node.file, 4 * kConnections, false));
    QpShape shape;
    shape.receive_depth = 2;
    shape.initiator_depth = 2;
    shape.receive_sge = shape.initiator_sge = 1;
    shape.inline_size = 0;
    struct Slot {
        Conn conn;
        Ov ov{false};
        int stage = 0;  // 0 idle, 1 connecting, 2 completing, 3 done, -1 failed
        HRESULT status = ND_SUCCESS;
    };
    std::vector<std::unique_ptr<Slot>> slots;
    for (int i = 0; i < kConnections; ++i) {
        slots.push_back(std::make_unique<Slot>());
        ASSERT_ND(ND_SUCCESS, slots.back()->conn.Create(node, cq, cq, shape)) << "QP " << i;
    }
    int next = 0, active = 0, done = 0, failed = 0;
    IpAddress local = WithPort(addr, 0);
    auto end = [&](Slot &s, HRESULT hr) {
        s.status = hr;
        s.stage = SUCCEEDED(hr) ? 3 : -1;
        if (SUCCEEDED(hr))
            ++done;
        else
            ++failed;
    };
    // Connect done: CompleteConnect, or the end.
    auto complete = [&](Slot &s) {
        s.stage = 2;
        s.ov.Reuse();
        HRESULT hr = s.conn.connector->CompleteConnect(&s.ov);
        if (hr != ND_PENDING) {
            --active;
            end(s, hr);
        }
    };
    Deadline d(kBoundMs);
    Backoff b;
    while (done + failed < kConnections && !d.Expired()) {
        while (next < kConnections && active < kWindow) {
            Slot &s = *slots[next++];
            HRESULT hr = s.conn.connector->Bind(local.sa(), local.length());
            if (SUCCEEDED(hr))
                hr = s.conn.connector->Connect(s.conn.qp.get(), dest.sa(), dest.length(), 0, 0, nullptr, 0, &s.ov);
            if (hr != ND_PENDING && hr != ND_SUCCESS) {
                end(s, hr);
                continue;
            }
            s.stage = 1;
            ++active;
            if (hr == ND_SUCCESS) complete(s);
        }
        bool progressed = false;
        for (int i = 0; i < next; ++i) {
            Slot &s = *slots[i];
            if (s.stage != 1 && s.stage != 2) continue;
            HRESULT hr = s.conn.connector->GetOverlappedResult(&s.ov, FALSE);
            if (hr == ND_PENDING) continue;
            progressed = true;
            if (FAILED(hr) || s.stage == 2) {
                --active;
                end(s, hr);
            } else {
                complete(s);
            }
        }
        if (progressed)
            b.Reset();
        else
            b.Pause();
    }
    uint64_t connect_ms = NowMs() - t0;
    for (auto &s : slots)
        if (s->stage == 1 || s->stage == 2) Finish(s->conn.connector.get(), &s->ov, ND_PENDING, 1);
    ASSERT_EQ(done, kConnections) << failed << " failed (first: "
                                  << [&] {
                                         for (auto &s : slots)
                                             if (s->stage == -1) return StatusName(s->status);
                                         return std::string("timed out");
                                     }()
                                  << ") after " << connect_ms << " ms";
    PEER_OK(served, peer.Wait(kBoundMs));
    EXPECT_ND(ND_SUCCESS, ST(served, "status"));
    // Every connection carries one message (its first 8 bytes are 0, the
    // sequence number the peer's sink expects on each QP).
    Mem m(64);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_TRUE(peer.Post(Msg("sink").Set("c", 0).Set("k", kConnections).Set("n", 1).Set("len", 64)));
    for (int i = 0; i < kConnections; ++i) ASSERT_ND(ND_SUCCESS, slots[i]->conn.PostSend(m, 0, 64)) << "QP " << i;
    int sent = 0;
    Deadline d2(kBoundMs);
    while (sent < kConnections && !d2.Expired()) {
        ND2_RESULT r;
        if (!cq.Next(&r, 100)) continue;
        ASSERT_ND(ND_SUCCESS, r.Status) << Describe(r);
        ++sent;
    }
    EXPECT_EQ(sent, kConnections);
    PEER_OK(sunk, peer.Wait(kBoundMs));
    // Orderly teardown.
    for (auto &s : slots) {
        s->ov.Reuse();
        HRESULT hr = s->conn.connector->Disconnect(&s->ov);
        ASSERT_TRUE(hr == ND_PENDING || hr == ND_SUCCESS) << StatusName(hr);
    }
    for (auto &s : slots) EXPECT_ND(ND_SUCCESS, Finish(s->conn.connector.get(), &s->ov, ND_PENDING));
    uint64_t total = NowMs() - t0;
    EXPECT_LT(total, kBoundMs) << "1,000 connections took " << total << " ms";
    RecordProperty("connect_ms", std::to_string(connect_ms));
    RecordProperty("total_ms", std::to_string(total));
}

// Many threads, each with its own QP and CQ, posting and reaping at once;
// the peer checks every QP's messages arrive complete and in order.
TEST_P(Scale, ManyThreadsEachPostingToItsOwnQueuePair) {
    constexpr int kThreads = 8, kMessages = 2000, kOutstanding = 32;
    Peer peer;
    ASSERT_EQ(peer.Start(addr), "");
    PEER_OK(l, peer.Call(Msg("listen")));
    IpAddress dest = WithPort(PeerIp(addr), static_cast<uint16_t>(l.U64("port")));
    ASSERT_TRUE(peer.Post(Msg("serve").Set("n", kThreads).Set("recvs", 64).Set("recvsize", 64).Set("rdepth", 64)));
    struct Worker {
        Cq cq;
        Conn conn;
        Mem m{64 * kOutstanding};
        std::string error;
    };
    std::vector<std::unique_ptr<Worker>> w;
    for (int i = 0; i < kThreads; ++i) {
        w.push_back(std::make_unique<Worker>());
        ASSERT_ND(ND_SUCCESS, w.back()->cq.Create(node.adapter.get(), node.file, 256, false));
        ASSERT_ND(ND_SUCCESS, w.back()->conn.Create(node, w.back()->cq, w.back()->cq));
        ASSERT_ND(ND_SUCCESS, w.back()->conn.Connect(dest));
        ASSERT_ND(ND_SUCCESS, w.back()->m.Register(node.adapter.get(), node.file, kAllRights));
    }
    PEER_OK(served, peer.Wait());
    ASSERT_TRUE(peer.Post(Msg("sink").Set("c", 0).Set("k", kThreads).Set("n", kMessages).Set("len", 64)));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Worker &me = *w[t];
            uint64_t posted = 0, completed = 0;
            Deadline d(WaitMs() * 4);
            while (completed < kMessages && !d.Expired()) {
                while (posted < kMessages && posted - completed < kOutstanding) {
                    size_t slot = posted % kOutstanding;
                    std::memcpy(me.m.data() + slot * 64, &posted, 8);
                    HRESULT hr = me.conn.PostSend(me.m, slot * 64, 64);
                    if (FAILED(hr)) {
                        me.error = "Send " + std::to_string(posted) + ": " + StatusName(hr);
                        return;
                    }
                    ++posted;
                }
                ND2_RESULT r[16];
                ULONG n = me.cq->GetResults(r, 16);
                for (ULONG k = 0; k < n; ++k) {
                    if (FAILED(r[k].Status)) {
                        me.error = "completion " + std::to_string(completed) + ": " + Describe(r[k]);
                        return;
                    }
                    ++completed;
                }
                if (n == 0) sched_yield();
            }
            if (completed < kMessages) me.error = "only " + std::to_string(completed) + " sends completed";
        });
    for (auto &t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(w[t]->error, "") << "thread " << t;
    PEER_OK(sunk, peer.Wait(WaitMs() * 4));
}

}  // namespace
}  // namespace ndc
