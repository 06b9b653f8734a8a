// Remote access violations of every kind, for RDMA Read and Write: unknown
// token, outside the region, missing rights (region and window), window
// invalidated, local SGE with a bad token. COMPAT-NOTES: accepted at post
// time, completed ND_ACCESS_VIOLATION, the connection ends, and the target's
// memory is untouched. Run once per address.
#include <sys/prctl.h>

#include <cstring>
#include <functional>
#include <thread>

#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(RemoteAccess);

// Our QP connected to the peer; the peer has a 64 KiB buffer "t" filled
// with pattern 9 and registered with `flags`; we have receives posted so
// the end of the connection shows.
struct Target {
    Pair p;
    Mem m{65536};
    Remote t;
    int rctx[2];
    std::string Setup(Node &node, const IpAddress &addr, ULONG flags) {
        std::string err = p.Connect(node, addr);
        if (!err.empty()) return err;
        HRESULT hr = m.Register(node.adapter.get(), node.file, kAllRights);
        if (FAILED(hr)) return "Register: " + StatusName(hr);
        FillPattern(m.data(), m.size(), 77);
        for (int k = 0; k < 2; ++k)
            if (FAILED(hr = p.conn.PostReceive(m, 0, 64, &rctx[k]))) return "Receive: " + StatusName(hr);
        t = PeerRegister(p.peer, "t", 65536, flags, 9);
        return t.addr ? "" : "peer reg failed";
    }
    // Posts a Read or Write of len bytes at (addr, token): accepted at post
    // time (COMPAT); returns its completion status.
    HRESULT Access(bool write, uint64_t at, UINT32 token, ULONG len = 4096) {
        ND2_SGE sge = m.Sge(0, len);
        HRESULT hr = write ? p.conn.qp->Write(&m, &sge, 1, at, token, 0) : p.conn.qp->Read(&m, &sge, 1, at, token, 0);
        EXPECT_ND(ND_SUCCESS, hr) << "COMPAT: a bad remote access is accepted at post time";
        if (FAILED(hr)) return hr;
        ND2_RESULT r;
        if (!p.rcq.NextWhere([&](const ND2_RESULT &x) { return x.RequestContext == &m; }, &r)) return kHang;
        EXPECT_EQ(r.RequestType, write ? Nd2RequestTypeWrite : Nd2RequestTypeRead);
        return r.Status;
    }
    // After the failed access: the connection is over (R090) and the
    // target's buffer still holds its pattern.
    void ExpectConnectionEndedAndTargetIntact() {
        for (int k = 0; k < 2; ++k) {
            ND2_RESULT r;
            ASSERT_TRUE(p.rcq.Next(&r)) << "receive " << k << " was not flushed after the access violation";
            EXPECT_ND(ND_CANCELED, r.Status);
            EXPECT_EQ(r.RequestContext, &rctx[k]);
        }
        Msg k = p.peer.Call(Msg("check").Set("name", "t").Set("seed", 9));
        EXPECT_TRUE(k.ok()) << "the target's memory changed: " << k.error();
    }
};

constexpr ULONG kReadOnly = ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ;
constexpr ULONG kWriteOnly = ND_MR_FLAG_ALLOW_REMOTE_WRITE;  // includes local write (D04)

TEST_P(RemoteAccess, ReadWithUnknownToken) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(false, t.t.addr, t.t.token ^ 0x5A5A5A5A));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WriteWithUnknownToken) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr, t.t.token ^ 0x5A5A5A5A));
    t.ExpectConnectionEndedAndTargetIntact();
}

// R109: past the end of the region.
TEST_P(RemoteAccess, ReadPastTheRegionR109) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(false, t.t.addr + 65536 - 8, t.t.token, 16));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WritePastTheRegion) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr + 65536 - 8, t.t.token, 16));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WriteBeforeTheRegion) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr - 8, t.t.token, 16));
    t.ExpectConnectionEndedAndTargetIntact();
}

