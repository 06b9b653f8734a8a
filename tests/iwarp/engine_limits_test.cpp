// Limits and untagged errors: ORD held at the initiator, IRD enforced at the
// target, a Send with no receive buffer (stall or Terminate), a receive
// buffer too small, MSN and MO out of place.
#include <gtest/gtest.h>

#include "iwarp/engine.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

TEST(Limits, OrdHoldsFurtherReadsAndWhatFollowsThem) {
    Pair p(Plain(Role::Initiator, false, 8, 2), Plain(Role::Responder, false, 8, 8));
    p.pb.Add(9, 0, 4096, false, true);
    p.pa.Add(1, 0, 4096, false, false);
    for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(p.a.PostRead(i, 1, i * 1024, 1024, 9, i * 1024));
    ASSERT_TRUE(p.a.PostSend(99, {}));  // in order: behind the Reads
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    auto segs = Segments(out, false, &store);
    ASSERT_EQ(segs.size(), 2u);  // two Read Requests, then ORD is full
    EXPECT_EQ(p.a.outstanding_reads(), 2u);
    EXPECT_TRUE(p.Drain(p.a).empty());
    ASSERT_EQ(p.b.Receive(out).status, RxStatus::Ok);
    p.Pump();
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 5u);
    for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(ca[i].id, i);
    EXPECT_EQ(ca[4].id, 99u);
    EXPECT_EQ(p.a.outstanding_reads(), 0u);
    // No PostRead at all with an ORD of 0.
    Pair z(Plain(Role::Initiator, false, 8, 0), Plain(Role::Responder));
    EXPECT_FALSE(z.a.PostRead(1, 1, 0, 1, 9, 0));
}

TEST(Limits, IrdExceededTerminates) {
    // A peer ignoring the negotiated IRD of 2 sends three Read Requests.
    FakePlacement pl;
    pl.Add(9, 0, 4096, false, true);
    Engine target(Plain(Role::Responder, false, 2, 8), pl);
    Bytes wire;
    for (uint32_t msn = 1; msn <= 3; ++msn) EncodeReadRequest(&wire, msn, ReadRequest{1, 0, 16, 9, 0}, false);
    EXPECT_EQ(target.Receive(wire).status, RxStatus::Failed);
    EXPECT_EQ(target.local_fault().errc, Errc::DdpNoBuffer);
    EXPECT_EQ(target.local_fault().code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUNoBuffer}));
    EXPECT_EQ(target.inbound_reads(), 0u);  // flushed
    Bytes out;
    target.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    auto segs = Segments(out, false, &store);
    ASSERT_EQ(segs.size(), 1u);  // nothing but the Terminate: no Read Response after it
    EXPECT_EQ(segs[0].opcode, Opcode::Terminate);

    // Within IRD, answered in order as responses go out.
    Engine ok(Plain(Role::Responder, false, 3, 8), pl);
    EXPECT_EQ(ok.Receive(wire).status, RxStatus::Ok);
    EXPECT_EQ(ok.inbound_reads(), 3u);
}

TEST(Limits, ReadRequestMsnMustBeTheNext) {
    FakePlacement pl;
    pl.Add(9, 0, 4096, false, true);
    Engine e(Plain(Role::Responder), pl);
    Bytes wire;
    EncodeReadRequest(&wire, 2, ReadRequest{1, 0, 16, 9, 0}, false);
    EXPECT_EQ(e.Receive(wire).status, RxStatus::Failed);
    EXPECT_EQ(e.local_fault().code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUMsnRange}));
}

