// Memory regions (registration lifecycle, several regions on one buffer,
// limits, deregistration with bound windows, release without Deregister)
// and memory windows (created invalidated, Bind/Invalidate, tokens, rights,
// rebinding).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <thread>

#include "suite.h"

namespace ndc {
namespace {

class MemoryWindow : public NodeTest {};

// The peer reads or writes `len` bytes at (raddr, token) through its
// connection c, into/from its buffer "buf"; the completion status.
HRESULT PeerRdma(Peer &p, bool write, uint64_t raddr, UINT32 token, uint64_t len, int c = 0) {
    Msg r = p.Call(Msg(write ? "write" : "read")
                       .Set("c", c)
                       .Set("mem", "buf")
                       .Set("len", len)
                       .Set("raddr", raddr)
                       .Set("rtoken", static_cast<uint64_t>(token)));
    if (!r.ok()) return kHang;
    if (FAILED(ST(r, "hr"))) return ST(r, "hr");
    Msg c2 = p.Call(Msg("reap").Set("c", c));
    if (!c2.ok() || c2.U64("count") != 1) return kHang;
    return ST(c2, "s0");
}

HRESULT Register(IND2MemoryRegion *mr, const void *p, size_t len, ULONG flags) {
    Ov ov;
    return Finish(mr, &ov, mr->Register(p, len, flags, &ov));
}

TEST_F(MemoryRegion, SecondRegistrationOnOneRegionRejectedR070) {
    Mem a(4096), b(4096);
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    ASSERT_ND(ND_SUCCESS, Register(mr.get(), a.data(), a.size(), kAllRights));
    HRESULT hr = Register(mr.get(), b.data(), b.size(), kAllRights);
    EXPECT_TRUE(FAILED(hr)) << "a second buffer was registered on one MR: " << StatusName(hr);
    // After Deregister the object can register again (derived).
    Ov ov;
    ASSERT_ND(ND_SUCCESS, Finish(mr.get(), &ov, mr->Deregister(&ov)));
    EXPECT_ND(ND_SUCCESS, Register(mr.get(), b.data(), b.size(), kAllRights));
    ov.Reuse();
    EXPECT_ND(ND_SUCCESS, Finish(mr.get(), &ov, mr->Deregister(&ov)));
}

TEST_F(MemoryRegion, RegisterAboveMaxRegistrationSizeR072) {
    if (node.info.MaxRegistrationSize == SIZE_MAX) {
        SUCCEED() << "MaxRegistrationSize is the largest SIZE_T: it cannot be exceeded";
        return;
    }
    Mem a(4096);
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    EXPECT_ND(ND_INVALID_PARAMETER, Register(mr.get(), a.data(), node.info.MaxRegistrationSize + 1, kAllRights));
}

TEST_F(MemoryRegion, RegisterInvalidRangeR073) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    Ref<IND2MemoryRegion> mr;
    // An unmapped range. Another thread of this process (the provider's,
    // a sanitizer's allocator) may map something there between our munmap
    // and the Register: a success counts as a failure only if the range is
    // still unmapped (msync: ENOMEM); otherwise try again elsewhere.
    for (int attempt = 1;; ++attempt) {
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
        void *hole = mmap(nullptr, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(hole, MAP_FAILED);
        munmap(hole, 4 * page);  // nothing is mapped there now
        HRESULT hr = Register(mr.get(), hole, 4 * page, kAllRights);
        if (hr == ND_ACCESS_VIOLATION) break;
        bool unmapped = msync(hole, 4 * page, MS_ASYNC) != 0 && errno == ENOMEM;
        if (unmapped || attempt == 10) {
            EXPECT_ND(ND_ACCESS_VIOLATION, hr) << "an unmapped range";
            break;
        }
    }
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    EXPECT_ND(ND_ACCESS_VIOLATION, Register(mr.get(), nullptr, page, kAllRights)) << "a null buffer";
    // A range that starts valid and runs into unmapped memory.
    Mem m(page);
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    void *after = mmap(m.data() + page, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (after != MAP_FAILED) munmap(after, page);
    if (after == m.data() + page) {
        EXPECT_ND(ND_ACCESS_VIOLATION, Register(mr.get(), m.data(), 2 * page, kAllRights)) << "runs off the mapping";
    }
}

TEST_F(MemoryRegion, UnalignedRegionWorks) {  // §3.5: no alignment rule
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 8192));
    ASSERT_TRUE(err.empty()) << err;
    Mem m(8192);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights, 3, 4093));
    FillPattern(m.data() + 3, 4093, 12);
    ASSERT_ND(ND_SUCCESS, p.conn.PostSend(m, 3, 4093));
    EXPECT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    EXPECT_EQ(r.U64("b0"), 4093u);
}