// Missing rights on the target region.
TEST_P(RemoteAccess, ReadWithoutRemoteReadRight) {
    Target t;
    std::string err = t.Setup(node, addr, kWriteOnly);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(false, t.t.addr, t.t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WriteWithoutRemoteWriteRight) {
    Target t;
    std::string err = t.Setup(node, addr, kReadOnly);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr, t.t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

// D04: local write alone (0x1) grants no remote write.
TEST_P(RemoteAccess, WriteWithOnlyLocalWriteRight) {
    Target t;
    std::string err = t.Setup(node, addr, ND_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr, t.t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

// Windows: rights are the window's, the range is the window's.
struct WindowTarget : Target {
    UINT32 token = 0;
    std::string Bind(Node &node, const IpAddress &addr, ULONG bind_flags, size_t off = 4096, size_t len = 8192) {
        std::string err = Setup(node, addr, kAllRights);
        if (!err.empty()) return err;
        Msg r = p.peer.Call(
            Msg("mw").Set("name", "w").Set("mem", "t").Set("off", off).Set("len", len).Set("flags", bind_flags).Set("c", 0));
        if (!r.ok()) return r.error();
        if (FAILED(ST(r, "hr")) || FAILED(ST(r, "status"))) return "peer Bind: " + StatusName(ST(r, "status"));
        token = static_cast<UINT32>(r.U64("token"));
        return "";
    }
};

TEST_P(RemoteAccess, WriteThroughWindowWithoutWriteRight) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_READ);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr + 4096, t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, ReadThroughWindowWithoutReadRight) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_WRITE);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(false, t.t.addr + 4096, t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WritePastTheWindow) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE);
    ASSERT_TRUE(err.empty()) << err;
    // Inside the region, outside the window.
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr + 4096 + 8192 - 8, t.token, 16));
    t.ExpectConnectionEndedAndTargetIntact();
}

// R106: after Invalidate (by the target), both directions fail.
TEST_P(RemoteAccess, ReadThroughInvalidatedWindowR106) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE);
    ASSERT_TRUE(err.empty()) << err;
    EXPECT_ND(ND_SUCCESS, t.Access(false, t.t.addr + 4096, t.token));  // works while bound
    PEER_OK(inv, t.p.peer.Call(Msg("inval").Set("name", "w").Set("c", 0)));
    ASSERT_ND(ND_SUCCESS, ST(inv, "status"));
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(false, t.t.addr + 4096, t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

TEST_P(RemoteAccess, WriteThroughInvalidatedWindowR106) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(inv, t.p.peer.Call(Msg("inval").Set("name", "w").Set("c", 0)));
    ASSERT_ND(ND_SUCCESS, ST(inv, "status"));
    ASSERT_ND(ND_ACCESS_VIOLATION, t.Access(true, t.t.addr + 4096, t.token));
    t.ExpectConnectionEndedAndTargetIntact();
}

// The region's own token still cannot reach past what the region allows
// while a window covers part of it (windows and regions are independent).
TEST_P(RemoteAccess, RegionTokenUnaffectedByWindow) {
    WindowTarget t;
    std::string err = t.Bind(node, addr, ND_OP_FLAG_ALLOW_READ);
    ASSERT_TRUE(err.empty()) << err;
    EXPECT_ND(ND_SUCCESS, t.Access(false, t.t.addr, t.t.token, 4096));
    EXPECT_EQ(CheckPattern(t.m.data(), 4096, 9), "");
}