TEST(Limits, SendWithoutReceiveStallsUntilOneIsPosted) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    const Bytes m1 = Pattern(3000, 1), m2 = Pattern(10, 2);
    const ConstBuffer b1{m1.data(), m1.size()}, b2{m2.data(), m2.size()};
    ASSERT_TRUE(p.a.PostSend(1, {&b1, 1}));
    ASSERT_TRUE(p.a.PostSend(2, {&b2, 1}));
    Bytes wire;
    p.a.Pull(&wire, 1 << 20);
    RxResult r = p.b.Receive(wire);
    ASSERT_EQ(r.status, RxStatus::Stalled);
    EXPECT_LT(r.consumed, wire.size());  // up to and including the first segment of message 1
    EXPECT_TRUE(p.b.stalled());
    EXPECT_EQ(p.b.Receive(wire).status, RxStatus::Stalled);  // nothing moves while stalled
    Bytes r1(3000), r2(10);
    const MutableBuffer rb1{r1.data(), r1.size()}, rb2{r2.data(), r2.size()};
    ASSERT_TRUE(p.b.PostReceive(10, {&rb1, 1}));
    EXPECT_EQ(p.b.Resume(), RxStatus::Ok);
    const size_t done = r.consumed;
    r = p.b.Receive(std::span<const uint8_t>(wire).subspan(done));
    ASSERT_EQ(r.status, RxStatus::Stalled);  // message 2 needs a second receive
    ASSERT_TRUE(p.b.PostReceive(11, {&rb2, 1}));
    EXPECT_EQ(p.b.Resume(), RxStatus::Ok);
    EXPECT_EQ(p.b.Receive(std::span<const uint8_t>(wire).subspan(done + r.consumed)).status, RxStatus::Ok);
    EXPECT_EQ(r1, m1);
    EXPECT_EQ(r2, m2);
    EXPECT_EQ(p.Drain(p.b).size(), 2u);
}

TEST(Limits, SendWithoutReceiveTerminatesWhenStallingIsOff) {
    EngineOptions o;
    o.stall_on_missing_receive = false;
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    ASSERT_TRUE(p.a.PostSend(1, {}));
    p.Pump();
    EXPECT_EQ(p.b.local_fault().code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUNoBuffer}));
    EXPECT_EQ(p.a.remote_terminate()->terminated.msn, 1u);
}

TEST(Limits, ReceiveBufferTooSmall) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    Bytes small(100), next(100);
    const MutableBuffer sb{small.data(), small.size()}, nb{next.data(), next.size()};
    ASSERT_TRUE(p.b.PostReceive(1, {&sb, 1}));
    ASSERT_TRUE(p.b.PostReceive(2, {&nb, 1}));
    const Bytes m = Pattern(101);
    const ConstBuffer mb{m.data(), m.size()};
    ASSERT_TRUE(p.a.PostSend(3, {&mb, 1}));
    p.Pump();
    auto cb = p.Drain(p.b);
    ASSERT_EQ(cb.size(), 2u);
    EXPECT_EQ(cb[0].status, OpStatus::LocalLengthError);
    EXPECT_EQ(cb[1].status, OpStatus::Flushed);
    EXPECT_TRUE(std::all_of(small.begin(), small.end(), [](uint8_t x) { return x == 0; }));  // nothing placed
    EXPECT_EQ(p.a.remote_terminate()->code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUTooLong}));
    // The sender's Send succeeds (the receive's failure alone, COMPAT); the
    // stream is over all the same.
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 1u);
    EXPECT_EQ(ca[0].id, 3u);
    EXPECT_EQ(ca[0].status, OpStatus::Success);
    EXPECT_TRUE(p.a.failed());
}