// Two QPs of the adapter use one registration (R074); the same buffer in
// two regions with different rights (R071).
TEST_F(MemoryRegion, OneBufferSeveralRegionsSeveralQueuePairsR071R074) {
    TwoConnections two;
    std::string err = two.Connect(node, addr, Msg("serve").Set("recvs", 1).Set("recvsize", 4096));
    ASSERT_TRUE(err.empty()) << err;
    Mem buf(8192);
    Ref<IND2MemoryRegion> rw, ro;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, rw.put_void()));
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, ro.put_void()));
    ASSERT_ND(ND_SUCCESS, Register(rw.get(), buf.data(), buf.size(), kAllRights));
    ASSERT_ND(ND_SUCCESS,
              Register(ro.get(), buf.data(), buf.size(), ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ));
    EXPECT_NE(rw->GetRemoteToken(), ro->GetRemoteToken());
    // Both QPs send out of the one region.
    FillPattern(buf.data(), 4096, 3);
    for (int i = 0; i < 2; ++i) {
        ND2_SGE sge{buf.data(), 4096, rw->GetLocalToken()};
        ASSERT_ND(ND_SUCCESS, two.c[i].qp->Send(nullptr, &sge, 1, 0));
        EXPECT_TRUE(NextIs(two.cq, ND_SUCCESS, Nd2RequestTypeSend)) << "QP " << i;
        PEER_OK(r, two.peer.Call(Msg("reap").Set("c", i)));
        EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
        EXPECT_EQ(r.U64("b0"), 4096u);
    }
    // The two.peer writes through the read-write region, reads through the
    // read-only one, and may not write through the read-only one.
    PEER_OK(reg, two.peer.Call(Msg("reg").Set("name", "buf").Set("size", 4096).Set("seed", 8)));
    uint64_t a = reinterpret_cast<uint64_t>(buf.data());
    EXPECT_ND(ND_SUCCESS, PeerRdma(two.peer, true, a, rw->GetRemoteToken(), 4096, 0));
    EXPECT_EQ(CheckPattern(buf.data(), 4096, 8), "");
    EXPECT_ND(ND_SUCCESS, PeerRdma(two.peer, false, a, ro->GetRemoteToken(), 4096, 0));
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(two.peer, true, a, ro->GetRemoteToken(), 4096, 1))
        << "a write through a region registered without remote write";
    Ov ov;
    EXPECT_ND(ND_SUCCESS, Finish(rw.get(), &ov, rw->Deregister(&ov)));
    ov.Reuse();
    EXPECT_ND(ND_SUCCESS, Finish(ro.get(), &ov, ro->Deregister(&ov)));
}

