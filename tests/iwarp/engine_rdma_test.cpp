// Tagged placement and its failures: every inbound tagged segment and Read
// Request is checked before a byte moves, a violation ends the stream with
// the RFC's Terminate, and the initiator's operation fails with an access
// error (ND_ACCESS_VIOLATION) once that Terminate arrives.
#include <gtest/gtest.h>

#include "iwarp/engine.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

constexpr uint32_t kStag = 0x1234;

struct WriteCase {
    const char *name;
    std::function<void(Region &)> setup;
    uint64_t to;
    TerminateCode code;
};

TEST(Placement, WriteViolationsTerminateBeforeAnyPlacement) {
    const std::vector<WriteCase> cases = {
        {"unknown STag", [](Region &r) { r.valid = false; }, 0x1000, {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTInvalidStag}},
        {"past the end", [](Region &) {}, 0x1000 + 4000, {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTBaseBounds}},
        {"below the base", [](Region &) {}, 0xfff, {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTBaseBounds}},
        {"no remote write", [](Region &r) { r.remote_write = false; }, 0x1000,
         {Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapAccessRights}},
        {"other connection", [](Region &r) { r.associated = false; }, 0x1000,
         {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTStagNotAssociated}},
        {"TO wraps", [](Region &) {}, ~uint64_t{0} - 10, {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTToWrap}},
        // Ends exactly at 2^64: the last byte exists, but to + len does not (found by fuzzing).
        {"TO ends at 2^64", [](Region &) {}, ~uint64_t{0} - 99, {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTToWrap}},
    };
    for (const WriteCase &c : cases) {
        Pair p(Plain(Role::Initiator), Plain(Role::Responder));
        c.setup(p.pb.Add(kStag, 0x1000, 4096, true, false));
        const Bytes data = Pattern(100);
        const ConstBuffer b{data.data(), data.size()};
        ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, c.to));
        ASSERT_TRUE(p.a.PostSend(2, {}));  // queued behind the Write
        p.Pump();
        EXPECT_EQ(p.pb.Count('P'), 0u) << c.name;
        ASSERT_TRUE(p.b.failed()) << c.name;
        EXPECT_EQ(p.b.local_fault().code, c.code) << c.name;
        ASSERT_TRUE(p.a.remote_terminate().has_value()) << c.name;
        const TerminateMessage &t = *p.a.remote_terminate();
        EXPECT_EQ(t.code, c.code) << c.name;
        EXPECT_TRUE(t.m && t.d && t.has_ddp_header && !t.r) << c.name;
        EXPECT_EQ(t.terminated.opcode, Opcode::RdmaWrite);
        EXPECT_EQ(t.terminated.stag, kStag);
        EXPECT_EQ(t.terminated.to, c.to);
        EXPECT_EQ(t.segment_length, 14 + 100);
        EXPECT_TRUE(p.a.failed());
        EXPECT_FALSE(p.a.PostSend(3, {}));  // the connection is over
    }
}

TEST(Placement, OnlyTheSegmentCrossingTheBoundIsRefused) {
    EngineOptions o;
    o.mss = 256;  // 236-byte Write segments
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    p.pb.Add(kStag, 0, 1000, true, false);
    const Bytes data = Pattern(2000);
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, 0));
    p.Pump();
    // Segments [0,236) .. [708,944) fit; [944,1180) crosses 1000 and is not placed at all.
    EXPECT_EQ(p.pb.Count('P'), 4u);
    const Bytes &m = p.pb.regions[kStag].memory;
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 944, m.begin()));
    EXPECT_TRUE(std::all_of(m.begin() + 944, m.end(), [](uint8_t x) { return x == 0; }));
    EXPECT_EQ(p.a.remote_terminate()->terminated.to, 944u);
}

TEST(Placement, ReadSourceViolationFailsTheReadWithAnAccessError) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    p.pb.Add(kStag, 0x5000, 512, true, false);  // no remote read
    p.pa.Add(0x99, 0, 512, false, false);
    ASSERT_TRUE(p.a.PostRead(7, 0x99, 0, 256, kStag, 0x5000));
    p.Pump();
    EXPECT_EQ(p.pb.Count('F'), 0u);
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 1u);
    EXPECT_EQ(ca[0].id, 7u);
    EXPECT_EQ(ca[0].status, OpStatus::RemoteAccessError);
    const TerminateMessage &t = *p.a.remote_terminate();
    EXPECT_EQ(t.code, (TerminateCode{Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapAccessRights}));
    EXPECT_TRUE(t.m && t.d && t.r && t.has_rdmap_header);  // the Read Request, both headers
    EXPECT_EQ(t.terminated.opcode, Opcode::ReadRequest);
    EXPECT_EQ(t.terminated.msn, 1u);
    EXPECT_EQ(t.terminated.read.size, 256u);
    EXPECT_EQ(t.terminated.read.source_stag, kStag);
    EXPECT_EQ(t.segment_length, 46);

    Pair q(Plain(Role::Initiator), Plain(Role::Responder));
    q.pb.Add(kStag, 0x5000, 512, false, true);
    q.pa.Add(0x99, 0, 1024, false, false);
    ASSERT_TRUE(q.a.PostRead(8, 0x99, 0, 1024, kStag, 0x5000));  // longer than the source
    q.Pump();
    EXPECT_EQ(q.Drain(q.a)[0].status, OpStatus::RemoteAccessError);
    EXPECT_EQ(q.a.remote_terminate()->code, (TerminateCode{Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapBaseBounds}));

    // A source range ending exactly at 2^64 is a TO wrap, and never reaches CheckTagged.
    Pair w(Plain(Role::Initiator), Plain(Role::Responder));
    w.pa.Add(0x99, 0, 256, false, false);
    ASSERT_TRUE(w.a.PostRead(9, 0x99, 0, 256, kStag, ~uint64_t{0} - 255));
    w.Pump();
    EXPECT_TRUE(w.pb.calls.empty());
    EXPECT_EQ(w.Drain(w.a)[0].status, OpStatus::RemoteAccessError);
    EXPECT_EQ(w.a.remote_terminate()->code, (TerminateCode{Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapToWrap}));
}