// The provider withdraws a receive's memory (deregistered) while a Send is
// being placed into it: not one more byte lands, the receive fails with
// LocalAccessError, later receives are flushed and the sender learns of a
// local catastrophic error at the sink.
TEST(Limits, ReceiveWithdrawnMidMessage) {
    EngineOptions opt;
    opt.mss = 256;
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), opt);
    Bytes buf(2000), next(100);
    const MutableBuffer rb{buf.data(), buf.size()}, nb{next.data(), next.size()};
    ASSERT_TRUE(p.b.PostReceive(1, {&rb, 1}));
    ASSERT_TRUE(p.b.PostReceive(2, {&nb, 1}));
    p.pb.receive_checks_left = 1;  // the first segment may land, then the memory is gone
    const Bytes m = Pattern(1500);
    const ConstBuffer mb{m.data(), m.size()};
    ASSERT_TRUE(p.a.PostSend(3, {&mb, 1}));
    p.Pump();
    EXPECT_GE(p.pb.Count('R'), 2u) << "asked before every segment";
    auto cb = p.Drain(p.b);
    ASSERT_EQ(cb.size(), 2u);
    EXPECT_EQ(cb[0].id, 1u);
    EXPECT_EQ(cb[0].status, OpStatus::LocalAccessError);
    EXPECT_EQ(cb[1].status, OpStatus::Flushed);
    EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + 200, m.begin())) << "the first segment landed";
    EXPECT_TRUE(std::all_of(buf.begin() + 256, buf.end(), [](uint8_t x) { return x == 0; }))
        << "bytes placed after the receive was withdrawn";
    ASSERT_TRUE(p.a.remote_terminate().has_value());
    EXPECT_EQ(p.a.remote_terminate()->code.layer, Layer::Rdmap);
    EXPECT_EQ(p.a.remote_terminate()->code.etype, etype::kRdmapCatastrophic);
}

TEST(Limits, UntaggedOrderingViolations) {
    struct C {
        const char *name;
        uint32_t msn, mo;
        Errc errc;
    };
    for (const C &c : {C{"MO skips ahead", 1, 4, Errc::DdpMessageOffset}, C{"MSN behind the window", 0, 0, Errc::DdpMsnRange},
                       C{"MSN far ahead", 1u << 20, 0, Errc::DdpMsnRange}}) {
        FakePlacement pl;
        Engine e(Plain(Role::Responder), pl);
        Bytes r(64);
        const MutableBuffer rb{r.data(), r.size()};
        ASSERT_TRUE(e.PostReceive(1, {&rb, 1}));
        Bytes wire;
        EncodeUntagged(&wire, Opcode::Send, true, 0, c.msn, c.mo, 0, Pattern(4), false);
        EXPECT_EQ(e.Receive(wire).status, RxStatus::Failed) << c.name;
        EXPECT_EQ(e.local_fault().errc, c.errc) << c.name;
    }
    // A completed message's MSN again.
    FakePlacement pl;
    Engine e(Plain(Role::Responder), pl);
    Bytes r(64);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(e.PostReceive(1, {&rb, 1}));
    ASSERT_TRUE(e.PostReceive(2, {&rb, 1}));
    Bytes wire;
    EncodeUntagged(&wire, Opcode::Send, true, 0, 1, 0, 0, Pattern(4), false);
    EncodeUntagged(&wire, Opcode::Send, true, 0, 1, 0, 0, Pattern(4), false);
    EXPECT_EQ(e.Receive(wire).status, RxStatus::Failed);
    EXPECT_EQ(e.local_fault().errc, Errc::DdpMsnRange);
}

TEST(Limits, SendWithInvalidateOfAnUnknownStag) {
    EngineOptions o;
    o.confirm_by_read = true;  // as ndsoft: the Send completes with the peer's verdict
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    Bytes r(8);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(p.b.PostReceive(1, {&rb, 1}));
    SendFlags f;
    f.invalidate = true;
    f.invalidate_stag = 0x4242;
    ASSERT_TRUE(p.a.PostSend(2, {}, f));
    p.Pump();
    EXPECT_EQ(p.a.remote_terminate()->code,
              (TerminateCode{Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapCannotInvalidate}));
    EXPECT_EQ(p.a.remote_terminate()->terminated.invalidate_stag, 0x4242u);
    // The sender's Send is refused as an access error; the receive that
    // took it fails with the peer's error, never as a plain flush.
    const auto sent = p.Drain(p.a), got = p.Drain(p.b);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].id, 2u);
    EXPECT_EQ(sent[0].status, OpStatus::RemoteAccessError);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 1u);
    EXPECT_EQ(got[0].status, OpStatus::RemoteOperationError);
    EXPECT_FALSE(got[0].invalidated);
}