// R076: a region released without Deregister is cleaned up by the
// provider (registrations do not pile up).
TEST_F(MemoryRegion, ReleaseWithoutDeregisterCleansUpR076) {
    Mem m(4096);
    constexpr int kRounds = 70000;  // more than any registration table we know of
    // Bounded in time too (a slow device, an emulated VM), but not by the
    // wait bound: a run given long waits would spend three of them here.
    const uint64_t bound = std::min<uint64_t>(WaitMs() * 3, 20000);
    uint64_t t0 = NowMs();
    for (int i = 0; i < kRounds; ++i) {
        Ref<IND2MemoryRegion> mr;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
        ASSERT_ND(ND_SUCCESS, Register(mr.get(), m.data(), m.size(), kAllRights)) << "round " << i;
        if (NowMs() - t0 > bound) {
            SUCCEED() << "stopped after " << i << " rounds (time bound)";
            break;
        }
    }
}

// COMPAT: Deregister with a window still bound fails at once with
// ND_DEVICE_BUSY; after Invalidate it works (R075).
TEST_F(MemoryRegion, DeregisterWithBoundWindowIsBusyR075) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(8192);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    Ov ov;
    HRESULT hr = m.mr()->Deregister(&ov);
    EXPECT_ND(ND_DEVICE_BUSY, hr) << "Deregister with a bound window must fail at once";
    if (hr == ND_PENDING) Finish(m.mr(), &ov, hr);
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Invalidate(nullptr, mw.get(), 0));
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeInvalidate));
    EXPECT_ND(ND_SUCCESS, m.Deregister());
}

// R075 against a Bind racing it on another thread: a Deregister that
// succeeds leaves no window over the region (the Bind fails), one that
// finds the window fails ND_DEVICE_BUSY. Never both: the application would
// free memory a window still lets the peer write.
TEST_F(MemoryRegion, DeregisterRacingABindNeverLeavesAWindowR075) {
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    auto pair = std::make_unique<Pair>();
    ASSERT_EQ(pair->Connect(node, addr), "");
    Deadline d(WaitMs());
    for (int round = 0; round < 200 && !d.Expired(); ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        Mem m(8192);
        ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
        std::atomic<int> ready{0};
        HRESULT posted = ND_PENDING;
        std::thread binder([&] {
            ready.fetch_add(1);
            while (ready.load() < 2) {
            }
            posted = pair->conn.qp->Bind(nullptr, m.mr(), mw.get(), m.data(), 4096, ND_OP_FLAG_ALLOW_WRITE);
        });
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        Ov ov;
        HRESULT dereg = Finish(m.mr(), &ov, m.mr()->Deregister(&ov));
        binder.join();
        HRESULT bound = posted;
        if (SUCCEEDED(posted)) {
            ND2_RESULT r{};
            ASSERT_TRUE(pair->rcq.Next(&r)) << "no Bind completion";
            bound = r.Status;
        }
        if (dereg == ND_SUCCESS) {
            EXPECT_TRUE(FAILED(bound)) << "Deregister succeeded and the Bind too: a window outlives its region";
        } else {
            EXPECT_ND(ND_DEVICE_BUSY, dereg);
            EXPECT_ND(ND_SUCCESS, bound);
        }
        if (SUCCEEDED(bound)) {
            ASSERT_ND(ND_SUCCESS, pair->conn.qp->Invalidate(nullptr, mw.get(), 0));
            ASSERT_TRUE(NextIs(pair->rcq, ND_SUCCESS, Nd2RequestTypeInvalidate));
        }
        if (dereg != ND_SUCCESS) {
            ASSERT_ND(ND_SUCCESS, m.Deregister());
        }
        if (SUCCEEDED(posted) && FAILED(bound)) {  // an error completion ends the connection (R090)
            pair = std::make_unique<Pair>();
            ASSERT_EQ(pair->Connect(node, addr), "");
        }
    }
}