TEST(Placement, SourceGoneAfterTheCheckTerminatesAtTransmit) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    p.pb.Add(kStag, 0, 8192, false, true);
    p.pa.Add(0x99, 0, 8192, false, false);
    ASSERT_TRUE(p.a.PostRead(7, 0x99, 0, 8192, kStag, 0));
    p.Move(p.a, p.b, SIZE_MAX, nullptr);   // the request is checked on arrival
    p.pb.regions[kStag].valid = false;     // then deregistered
    p.Pump();
    EXPECT_EQ(p.Drain(p.a)[0].status, OpStatus::RemoteAccessError);
    EXPECT_EQ(p.b.local_fault().errc, Errc::LocalFetchFailed);
    EXPECT_TRUE(p.a.remote_terminate()->has_rdmap_header);
}

TEST(Placement, ReadResponseChecksOurOwnSink) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    p.pb.Add(kStag, 0, 64, false, true);
    ASSERT_TRUE(p.a.PostRead(7, 0x99 /*no such local STag*/, 0, 64, kStag, 0));
    p.Pump();
    EXPECT_EQ(p.a.local_fault().code, (TerminateCode{Layer::Ddp, etype::kDdpTagged, ecode::kDdpTInvalidStag}));
    EXPECT_EQ(p.Drain(p.a)[0].status, OpStatus::ProtocolError);
    EXPECT_EQ(p.b.remote_terminate()->terminated.opcode, Opcode::ReadResponse);
}

TEST(Placement, UnexpectedAndMisplacedReadResponses) {
    FakePlacement pl;
    pl.Add(5, 0, 100, false, false);
    Engine e(Plain(Role::Initiator), pl);
    Bytes rr;
    EncodeTagged(&rr, Opcode::ReadResponse, true, 5, 0, Pattern(10), false);
    EXPECT_EQ(e.Receive(rr).status, RxStatus::Failed);
    EXPECT_EQ(e.local_fault().errc, Errc::UnexpectedReadResponse);
    EXPECT_EQ(e.local_fault().code, (TerminateCode{Layer::Rdmap, etype::kRdmapOperation, ecode::kRdmapOpcode}));
    EXPECT_EQ(pl.Count('P'), 0u);

    struct C {
        uint32_t stag;
        uint64_t to;
        size_t len;
        bool last;
        Errc errc;
    };
    for (const C &c : {C{6, 0, 10, true, Errc::TaggedInvalidStag}, C{5, 8, 10, true, Errc::TaggedBaseBounds},
                       C{5, 0, 11, true, Errc::TaggedBaseBounds}, C{5, 0, 9, true, Errc::TaggedBaseBounds}}) {
        FakePlacement pl2;
        pl2.Add(5, 0, 100, false, false);
        Engine f(Plain(Role::Initiator), pl2);
        ASSERT_TRUE(f.PostRead(1, 5, 0, 10, 9, 0));
        Bytes out;
        f.Pull(&out, 1 << 16);
        Bytes resp;
        EncodeTagged(&resp, Opcode::ReadResponse, c.last, c.stag, c.to, Pattern(c.len), false);
        EXPECT_EQ(f.Receive(resp).status, RxStatus::Failed);
        EXPECT_EQ(f.local_fault().errc, c.errc);
        EXPECT_EQ(pl2.Count('P'), 0u);
    }
}

TEST(Placement, ZeroLengthOperationsCheckNothing) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    ASSERT_TRUE(p.a.PostWrite(1, {}, 0xdead, 0));
    ASSERT_TRUE(p.a.PostRead(2, 0xbeef, 0, 0, 0xdead, 0));
    p.Pump();
    EXPECT_TRUE(p.pb.calls.empty());
    EXPECT_TRUE(p.pa.calls.empty());
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 2u);
    EXPECT_EQ(ca[1].kind, CompletionKind::Read);
    EXPECT_EQ(ca[1].status, OpStatus::Success);
}

TEST(Placement, AbortFlushesEverythingAndTellsThePeer) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    Bytes r(10);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(p.a.PostReceive(1, {&rb, 1}));
    ASSERT_TRUE(p.a.PostSend(2, {}));
    p.a.Abort(true);
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 2u);
    for (const Completion &c : ca) EXPECT_EQ(c.status, OpStatus::Flushed);
    p.Pump();
    EXPECT_EQ(p.b.remote_terminate()->code.etype, etype::kRdmapCatastrophic);
    EXPECT_FALSE(p.a.WantsToSend());
}

}  // namespace