// The local end of a Read: its sink must be registered for RDMA Read sink
// or local write (ND2-SPEC, Read `sge`). RDMA_READ_SINK alone is enough.
TEST_P(RemoteAccess, ReadIntoASinkRegisteredOnlyAsReadSink) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    Mem sink(4096);
    ASSERT_ND(ND_SUCCESS, sink.Register(node.adapter.get(), node.file, ND_MR_FLAG_RDMA_READ_SINK));
    ND2_SGE sge = sink.Sge(0, 4096);
    ASSERT_ND(ND_SUCCESS, t.p.conn.qp->Read(&sink, &sge, 1, t.t.addr, t.t.token, 0));
    ND2_RESULT r;
    ASSERT_TRUE(t.p.rcq.NextWhere([&](const ND2_RESULT &x) { return x.RequestContext == &sink; }, &r));
    EXPECT_ND(ND_SUCCESS, r.Status);
    EXPECT_EQ(CheckPattern(sink.data(), 4096, 9), "");
}

// With neither (a region only the peer may read), the Read fails with
// ND_ACCESS_VIOLATION, at post time or in its completion, and not a byte
// lands in the sink.
TEST_P(RemoteAccess, ReadIntoASinkWithoutReadSinkOrLocalWriteFails) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    Mem sink(4096);
    FillPattern(sink.data(), 4096, 3);
    ASSERT_ND(ND_SUCCESS, sink.Register(node.adapter.get(), node.file, ND_MR_FLAG_ALLOW_REMOTE_READ));
    ND2_SGE sge = sink.Sge(0, 4096);
    HRESULT hr = t.p.conn.qp->Read(&sink, &sge, 1, t.t.addr, t.t.token, 0);
    if (hr == ND_SUCCESS) {
        ND2_RESULT r;
        ASSERT_TRUE(t.p.rcq.NextWhere([&](const ND2_RESULT &x) { return x.RequestContext == &sink; }, &r));
        EXPECT_ND(ND_ACCESS_VIOLATION, r.Status);
        t.ExpectConnectionEndedAndTargetIntact();
    } else {
        EXPECT_ND(ND_ACCESS_VIOLATION, hr) << "refused at once";
    }
    EXPECT_EQ(CheckPattern(sink.data(), 4096, 3), "") << "bytes landed in a sink without the right to take them";
}

// A window is bound through one QP (R078), and its token is good on that
// connection only (derived: a type-2 window's key names its QP, as iWARP's
// STag does). The peer binds one on its connection 0; used through our
// connection to its connection 1 it is an access violation, through
// connection 0 it works.
TEST_P(RemoteAccess, WindowThroughAnotherConnectionOfTheSamePeerR078) {
    TwoConnections two;
    std::string err = two.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Remote t = PeerRegister(two.peer, "t", 65536, kAllRights, 9);
    ASSERT_NE(t.addr, 0u);
    PEER_OK(w, two.peer.Call(Msg("mw").Set("name", "w").Set("mem", "t").Set("off", 4096).Set("len", 8192)
                             .Set("flags", ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE).Set("c", 0)));
    ASSERT_ND(ND_SUCCESS, ST(w, "status"));
    const UINT32 token = static_cast<UINT32>(w.U64("token"));
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(m.data(), 4096, 21);
    auto write = [&](Conn &via) {
        ND2_SGE sge = m.Sge(0, 4096);
        HRESULT hr = via.qp->Write(&m, &sge, 1, t.addr + 4096, token, 0);
        if (FAILED(hr)) return hr;
        ND2_RESULT r;
        if (!two.cq.NextWhere([&](const ND2_RESULT &x) { return x.RequestContext == &m; }, &r)) return kHang;
        return r.Status;
    };
    EXPECT_ND(ND_ACCESS_VIOLATION, write(two.c[1])) << "a window used through a connection it is not bound to";
    Msg k = two.peer.Call(Msg("check").Set("name", "t").Set("seed", 9));
    EXPECT_TRUE(k.ok()) << "the target's memory changed: " << k.error();
    EXPECT_ND(ND_SUCCESS, write(two.c[0])) << "through its own connection";
}