TEST(Limits, SendWithInvalidateReportsTheStagItInvalidated) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    p.pb.Add(0x77, 0, 64, true, true);
    Bytes r(8);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(p.b.PostReceive(1, {&rb, 1}));
    SendFlags f;
    f.invalidate = true;
    f.invalidate_stag = 0x77;
    ASSERT_TRUE(p.a.PostSend(2, {}, f));
    p.Pump();
    const auto got = p.Drain(p.b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, OpStatus::Success);
    EXPECT_TRUE(got[0].invalidated);
    EXPECT_EQ(got[0].invalidated_stag, 0x77u);
    EXPECT_FALSE(p.pb.regions.at(0x77).valid);
}

TEST(Limits, InterleavedInboundSendsCompleteInMsnOrder) {
    FakePlacement pl;
    Engine e(Plain(Role::Responder), pl);
    Bytes r1(8), r2(8);
    const MutableBuffer b1{r1.data(), r1.size()}, b2{r2.data(), r2.size()};
    ASSERT_TRUE(e.PostReceive(1, {&b1, 1}));
    ASSERT_TRUE(e.PostReceive(2, {&b2, 1}));
    Bytes wire;  // MSN 1 first half, MSN 2 whole, MSN 1 second half
    EncodeUntagged(&wire, Opcode::Send, false, 0, 1, 0, 0, Bytes{1, 2, 3, 4}, false);
    EncodeUntagged(&wire, Opcode::Send, true, 0, 2, 0, 0, Bytes{9}, false);
    Bytes half = wire;
    EncodeUntagged(&wire, Opcode::Send, true, 0, 1, 4, 0, Bytes{5, 6}, false);
    ASSERT_EQ(e.Receive(half).status, RxStatus::Ok);
    Completion c;
    EXPECT_FALSE(e.PollCompletion(&c));  // MSN 2 is done but waits for MSN 1
    ASSERT_EQ(e.Receive(std::span<const uint8_t>(wire).subspan(half.size())).status, RxStatus::Ok);
    ASSERT_TRUE(e.PollCompletion(&c));
    EXPECT_EQ(c.id, 1u);
    EXPECT_EQ(c.length, 6u);
    ASSERT_TRUE(e.PollCompletion(&c));
    EXPECT_EQ(c.id, 2u);
    EXPECT_EQ(r1, (Bytes{1, 2, 3, 4, 5, 6, 0, 0}));
}

TEST(Limits, OutboundMessagesAreNeverInterleaved) {
    EngineOptions o;
    o.mss = 128;
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    p.pb.Add(9, 0, 4096, false, true);
    p.pa.Add(1, 0, 4096, false, false);
    // b has a long Send queued when a's Read Request arrives.
    Bytes r(3000);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(p.a.PostReceive(1, {&rb, 1}));
    const Bytes m = Pattern(3000);
    const ConstBuffer mb{m.data(), m.size()};
    ASSERT_TRUE(p.b.PostSend(2, {&mb, 1}));
    ASSERT_TRUE(p.a.PostRead(3, 1, 0, 2000, 9, 0));
    p.Move(p.a, p.b, SIZE_MAX, nullptr);
    Bytes out;
    p.b.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    const auto segs = Segments(out, false, &store);
    // One message at a time: every switch of opcode happens after an L bit.
    for (size_t i = 1; i < segs.size(); ++i)
        if (segs[i].opcode != segs[i - 1].opcode) {
            EXPECT_TRUE(segs[i - 1].last) << "segment " << i;
        }
    ASSERT_EQ(p.a.Receive(out).status, RxStatus::Ok);
    EXPECT_EQ(p.Drain(p.a).size(), 2u);
    EXPECT_EQ(r, m);
}

}  // namespace
