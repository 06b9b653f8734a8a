// Connection setup through to data: handshake, then engines built from what
// was negotiated. The RTR (RFC 6581) is the initiator's first FPDU; the
// responder transmits nothing before it has arrived (Linux 6.1 siw as a
// server replies before it reads, and data sent too early can stall).
#include <gtest/gtest.h>

#include "iwarp/engine.h"
#include "iwarp/handshake.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

struct Connected {
    Negotiated ini, resp;
};

Connected Handshake(const MpaConfig &ic, const MpaConfig &rc) {
    Initiator i(ic, Bytes{});
    Responder r(rc);
    size_t used = 0;
    EXPECT_EQ(r.Feed(i.request(), &used), HandshakeStatus::RequestReceived);
    const Bytes reply = r.Accept({});
    EXPECT_EQ(i.Feed(reply, &used), HandshakeStatus::Connected);
    return {i.negotiated(), r.negotiated()};
}

MpaConfig Offer(uint8_t rtr, bool crc = false) {
    MpaConfig c;
    c.rtr_offer = rtr;
    c.crc = crc;
    return c;
}

class Rtr : public testing::TestWithParam<std::tuple<uint8_t, bool>> {};

TEST_P(Rtr, IsFirstAndTheResponderWaitsForIt) {
    const auto [rtr, crc] = GetParam();
    const Connected c = Handshake(Offer(rtr, crc), MpaConfig{});
    ASSERT_EQ(c.ini.rtr, static_cast<RtrType>(rtr));
    Pair p(c.ini, c.resp);
    EXPECT_TRUE(p.a.established());
    EXPECT_FALSE(p.b.established());

    // The responder has data to send and a receive posted; the initiator too.
    const Bytes to_ini = Pattern(5000, 1), to_resp = Pattern(3000, 2);
    Bytes at_ini(5000), at_resp(3000);
    const MutableBuffer ri{at_ini.data(), at_ini.size()}, rr{at_resp.data(), at_resp.size()};
    const ConstBuffer si{to_resp.data(), to_resp.size()}, sr{to_ini.data(), to_ini.size()};
    ASSERT_TRUE(p.a.PostReceive(1, {&ri, 1}));
    ASSERT_TRUE(p.b.PostReceive(2, {&rr, 1}));
    ASSERT_TRUE(p.b.PostSend(3, {&sr, 1}));
    ASSERT_TRUE(p.a.PostSend(4, {&si, 1}));

    Bytes early;
    EXPECT_EQ(p.b.Pull(&early, 1 << 20), 0u);  // nothing before the RTR
    EXPECT_FALSE(p.b.WantsToSend());

    p.Pump(0);
    EXPECT_TRUE(p.b.established());
    EXPECT_EQ(at_ini, to_ini);
    EXPECT_EQ(at_resp, to_resp);

    std::vector<Bytes> sa, sb;
    const auto a_segs = Segments(p.a_wire, crc, &sa), b_segs = Segments(p.b_wire, crc, &sb);
    ASSERT_FALSE(a_segs.empty());
    ASSERT_FALSE(b_segs.empty());
    const Segment &first = a_segs[0];
    switch (static_cast<RtrType>(rtr)) {
    case RtrType::Write:
        EXPECT_EQ(first.opcode, Opcode::RdmaWrite);
        EXPECT_EQ(first.stag, 1u);  // as siw: STag 0 is special to some hardware
        EXPECT_TRUE(first.payload.empty() && first.last);
        EXPECT_EQ(b_segs[0].opcode, Opcode::Send);
        break;
    case RtrType::Read:
        EXPECT_EQ(first.opcode, Opcode::ReadRequest);
        EXPECT_EQ(first.read.size, 0u);
        EXPECT_EQ(first.msn, 1u);
        EXPECT_EQ(b_segs[0].opcode, Opcode::ReadResponse);  // answered first, zero-length
        EXPECT_TRUE(b_segs[0].payload.empty() && b_segs[0].last);
        break;
    default:
        EXPECT_EQ(first.opcode, Opcode::Send);
        EXPECT_EQ(first.msn, 1u);
        EXPECT_TRUE(first.payload.empty());
        EXPECT_EQ(a_segs[1].msn, 2u);  // the application's Send comes next, MSN 2
        EXPECT_EQ(b_segs[0].opcode, Opcode::Send);
        break;
    }
    // The RTR completes nothing anywhere: one Send and one Receive each side.
    auto ca = p.Drain(p.a), cb = p.Drain(p.b);
    ASSERT_EQ(ca.size(), 2u);
    ASSERT_EQ(cb.size(), 2u);
    EXPECT_EQ(p.a.outstanding_reads(), 0u);
    EXPECT_EQ(p.pa.calls.size() - p.pa.Count('R') + p.pb.calls.size() - p.pb.Count('R'), 0u);  // a zero-length RTR checks no STag
}