// A local SGE naming memory that is not registered (bad local token): the
// request fails in its completion with ND_ACCESS_VIOLATION.
TEST_P(RemoteAccess, LocalSgeWithBadToken) {
    Target t;
    std::string err = t.Setup(node, addr, kAllRights);
    ASSERT_TRUE(err.empty()) << err;
    ND2_SGE sge = t.m.Sge(0, 64);
    sge.MemoryRegionToken ^= 0x00F0F0F0;
    HRESULT hr = t.p.conn.qp->Write(&t.m, &sge, 1, t.t.addr, t.t.token, 0);
    if (hr == ND_SUCCESS) {
        ND2_RESULT r;
        ASSERT_TRUE(t.p.rcq.NextWhere([&](const ND2_RESULT &x) { return x.RequestContext == &t.m; }, &r));
        EXPECT_ND(ND_ACCESS_VIOLATION, r.Status);
        t.ExpectConnectionEndedAndTargetIntact();
    } else {
        EXPECT_ND(ND_ACCESS_VIOLATION, hr) << "refused at once";
    }
}

// How the application lets a region go while a transfer uses it: Deregister,
// or Release without Deregister (R076), which must be the same barrier: the
// application may free the memory as soon as either returns.
enum class LetGo { Deregister, Release };

void Withdraw(Mem &m, LetGo how) {
    if (how == LetGo::Deregister)
        ASSERT_ND(ND_SUCCESS, m.Deregister());
    else
        m.ReleaseMr();
    m.Revoke();  // a byte placed or read from here on kills this process
}

// A Read whose sink is let go (and its memory withdrawn) while the data is
// on its way: no byte may land once Deregister or Release has returned. The
// Read completes exactly once: with its data if it finished first, else
// with an error; the process lives on either way.
void ReadSinkWithdrawnInFlight(Node &node, const IpAddress &addr, LetGo how) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    constexpr size_t kLen = 4 << 20;  // many fragments or segments
    Remote src = PeerRegister(p.peer, "src", kLen, kAllRights, 5);
    ASSERT_NE(src.addr, 0u);
    Mem sink(kLen);
    ASSERT_ND(ND_SUCCESS, sink.Register(node.adapter.get(), node.file, kAllRights));
    ND2_SGE sge = sink.Sge(0, kLen);
    static char ctx;
    ASSERT_ND(ND_SUCCESS, p.conn.qp->Read(&ctx, &sge, 1, src.addr, src.token, 0));
    Withdraw(sink, how);
    auto mine = [](const ND2_RESULT &x) { return x.RequestContext == &ctx; };
    ND2_RESULT r;
    ASSERT_TRUE(p.rcq.NextWhere(mine, &r)) << "the Read never completed";
    EXPECT_EQ(r.RequestType, Nd2RequestTypeRead);
    EXPECT_ND_IN(Any(ND_SUCCESS, ND_ACCESS_VIOLATION), r.Status) << "done before the region went, or refused";
    ND2_RESULT again;
    EXPECT_FALSE(p.rcq.NextWhere(mine, &again, 200)) << "the Read completed twice";
}

TEST_P(RemoteAccess, ReadSinkDeregisteredInFlightIsNeverWrittenAfter) {
    ReadSinkWithdrawnInFlight(node, addr, LetGo::Deregister);
}

TEST_P(RemoteAccess, ReadSinkReleasedInFlightIsNeverWrittenAfterR076) {
    ReadSinkWithdrawnInFlight(node, addr, LetGo::Release);
}