// A receive posted on a region that is then deregistered and freed: when a
// Send arrives, the provider must not write the memory (a NIC's local
// protection error). The receive fails with ND_ACCESS_VIOLATION, the process
// lives on, and the sender's Send completes once, with an error.
TEST_F(MemoryRegion, ReceiveOnDeregisteredRegionIsNeverWritten) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    constexpr size_t kLen = 65536;  // several segments, fragments or one cross-memory copy
    Mem m(kLen);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, kLen));
    ASSERT_ND(ND_SUCCESS, m.Deregister());
    m.Revoke();  // a write from here on kills this process
    PeerRegister(p.peer, "s", kLen);
    PEER_OK(s, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "s").Set("len", kLen)));
    EXPECT_TRUE(NextIs(p.rcq, ND_ACCESS_VIOLATION, Nd2RequestTypeReceive)) << "the receive's memory was deregistered";
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0)));
    ASSERT_EQ(pr.U64("count"), 1u) << "the Send completes exactly once";
    EXPECT_TRUE(FAILED(ST(pr, "s0"))) << "the Send did not reach a usable receive: " << StatusName(ST(pr, "s0"));
}

// The same for a region that has already taken a message: a provider that
// remembers where its last receive landed (to skip a lookup on the next)
// must forget it at Deregister.
TEST_F(MemoryRegion, AReceiveRegionDeregisteredAfterUseIsNeverWritten) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    constexpr size_t kLen = 64;  // a small message: the shortest path
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    PeerRegister(p.peer, "s", kLen);
    ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, kLen));
    PEER_OK(s1, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "s").Set("len", kLen)));
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeReceive)) << "the first message did not arrive";
    ASSERT_ND(ND_SUCCESS, p.conn.PostReceive(m, 0, kLen));
    ASSERT_ND(ND_SUCCESS, m.Deregister());
    m.Revoke();  // a write from here on kills this process
    PEER_OK(s2, p.peer.Call(Msg("send").Set("c", 0).Set("mem", "s").Set("len", kLen)));
    EXPECT_TRUE(NextIs(p.rcq, ND_ACCESS_VIOLATION, Nd2RequestTypeReceive)) << "the receive's memory was deregistered";
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0).Set("n", 2).Set("ms", 5000)));
    ASSERT_EQ(pr.U64("count"), 2u) << "each Send completes exactly once";
    EXPECT_ND(ND_SUCCESS, ST(pr, "s0"));
    EXPECT_TRUE(FAILED(ST(pr, "s1"))) << "the Send did not reach a usable receive: " << StatusName(ST(pr, "s1"));
}

// And on the sending side: a Send from a region deregistered after an
// earlier Send from it, with the token it had, completes
// ND_ACCESS_VIOLATION instead of sending the bytes.
TEST_F(MemoryRegion, ASendRegionDeregisteredAfterUseIsRefused) {
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 4).Set("recvsize", 256));
    ASSERT_TRUE(err.empty()) << err;
    constexpr size_t kLen = 64;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    const ND2_SGE sge = m.Sge(0, kLen);  // its token as it was (a provider may report 0 once deregistered)
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, 0));
    ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeSend)) << "the first Send failed";
    ASSERT_ND(ND_SUCCESS, m.Deregister());
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Send(nullptr, &sge, 1, 0));
    EXPECT_TRUE(NextIs(p.rcq, ND_ACCESS_VIOLATION, Nd2RequestTypeSend)) << "the Send's memory was deregistered";
}

// ------------------------------------------------------------ windows

struct WindowPair {
    Pair p;
    Mem m{65536};
    std::string Setup(Node &node, const IpAddress &addr, ULONG mr_flags = kAllRights) {
        std::string err = p.Connect(node, addr, Msg("serve").Set("recvs", 4).Set("recvsize", 256));
        if (!err.empty()) return err;
        FillPattern(m.data(), m.size(), 21);
        HRESULT hr = m.Register(node.adapter.get(), node.file, mr_flags);
        if (FAILED(hr)) return "Register: " + StatusName(hr);
        Msg r = p.peer.Call(Msg("reg").Set("name", "buf").Set("size", 65536).Set("seed", 22));
        return r.ok() ? "" : r.error();
    }
    uint64_t At(size_t off) const { return reinterpret_cast<uint64_t>(m.data() + off); }
};

