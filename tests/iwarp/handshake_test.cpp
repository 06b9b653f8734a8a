// MPA connection setup, initiator against responder in memory: revision 1
// and 2, CRC on and off, IRD/ORD, RTR choice, reject with private data,
// markers refused, and the failures that end with a Terminate.
#include <gtest/gtest.h>

#include "iwarp/handshake.h"
#include "iwarp/terminate.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

HandshakeStatus FeedChunked(const std::function<HandshakeStatus(std::span<const uint8_t>, size_t *)> &feed,
                            const Bytes &wire, size_t chunk, size_t *total) {
    *total = 0;
    auto st = HandshakeStatus::NeedMore;
    for (size_t k : Chunks(wire.size(), chunk == SIZE_MAX ? wire.size() : chunk, 5)) {
        size_t used = 0;
        st = feed(std::span<const uint8_t>(wire).subspan(*total, k), &used);
        *total += used;
        if (st != HandshakeStatus::NeedMore) break;
    }
    return st;
}

struct Exchange {
    Initiator ini;
    Responder resp;
    HandshakeStatus ini_status{}, resp_status{};
    Bytes reply;

    Exchange(const MpaConfig &ic, const MpaConfig &rc, const Bytes &req_pd = {'h', 'i'}, bool accept = true,
        const Bytes &rep_pd = {'o', 'k'}, size_t chunk = SIZE_MAX)
        : ini(ic, req_pd), resp(rc) {
        size_t used = 0;
        resp_status = FeedChunked([&](auto in, size_t *u) { return resp.Feed(in, u); }, ini.request(), chunk, &used);
        if (resp_status != HandshakeStatus::RequestReceived) return;
        reply = accept ? resp.Accept(rep_pd) : resp.Reject(rep_pd);
        resp_status = resp.status();
        ini_status = FeedChunked([&](auto in, size_t *u) { return ini.Feed(in, u); }, reply, chunk, &used);
    }
};

TEST(Handshake, DefaultsAreRevision2WithWriteRtrAndNoCrc) {
    for (const auto &[name, chunk] : Chunkings()) {
        Exchange r(MpaConfig{}, MpaConfig{}, {'h', 'i'}, true, {'o', 'k'}, chunk);
        ASSERT_EQ(r.ini_status, HandshakeStatus::Connected) << name;
        ASSERT_EQ(r.resp_status, HandshakeStatus::Connected) << name;
        const Negotiated &i = r.ini.negotiated(), &s = r.resp.negotiated();
        EXPECT_EQ(i.role, Role::Initiator);
        EXPECT_EQ(s.role, Role::Responder);
        EXPECT_TRUE(i.enhanced && s.enhanced);
        EXPECT_FALSE(i.crc || s.crc);
        EXPECT_EQ(i.rtr, RtrType::Write);  // offered Write|Read (as siw), Write preferred
        EXPECT_EQ(s.rtr, RtrType::Write);
        EXPECT_TRUE(s.hold_until_first_fpdu);
        EXPECT_EQ(Bytes(r.resp.peer_private_data().begin(), r.resp.peer_private_data().end()), (Bytes{'h', 'i'}));
        EXPECT_EQ(Bytes(r.ini.peer_private_data().begin(), r.ini.peer_private_data().end()), (Bytes{'o', 'k'}));
    }
}

TEST(Handshake, CrcIsOnWhenEitherSideAsks) {
    MpaConfig on;
    on.crc = true;
    for (auto [ic, rc, want] : {std::tuple{MpaConfig{}, MpaConfig{}, false}, std::tuple{on, MpaConfig{}, true},
                                std::tuple{MpaConfig{}, on, true}, std::tuple{on, on, true}}) {
        Exchange r(ic, rc);
        ASSERT_EQ(r.ini_status, HandshakeStatus::Connected);
        EXPECT_EQ(r.ini.negotiated().crc, want);
        EXPECT_EQ(r.resp.negotiated().crc, want);
    }
}

TEST(Handshake, IrdAndOrdAreNegotiated) {
    MpaConfig ic, rc;
    ic.ird = 4;
    ic.ord = 8;
    rc.ird = 2;
    rc.ord = 6;
    Exchange r(ic, rc);
    ASSERT_EQ(r.ini_status, HandshakeStatus::Connected);
    EXPECT_EQ(r.resp.negotiated().ord, 4u);  // no more than the initiator can take in
    EXPECT_EQ(r.resp.negotiated().ird, 2u);
    EXPECT_EQ(r.ini.negotiated().ord, 2u);   // no more than the responder takes in
    EXPECT_EQ(r.ini.negotiated().ird, 4u);
}