// The other way round: the peer reads (or writes) our region while we let
// it go (and withdraw the memory). Nothing is read from it or lands in it
// once Deregister or Release has returned (over TCP a Write's bytes are read
// from the socket straight into the region, each read checked first); the
// peer's request completes exactly once, with the data if it finished
// first, else with an error; both processes live on.
void PeerAccessWhileWithdrawn(Node &node, const IpAddress &addr, bool peer_writes, LetGo how) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    constexpr size_t kLen = 4 << 20;
    Mem ours(kLen);
    ASSERT_ND(ND_SUCCESS, ours.Register(node.adapter.get(), node.file, kAllRights));
    FillPattern(ours.data(), kLen, 11);
    PeerRegister(p.peer, "theirs", kLen, kAllRights, 13);
    PEER_OK(op, p.peer.Call(Msg(peer_writes ? "write" : "read").Set("c", 0).Set("mem", "theirs").Set("len", kLen)
                                .Set("raddr", ours.addr()).Set("rtoken", ours.remote_token()).Set("ctx", 7)));
    ASSERT_ND(ND_SUCCESS, ST(op, "hr"));
    Withdraw(ours, how);
    PEER_OK(pr, p.peer.Call(Msg("reap").Set("c", 0).Set("extra", 1)));
    ASSERT_EQ(pr.U64("count"), 1u) << "the peer's request never completed";
    EXPECT_EQ(pr.U64("x0"), 7u);
    EXPECT_FALSE(pr.Has("extra")) << "a second completion: " << pr.Str("extra");
    HRESULT status = ST(pr, "s0");
    EXPECT_ND_IN(Any(ND_SUCCESS, ND_ACCESS_VIOLATION), status) << "done before the region went, or refused";
    if (!peer_writes && status == ND_SUCCESS) {
        Msg k = p.peer.Call(Msg("check").Set("name", "theirs").Set("seed", 11));
        EXPECT_TRUE(k.ok()) << "a Read that succeeded brought other bytes: " << k.error();
    }
}

TEST_P(RemoteAccess, ReadSourceDeregisteredInFlightIsNeverReadAfter) {
    PeerAccessWhileWithdrawn(node, addr, false, LetGo::Deregister);
}

TEST_P(RemoteAccess, ReadSourceReleasedInFlightIsNeverReadAfterR076) {
    PeerAccessWhileWithdrawn(node, addr, false, LetGo::Release);
}

TEST_P(RemoteAccess, WriteTargetDeregisteredInFlightIsNeverWrittenAfter) {
    PeerAccessWhileWithdrawn(node, addr, true, LetGo::Deregister);
}

TEST_P(RemoteAccess, WriteTargetReleasedInFlightIsNeverWrittenAfterR076) {
    PeerAccessWhileWithdrawn(node, addr, true, LetGo::Release);
}

// The peer writes its pattern into ours through `token` in a loop; once it
// has landed, `stop` runs; from its return on, nothing may land in ours.
void NothingLandsAfter(Pair &p, Mem &ours, UINT32 token, const std::function<void()> &stop, const char *what) {
    const size_t len = ours.size();
    std::memset(ours.data(), 0, len);
    PeerRegister(p.peer, "theirs", len, kAllRights, 17);
    const uint8_t want = PatternByte(17, len - 1);
    PEER_OK(go, p.peer.Call(Msg("writeloop").Set("c", 0).Set("mem", "theirs").Set("len", len)
                                .Set("raddr", ours.addr()).Set("rtoken", token).Set("ms", 2000)));
    Deadline d(WaitMs());
    const volatile uint8_t *last = reinterpret_cast<const volatile uint8_t *>(ours.data() + len - 1);
    while (*last != want && !d.Expired()) std::this_thread::yield();
    ASSERT_EQ(*last, want) << "the peer's Writes never landed";
    stop();
    if (::testing::Test::HasFatalFailure()) return;
    std::memset(ours.data(), 0, len);
    SleepMs(50);
    size_t landed = 0;
    for (size_t i = 0; i < len; ++i) landed += ours.data()[i] != 0;
    EXPECT_EQ(landed, 0u) << "bytes landed after " << what;
}

// Five rounds of `body` on a fresh connection and a registered 1 MiB region.
template <class Body>
void InRounds(Node &node, const IpAddress &addr, Body body) {
    for (int round = 0; round < 5 && !::testing::Test::HasFailure(); ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        Pair p;
        ASSERT_EQ(p.Connect(node, addr), "");
        Mem ours(1 << 20);
        ASSERT_ND(ND_SUCCESS, ours.Register(node.adapter.get(), node.file, kAllRights));
        body(p, ours);
    }
}