INSTANTIATE_TEST_SUITE_P(Types, Rtr,
                         testing::Combine(testing::Values(kRtrWrite, kRtrRead, kRtrSend), testing::Bool()));

TEST(RtrOrder, InitiatorDataPostedEarlyStillFollowsTheRtr) {
    const Connected c = Handshake(MpaConfig{}, MpaConfig{});
    FakePlacement pl;
    Engine ini(c.ini, pl);
    ASSERT_TRUE(ini.PostWrite(1, {}, 7, 0));
    ASSERT_TRUE(ini.PostSend(2, {}));
    Bytes out;
    ini.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    const auto segs = Segments(out, false, &store);
    ASSERT_EQ(segs.size(), 3u);
    EXPECT_EQ(segs[0].stag, 1u);  // RTR
    EXPECT_EQ(segs[1].stag, 7u);
    Completion done;
    ASSERT_TRUE(ini.PollCompletion(&done));
    EXPECT_EQ(done.id, 1u);  // the RTR is not reported
}

TEST(RtrOrder, WrongFirstFpduIsNoMatchingRtr) {
    const Connected c = Handshake(MpaConfig{}, MpaConfig{});  // Write RTR
    FakePlacement pl;
    Engine resp(c.resp, pl);
    Bytes r(8);
    const MutableBuffer rb{r.data(), r.size()};
    ASSERT_TRUE(resp.PostReceive(1, {&rb, 1}));
    Bytes send;
    EncodeUntagged(&send, Opcode::Send, true, 0, 1, 0, 0, {}, false);
    EXPECT_EQ(resp.Receive(send).status, RxStatus::Failed);
    EXPECT_EQ(resp.local_fault().code, (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpNoMatchingRtr}));
    Bytes out;
    resp.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    ASSERT_EQ(Segments(out, false, &store).size(), 1u);  // only the Terminate
    Completion comp;
    ASSERT_TRUE(resp.PollCompletion(&comp));
    EXPECT_EQ(comp.status, OpStatus::Flushed);
    // A Write RTR carrying data is not an RTR either.
    Engine resp2(c.resp, pl);
    Bytes w;
    EncodeTagged(&w, Opcode::RdmaWrite, true, 1, 0, Pattern(4), false);
    EXPECT_EQ(resp2.Receive(w).status, RxStatus::Failed);
    EXPECT_EQ(resp2.local_fault().errc, Errc::MpaNoMatchingRtr);
}

TEST(RtrOrder, WithoutRtrTheResponderStillSendsSecond) {
    MpaConfig v1;
    v1.revision = 1;
    const Connected c = Handshake(v1, MpaConfig{});
    ASSERT_EQ(c.resp.rtr, RtrType::None);
    Pair p(c.ini, c.resp);
    ASSERT_TRUE(p.b.PostWrite(1, {}, 3, 0));
    Bytes out;
    EXPECT_EQ(p.b.Pull(&out, 1 << 20), 0u);
    ASSERT_TRUE(p.a.PostWrite(2, {}, 3, 0));  // the initiator's first FPDU releases it
    p.Pump();
    EXPECT_TRUE(p.b.established());
    EXPECT_EQ(p.Drain(p.b).size(), 1u);

    MpaConfig eager;
    eager.responder_waits_for_first_fpdu = false;
    const Connected d = Handshake(v1, eager);  // siw's behaviour as a server
    FakePlacement pl;
    Engine resp(d.resp, pl);
    EXPECT_TRUE(resp.established());
}

TEST(RtrOrder, TransmitHoldKeepsEvenTheRtrBack) {
    const Connected c = Handshake(MpaConfig{}, MpaConfig{});
    FakePlacement pl;
    Engine ini(c.ini, pl);
    ini.HoldTransmit(true);  // e.g. 0.3 s after the reply from a Linux 6.1 siw server
    ASSERT_TRUE(ini.PostSend(1, {}));
    Bytes out;
    EXPECT_EQ(ini.Pull(&out, 1 << 20), 0u);
    EXPECT_FALSE(ini.WantsToSend());
    ini.HoldTransmit(false);
    EXPECT_TRUE(ini.WantsToSend());
    ini.Pull(&out, 1 << 20);
    std::vector<Bytes> store;
    const auto segs = Segments(out, false, &store);
    ASSERT_EQ(segs.size(), 2u);
    EXPECT_EQ(segs[0].opcode, Opcode::RdmaWrite);  // the RTR, still first
    // A Terminate is never held.
    ini.HoldTransmit(true);
    ini.Abort(true);
    out.clear();
    EXPECT_GT(ini.Pull(&out, 1 << 20), 0u);
}

}  // namespace