TEST(Handshake, Revision1HasNoEnhancedParametersOrRtr) {
    MpaConfig v1;
    v1.revision = 1;
    v1.crc = true;
    Exchange r(v1, MpaConfig{});
    ASSERT_EQ(r.ini_status, HandshakeStatus::Connected);
    EXPECT_EQ(r.reply[17], 1);  // the reply keeps the lower revision
    EXPECT_FALSE(r.ini.negotiated().enhanced);
    EXPECT_EQ(r.ini.negotiated().rtr, RtrType::None);
    EXPECT_EQ(r.resp.negotiated().rtr, RtrType::None);
    EXPECT_TRUE(r.ini.negotiated().crc && r.resp.negotiated().crc);
    EXPECT_TRUE(r.resp.negotiated().hold_until_first_fpdu);  // RFC 5044: responder sends second

    // A revision 1 responder answers a revision 2 request with revision 1.
    Exchange down(MpaConfig{}, v1);
    ASSERT_EQ(down.ini_status, HandshakeStatus::Connected);
    EXPECT_FALSE(down.ini.negotiated().enhanced);
    EXPECT_EQ(down.ini.negotiated().rtr, RtrType::None);
}

TEST(Handshake, RejectCarriesPrivateData) {
    for (uint8_t rev : {1, 2}) {
        MpaConfig c;
        c.revision = rev;
        Exchange r(c, MpaConfig{}, {'q'}, false, {'b', 'u', 's', 'y'});
        EXPECT_EQ(r.resp_status, HandshakeStatus::Rejected);
        ASSERT_EQ(r.ini_status, HandshakeStatus::Rejected);
        EXPECT_EQ(r.ini.error(), Errc::MpaRejected);
        EXPECT_EQ(Bytes(r.ini.peer_private_data().begin(), r.ini.peer_private_data().end()),
                  (Bytes{'b', 'u', 's', 'y'}));
        EXPECT_TRUE(r.ini.TakeOutput().empty());  // a reject is an answer, not a protocol error
    }
}

TEST(Handshake, MarkersAreRefusedWithAReject) {
    MpaFrame req;
    req.markers = true;
    req.enhanced = true;
    req.ird = req.ord = 1;
    Bytes wire;
    ASSERT_TRUE(EncodeMpaFrame(req, &wire));
    Responder resp{MpaConfig{}};
    size_t used = 0;
    EXPECT_EQ(resp.Feed(wire, &used), HandshakeStatus::Failed);
    EXPECT_EQ(resp.error(), Errc::MpaMarkersRequested);
    const Bytes reply = resp.TakeOutput();
    MpaFrameDecoder d(MpaFrameDecoder::Expect::Reply);
    ASSERT_EQ(d.Feed(reply, &used), MpaFrameDecoder::Status::Done);
    EXPECT_TRUE(d.frame().reject);
    EXPECT_FALSE(d.frame().markers);
    EXPECT_TRUE(resp.Accept({}).empty());  // nothing to accept any more
}

TEST(Handshake, RtrChoice) {
    struct C {
        uint8_t offer, accept;
        uint16_t ini_ord, resp_ird;
        RtrType want;
    };
    for (const C &c : {C{kRtrRead, 7, 4, 4, RtrType::Read}, C{kRtrSend, 7, 4, 4, RtrType::Send},
                       C{kRtrSend | kRtrRead, 7, 4, 4, RtrType::Read},
                       C{kRtrWrite | kRtrRead, kRtrSend, 4, 4, RtrType::Write},  // as siw: Write when nothing fits
                       C{kRtrRead, 7, 0, 4, RtrType::None},   // ORD 0: no Read offered, nothing left to offer
                       C{kRtrRead, 7, 4, 0, RtrType::Write}}) {  // responder IRD 0 cannot take a Read RTR
        MpaConfig ic, rc;
        ic.rtr_offer = c.offer;
        ic.ord = c.ini_ord;
        rc.rtr_accept = c.accept;
        rc.ird = c.resp_ird;
        Exchange r(ic, rc);
        ASSERT_EQ(r.ini_status, HandshakeStatus::Connected);
        EXPECT_EQ(r.ini.negotiated().rtr, c.want) << int(c.offer) << "/" << int(c.accept);
        EXPECT_EQ(r.resp.negotiated().rtr, c.want);
    }
    MpaConfig no_p2p;
    no_p2p.peer_to_peer = false;
    Exchange r(no_p2p, MpaConfig{});
    EXPECT_EQ(r.ini.negotiated().rtr, RtrType::None);
}

// Feeds a hand-made reply to a default initiator.
Initiator WithReply(const MpaFrame &reply, HandshakeStatus *st, const MpaConfig &c = {}) {
    Initiator ini(c, Bytes{});
    Bytes wire;
    EXPECT_TRUE(EncodeMpaFrame(reply, &wire));
    size_t used = 0;
    *st = ini.Feed(wire, &used);
    return ini;
}

MpaFrame GoodReply() {
    MpaFrame r;
    r.request = false;
    r.enhanced = true;
    r.ird = r.ord = 4;
    r.peer_to_peer = true;
    r.rtr = kRtrWrite;
    return r;
}