// A region's token is good on any of our queue pairs (R074), and the peer
// hears of a queue pair's end only later: a queue pair released without
// Disconnect must not leave the peer's copies into our memory running past
// a Deregister. We release the queue pair and its connector, then
// deregister, while the peer writes.
TEST_P(RemoteAccess, NoWriteLandsAfterDeregisterOnceTheQueuePairIsGone) {
    InRounds(node, addr, [](Pair &p, Mem &ours) {
        NothingLandsAfter(p, ours, ours.remote_token(), [&] {
            p.conn.connector.reset();
            p.conn.qp.reset();
            ASSERT_ND(ND_SUCCESS, ours.Deregister());
        }, "Deregister returned");
    });
}

// R106, transfers in flight: once our Invalidate has completed, nothing
// more lands through the window the peer writes through.
TEST_P(RemoteAccess, NoWriteLandsThroughAWindowOnceItsInvalidateCompletedR106) {
    InRounds(node, addr, [this](Pair &p, Mem &ours) {
        Ref<IND2MemoryWindow> mw;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
        ASSERT_ND(ND_SUCCESS,
                  p.conn.qp->Bind(nullptr, ours.mr(), mw.get(), ours.data(), ours.size(), ND_OP_FLAG_ALLOW_WRITE));
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeBind));
        NothingLandsAfter(p, ours, mw->GetRemoteToken(), [&] {
            ASSERT_ND(ND_SUCCESS, p.conn.qp->Invalidate(nullptr, mw.get(), 0));
            ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeInvalidate));
        }, "the window's Invalidate completed");
    });
}

// A peer that may not attach to our memory (no ptrace access: cross-memory
// attach needs it too) never gets our memory-region table: it would learn
// every region's token. It reaches our memory through the rings only, where
// we check each access, and that works.
TEST_P(RemoteAccess, APeerWithoutPtraceAccessNeverSeesOurTable) {
    struct NotDumpable {  // attaching to us now needs a capability over us
        NotDumpable() { prctl(PR_SET_DUMPABLE, 0); }
        ~NotDumpable() { prctl(PR_SET_DUMPABLE, 1); }
    } guard;
    Pair p;
    p.peer.isolated = true;  // a user namespace of its own: no capability over us
    ASSERT_EQ(p.Connect(node, addr), "");
    PEER_OK(t, p.peer.Call(Msg("tables")));
    // Its own table at most (a provider without one maps none).
    EXPECT_LE(t.U64("count"), 1u) << "the peer maps another process's memory-region table";
    constexpr size_t kLen = 65536;
    Mem ours(kLen);
    ASSERT_ND(ND_SUCCESS, ours.Register(node.adapter.get(), node.file, kAllRights));
    PeerRegister(p.peer, "theirs", kLen, kAllRights, 21);
    PEER_OK(w, p.peer.Call(Msg("write").Set("c", 0).Set("mem", "theirs").Set("len", kLen).Set("raddr", ours.addr())
                               .Set("rtoken", ours.remote_token()).Set("ctx", 3)));
    ASSERT_ND(ND_SUCCESS, ST(w, "hr"));
    PEER_OK(r, p.peer.Call(Msg("reap").Set("c", 0)));
    ASSERT_EQ(r.U64("count"), 1u);
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    // An iWARP initiator (siw) completes a Write once TCP has it: the last
    // bytes may still be on their way here.
    Deadline d(WaitMs());
    while (CheckPattern(ours.data(), kLen, 21) != "" && !d.Expired()) SleepMs(1);
    EXPECT_EQ(CheckPattern(ours.data(), kLen, 21), "");
}

}  // namespace
}  // namespace ndc