// A region released (R076) while a window is bound stays registered through
// the window; the Invalidate that unbinds the window drops the region's last
// reference, which deregisters it (a provider that ran its deregistration
// barrier under the queue pair's lock would hang here). The window's token
// then grants nothing.
TEST_F(MemoryWindow, InvalidateLetsGoOfARegionReleasedWhileBoundR076) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Bind(nullptr, w.m.mr(), mw.get(), w.m.data(), 8192, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    const UINT32 token = mw->GetRemoteToken();
    w.m.ReleaseMr();  // the window keeps the registration
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, false, w.At(0), token, 4096)) << "the bound window still grants access";
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Invalidate(nullptr, mw.get(), 0));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeInvalidate)) << "Invalidate did not complete";
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(w.p.peer, false, w.At(0), token, 64)) << "the token outlived the window";
}

TEST_F(MemoryWindow, NewWindowIsInvalidatedR050) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(w.p.peer, false, w.At(0), mw->GetRemoteToken(), 64))
        << "a Read through a window that was never bound";
}

TEST_F(MemoryWindow, BindTokenValidWhenBindReturnsR081) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Bind(&w, w.m.mr(), mw.get(), w.m.data() + 4096, 8192,
                                            ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE));
    UINT32 early = mw->GetRemoteToken();  // before the completion is reaped
    ND2_RESULT r;
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind, &r));
    EXPECT_EQ(r.RequestContext, &w);
    EXPECT_EQ(mw->GetRemoteToken(), early) << "the token changed when the Bind completed";
    // The peer reads and writes through it with the early token.
    FillPattern(w.m.data() + 4096, 8192, 23);
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, false, w.At(4096), early, 8192));
    PEER_OK(c1, w.p.peer.Call(Msg("check").Set("name", "buf").Set("len", 8192).Set("seed", 23)));
    PEER_OK(f1, w.p.peer.Call(Msg("fill").Set("name", "buf").Set("len", 65536).Set("seed", 22)));
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, true, w.At(4096), early, 8192));
    EXPECT_EQ(CheckPattern(w.m.data() + 4096, 8192, 22), "");
}

// R080: overlapping windows with different rights over one region, at once.
TEST_F(MemoryWindow, OverlappingWindowsWithDifferentRightsR080) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> rd, wr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, rd.put_void()));
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, wr.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Bind(nullptr, w.m.mr(), rd.get(), w.m.data(), 8192, ND_OP_FLAG_ALLOW_READ));
    ASSERT_ND(ND_SUCCESS,
              w.p.conn.qp->Bind(nullptr, w.m.mr(), wr.get(), w.m.data() + 4096, 8192, ND_OP_FLAG_ALLOW_WRITE));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    EXPECT_NE(rd->GetRemoteToken(), wr->GetRemoteToken());
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, false, w.At(0), rd->GetRemoteToken(), 8192));
    PEER_OK(k, w.p.peer.Call(Msg("check").Set("name", "buf").Set("len", 8192).Set("seed", 21)));
    PEER_OK(f, w.p.peer.Call(Msg("fill").Set("name", "buf").Set("len", 8192).Set("seed", 22)));
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, true, w.At(4096), wr->GetRemoteToken(), 8192));
    EXPECT_EQ(CheckPattern(w.m.data() + 4096, 8192, 22), "");
    // Rights are per window: writing through the read-only one fails.
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(w.p.peer, true, w.At(0), rd->GetRemoteToken(), 64));
}