TerminateCode TerminateIn(Bytes wire) {
    FpduDecoder d;
    size_t used = 0;
    EXPECT_EQ(d.Feed(wire, &used), FpduDecoder::Status::Segment);
    TerminateMessage m;
    EXPECT_TRUE(ParseTerminate(d.segment().payload, &m));
    return m.code;
}

TEST(Handshake, InitiatorFailuresSendTheRightTerminate) {
    HandshakeStatus st{};
    MpaFrame r = GoodReply();
    r.ord = 17;  // above our IRD of 16
    Initiator a = WithReply(r, &st);
    EXPECT_EQ(st, HandshakeStatus::Failed);
    EXPECT_EQ(a.error(), Errc::MpaInsufficientIrd);
    EXPECT_EQ(TerminateIn(a.TakeOutput()), (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpInsufficientIrd}));

    r = GoodReply();
    r.rtr = 0;  // peer-to-peer without a type
    Initiator b = WithReply(r, &st);
    EXPECT_EQ(b.error(), Errc::MpaNoMatchingRtr);
    EXPECT_EQ(TerminateIn(b.TakeOutput()), (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpNoMatchingRtr}));

    r = GoodReply();
    r.markers = true;
    Initiator c = WithReply(r, &st);
    EXPECT_EQ(c.error(), Errc::MpaBadReplyFlags);
    EXPECT_EQ(TerminateIn(c.TakeOutput()), (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpBadRequestReply}));

    MpaConfig crc;
    crc.crc = true;
    Initiator d = WithReply(GoodReply(), &st, crc);  // asked for CRC, reply without C
    EXPECT_EQ(d.error(), Errc::MpaBadReplyFlags);

    r = GoodReply();
    r.enhanced = false;  // revision 2 but not enhanced, to an enhanced request
    Initiator e = WithReply(r, &st);
    EXPECT_EQ(e.error(), Errc::MpaBadReplyFlags);

    MpaConfig v1;
    v1.revision = 1;
    Initiator f = WithReply(GoodReply(), &st, v1);  // reply newer than the request
    EXPECT_EQ(f.error(), Errc::MpaBadRevision);

    Initiator g(MpaConfig{}, Bytes{});
    Bytes req = g.request();  // a request key where the reply was due
    size_t used = 0;
    EXPECT_EQ(g.Feed(req, &used), HandshakeStatus::Failed);
    EXPECT_EQ(g.error(), Errc::MpaBadKey);
    EXPECT_EQ(TerminateIn(g.TakeOutput()), (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpBadRequestReply}));
}

TEST(Handshake, ReplyIsConsumedExactlyAndTheStreamFollows) {
    Initiator ini(MpaConfig{}, Bytes{});
    Bytes wire;
    ASSERT_TRUE(EncodeMpaFrame(GoodReply(), &wire));
    const size_t reply_size = wire.size();
    EncodeTagged(&wire, Opcode::RdmaWrite, true, 1, 0, {}, false);
    size_t used = 0;
    EXPECT_EQ(ini.Feed(wire, &used), HandshakeStatus::Connected);
    EXPECT_EQ(used, reply_size);
}

TEST(Handshake, ResponderRefusesBytesBeforeItsReply) {
    Initiator ini(MpaConfig{}, Bytes{});
    Bytes wire = ini.request();
    wire.push_back(0);
    Responder resp{MpaConfig{}};
    size_t used = 0;
    EXPECT_EQ(resp.Feed(wire, &used), HandshakeStatus::RequestReceived);
    EXPECT_EQ(used, wire.size() - 1);
    EXPECT_EQ(resp.Feed(std::span<const uint8_t>(wire).last(1), &used), HandshakeStatus::Failed);
    EXPECT_EQ(resp.error(), Errc::MpaUnexpectedData);
}

TEST(Handshake, PrivateDataLimits) {
    Initiator too_long(MpaConfig{}, Bytes(509, 1));  // 508 + the 4 enhanced bytes = 512
    EXPECT_EQ(too_long.status(), HandshakeStatus::Failed);
    EXPECT_EQ(too_long.error(), Errc::MpaPrivateDataTooLong);
    EXPECT_TRUE(too_long.request().empty());
    Initiator fits(MpaConfig{}, Bytes(508, 1));
    EXPECT_EQ(fits.request().size(), 532u);
    MpaConfig v1;
    v1.revision = 1;
    EXPECT_EQ(Initiator(v1, Bytes(512, 1)).request().size(), 532u);

    Exchange r(MpaConfig{}, MpaConfig{}, {}, true, Bytes(509, 2));
    EXPECT_EQ(r.resp_status, HandshakeStatus::Failed);
    EXPECT_TRUE(r.reply.empty());
}

}  // namespace