// R078: bound through one QP at a time; after Invalidate, rebound through
// another QP and onto another region.
TEST_F(MemoryWindow, RebindThroughAnotherQueuePairAfterInvalidateR078) {
    TwoConnections two;
    std::string err = two.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(reg, two.peer.Call(Msg("reg").Set("name", "buf").Set("size", 8192)));
    Mem m1(8192), m2(8192);
    FillPattern(m1.data(), 8192, 1);
    FillPattern(m2.data(), 8192, 2);
    ASSERT_ND(ND_SUCCESS, m1.Register(node.adapter.get(), node.file, kAllRights));
    ASSERT_ND(ND_SUCCESS, m2.Register(node.adapter.get(), node.file, kAllRights));
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, two.c[0].qp->Bind(nullptr, m1.mr(), mw.get(), m1.data(), 8192, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(two.cq, ND_SUCCESS, Nd2RequestTypeBind));
    EXPECT_ND(ND_SUCCESS, PeerRdma(two.peer, false, m1.addr(), mw->GetRemoteToken(), 8192, 0));
    PEER_OK(k1, two.peer.Call(Msg("check").Set("name", "buf").Set("len", 8192).Set("seed", 1)));
    ASSERT_ND(ND_SUCCESS, two.c[0].qp->Invalidate(nullptr, mw.get(), 0));
    ASSERT_TRUE(NextIs(two.cq, ND_SUCCESS, Nd2RequestTypeInvalidate));
    // Rebound through QP 2 onto region 2: the two.peer's second connection reads it.
    ASSERT_ND(ND_SUCCESS, two.c[1].qp->Bind(nullptr, m2.mr(), mw.get(), m2.data(), 8192, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(two.cq, ND_SUCCESS, Nd2RequestTypeBind));
    EXPECT_ND(ND_SUCCESS, PeerRdma(two.peer, false, m2.addr(), mw->GetRemoteToken(), 8192, 1));
    PEER_OK(k2, two.peer.Call(Msg("check").Set("name", "buf").Set("len", 8192).Set("seed", 2)));
    // Bound through QP 2 now: binding it through QP 1 as well is refused
    // (at once or as an error completion).
    HRESULT hr = two.c[0].qp->Bind(nullptr, m1.mr(), mw.get(), m1.data(), 8192, ND_OP_FLAG_ALLOW_READ);
    if (SUCCEEDED(hr)) {
        ND2_RESULT r;
        ASSERT_TRUE(two.cq.Next(&r));
        EXPECT_TRUE(FAILED(r.Status)) << "a window bound through one QP was bound through a second one";
    }
}

// COMPAT: Bind with flags 0 succeeds and gives a window with no rights.
TEST_F(MemoryWindow, BindWithNoRightsSucceeds) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Bind(nullptr, w.m.mr(), mw.get(), w.m.data(), 4096, 0));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(w.p.peer, false, w.At(0), mw->GetRemoteToken(), 64))
        << "a Read through a window bound with no rights";
}

// R105: ALLOW_WRITE needs a region with local write (D09: at once or as
// the completion).
TEST_F(MemoryWindow, BindWriteNeedsLocalWriteR105) {
    WindowPair w;
    std::string err = w.Setup(node, addr, ND_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    HRESULT hr = w.p.conn.qp->Bind(nullptr, w.m.mr(), mw.get(), w.m.data(), 4096, ND_OP_FLAG_ALLOW_WRITE);
    if (hr == ND_SUCCESS) {
        ND2_RESULT r;
        ASSERT_TRUE(w.p.rcq.Next(&r));
        hr = r.Status;
    }
    EXPECT_ND(ND_ACCESS_VIOLATION, hr);
}

// Client rule R104 broken: a Bind range outside the region is refused
// (robustness; at once or as an error completion).
TEST_F(MemoryWindow, BindOutsideTheRegionRefused) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    HRESULT hr = w.p.conn.qp->Bind(nullptr, w.m.mr(), mw.get(), w.m.data() + 65536 - 100, 4096,
                                   ND_OP_FLAG_ALLOW_READ);
    if (hr == ND_SUCCESS) {
        ND2_RESULT r;
        ASSERT_TRUE(w.p.rcq.Next(&r));
        hr = r.Status;
    }
    EXPECT_TRUE(FAILED(hr)) << "a window reaching past its region was bound";
}

TEST_F(MemoryWindow, InvalidateUnboundWindowR107) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Invalidate(&w, mw.get(), 0));
    ND2_RESULT r;
    ASSERT_TRUE(NextIs(w.p.rcq, ND_INVALID_DEVICE_REQUEST, Nd2RequestTypeInvalidate, &r));
    EXPECT_EQ(r.RequestContext, &w);
}

// R106: after Invalidate, a remote access through the window fails and
// ends the peer's connection.
TEST_F(MemoryWindow, AccessThroughInvalidatedWindowFailsR106) {
    WindowPair w;
    std::string err = w.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Bind(nullptr, w.m.mr(), mw.get(), w.m.data(), 4096, ND_OP_FLAG_ALLOW_READ));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
    UINT32 token = mw->GetRemoteToken();
    EXPECT_ND(ND_SUCCESS, PeerRdma(w.p.peer, false, w.At(0), token, 4096));
    ASSERT_ND(ND_SUCCESS, w.p.conn.qp->Invalidate(nullptr, mw.get(), 0));
    ASSERT_TRUE(NextIs(w.p.rcq, ND_SUCCESS, Nd2RequestTypeInvalidate));
    EXPECT_ND(ND_ACCESS_VIOLATION, PeerRdma(w.p.peer, false, w.At(0), token, 4096));
    // The peer's connection is over: its posted receives are flushed.
    PEER_OK(r, w.p.peer.Call(Msg("reap").Set("c", 0).Set("n", 4)));
    ASSERT_EQ(r.U64("count"), 4u) << "the peer's posted receives did not complete after the fatal error";
    for (int i = 0; i < 4; ++i) EXPECT_ND(ND_CANCELED, ST(r, "s" + std::to_string(i)));
}

// Write rights on memory the process may not write are refused, as a NIC's
// registration refuses them: otherwise a peer's RDMA Write (or a receive)
// would fault the process (#25). Read rights on it are fine; a range only
// partly writable is refused too.
TEST_F(MemoryRegion, WriteRightsOnReadOnlyMemoryAreRefused) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    char *p = static_cast<char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    ASSERT_EQ(mprotect(p + page, page, PROT_READ), 0);
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    const struct {
        size_t off, len;
        ULONG flags;
        HRESULT want;
        const char *what;
    } cases[] = {
        {page, page, ND_MR_FLAG_ALLOW_LOCAL_WRITE, ND_ACCESS_VIOLATION, "local write on a read-only page"},
        {page, page, ND_MR_FLAG_ALLOW_REMOTE_WRITE, ND_ACCESS_VIOLATION, "remote write on a read-only page"},
        {0, 2 * page, ND_MR_FLAG_ALLOW_LOCAL_WRITE, ND_ACCESS_VIOLATION, "write on a range half read-only"},
        {page - 8, 16, ND_MR_FLAG_ALLOW_LOCAL_WRITE, ND_ACCESS_VIOLATION, "write on 16 bytes across the edge"},
        {page, page, ND_MR_FLAG_ALLOW_REMOTE_READ, ND_SUCCESS, "remote read on a read-only page"},
        {0, page, ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_WRITE, ND_SUCCESS, "write on a writable page"},
    };
    for (const auto &c : cases) {
        Ov ov;
        HRESULT hr = Finish(mr.get(), &ov, mr->Register(p + c.off, c.len, c.flags, &ov));
        EXPECT_ND(c.want, hr) << c.what;
        if (SUCCEEDED(hr)) {
            ov.Reuse();
            EXPECT_ND(ND_SUCCESS, Finish(mr.get(), &ov, mr->Deregister(&ov)));
        }
    }
    mr.reset();
    munmap(p, 2 * page);
}

}  // namespace
}  // namespace ndc
