// MPA request/reply frames: golden bytes built by hand from RFC 5044 (frame
// layout) and RFC 6581 (the enhanced IRD/ORD word), decoding under every
// chunking, and every malformed-input class.
#include <gtest/gtest.h>

#include "iwarp/mpa.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

// "MPA ID Req Frame" and "MPA ID Rep Frame"
const Bytes kReqKey = {0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65};
const Bytes kRepKey = {0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65};

Bytes Cat(Bytes a, const Bytes &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Revision 1 request, no CRC, private data "abc".
const Bytes kV1Request = Cat(kReqKey, {0x00 /*flags*/, 0x01 /*rev*/, 0x00, 0x03 /*PD_Length*/, 'a', 'b', 'c'});
// Revision 2 enhanced request with CRC: flags C|S = 0x50; PD_Length 6 =
// 4 enhanced bytes + 2. IRD word 0x8010 = A (peer-to-peer) | IRD 16;
// ORD word 0xC004 = C (Write RTR) | D (Read RTR) | ORD 4.
const Bytes kV2Request = Cat(kReqKey, {0x50, 0x02, 0x00, 0x06, 0x80, 0x10, 0xc0, 0x04, 0xde, 0xad});
// Revision 2 enhanced accept: flags S = 0x10; IRD 0x8008 (A | 8); ORD
// 0x8002 (C: Write RTR chosen | 2); no ULP private data.
const Bytes kV2Accept = Cat(kRepKey, {0x10, 0x02, 0x00, 0x04, 0x80, 0x08, 0x80, 0x02});
// Revision 1 reject: flags R = 0x20, private data "no".
const Bytes kV1Reject = Cat(kRepKey, {0x20, 0x01, 0x00, 0x02, 'n', 'o'});

MpaFrame V2Request() {
    MpaFrame f;
    f.request = true;
    f.revision = 2;
    f.crc = true;
    f.enhanced = true;
    f.ird = 16;
    f.ord = 4;
    f.peer_to_peer = true;
    f.rtr = kRtrWrite | kRtrRead;
    f.private_data = {0xde, 0xad};
    return f;
}

Bytes Encode(const MpaFrame &f) {
    Bytes out;
    EXPECT_TRUE(EncodeMpaFrame(f, &out));
    return out;
}

// Decodes `wire` fed in `chunk`-sized pieces; returns status and consumed total.
MpaFrameDecoder::Status Decode(MpaFrameDecoder &d, const Bytes &wire, size_t chunk, size_t *total) {
    *total = 0;
    auto st = MpaFrameDecoder::Status::NeedMore;
    for (size_t k : Chunks(wire.size(), chunk == SIZE_MAX ? wire.size() : chunk, 7)) {
        size_t used = 0;
        st = d.Feed(std::span<const uint8_t>(wire).subspan(*total, k), &used);
        *total += used;
        if (st != MpaFrameDecoder::Status::NeedMore) break;
    }
    return st;
}

TEST(MpaFrame, GoldenEncodings) {
    MpaFrame v1;
    v1.revision = 1;
    v1.private_data = {'a', 'b', 'c'};
    EXPECT_EQ(Encode(v1), kV1Request);
    EXPECT_EQ(Encode(V2Request()), kV2Request);
    MpaFrame acc;
    acc.request = false;
    acc.enhanced = true;
    acc.ird = 8;
    acc.ord = 2;
    acc.peer_to_peer = true;
    acc.rtr = kRtrWrite;
    EXPECT_EQ(Encode(acc), kV2Accept);
    MpaFrame rej;
    rej.request = false;
    rej.revision = 1;
    rej.reject = true;
    rej.private_data = {'n', 'o'};
    EXPECT_EQ(Encode(rej), kV1Reject);
    // Send RTR is B, in the IRD word: 0x8000 | 0x4000 | 3.
    MpaFrame send_rtr = acc;
    send_rtr.ird = 3;
    send_rtr.rtr = kRtrSend;
    const Bytes b = Encode(send_rtr);
    EXPECT_EQ(Bytes(b.begin() + 20, b.end()), (Bytes{0xc0, 0x03, 0x00, 0x02}));
}

TEST(MpaFrame, DecodesUnderEveryChunkingAndStopsAtFrameEnd) {
    const Bytes trailing = {0x00, 0x12, 0x41, 0x43, 0x99};  // FPDU bytes that follow a reply
    for (const auto &[name, chunk] : Chunkings()) {
        MpaFrameDecoder d(MpaFrameDecoder::Expect::Request);
        size_t used = 0;
        ASSERT_EQ(Decode(d, Cat(kV2Request, trailing), chunk, &used), MpaFrameDecoder::Status::Done) << name;
        EXPECT_EQ(used, kV2Request.size()) << name;
        const MpaFrame &f = d.frame();
        EXPECT_TRUE(f.request && f.crc && f.enhanced && f.peer_to_peer) << name;
        EXPECT_FALSE(f.markers || f.reject) << name;
        EXPECT_EQ(f.revision, 2);
        EXPECT_EQ(f.ird, 16);
        EXPECT_EQ(f.ord, 4);
        EXPECT_EQ(f.rtr, kRtrWrite | kRtrRead);
        EXPECT_EQ(f.private_data, (Bytes{0xde, 0xad}));

        MpaFrameDecoder r(MpaFrameDecoder::Expect::Reply);
        ASSERT_EQ(Decode(r, kV1Reject, chunk, &used), MpaFrameDecoder::Status::Done) << name;
        EXPECT_TRUE(r.frame().reject && !r.frame().request && !r.frame().enhanced);
        EXPECT_EQ(r.frame().private_data, (Bytes{'n', 'o'}));
    }
}

TEST(MpaFrame, RejectsWrongKeyAsSoonAsTheKeyIsIn) {
    Bytes bad = kV1Request;
    bad[3] = 'X';
    for (const auto &[name, chunk] : Chunkings()) {
        MpaFrameDecoder d;
        size_t used = 0;
        EXPECT_EQ(Decode(d, bad, chunk, &used), MpaFrameDecoder::Status::Error) << name;
        EXPECT_EQ(d.error(), Errc::MpaBadKey);
        EXPECT_LE(used, kMpaKeySize);
    }
    MpaFrameDecoder want_reply(MpaFrameDecoder::Expect::Reply);
    size_t used = 0;
    EXPECT_EQ(Decode(want_reply, kV1Request, 1, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(want_reply.error(), Errc::MpaBadKey);
    MpaFrameDecoder want_request(MpaFrameDecoder::Expect::Request);
    EXPECT_EQ(Decode(want_request, kV1Reject, 1, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(want_request.error(), Errc::MpaBadKey);
    // Errors are sticky and consume nothing more.
    EXPECT_EQ(want_request.Feed(kV1Request, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(used, 0u);
}

TEST(MpaFrame, RejectsRevisionsOtherThanOneAndTwo) {
    for (uint8_t rev : {0, 3, 255}) {
        Bytes bad = kV1Request;
        bad[17] = rev;
        MpaFrameDecoder d;
        size_t used = 0;
        EXPECT_EQ(Decode(d, bad, 1, &used), MpaFrameDecoder::Status::Error);
        EXPECT_EQ(d.error(), Errc::MpaBadRevision) << int(rev);
        EXPECT_EQ(used, 18u);
    }
}

TEST(MpaFrame, PrivateDataLimitIs512) {
    Bytes ok = Cat(kReqKey, {0x00, 0x01, 0x02, 0x00});  // PD_Length 512
    ok.resize(ok.size() + 512, 0x5a);
    MpaFrameDecoder d;
    size_t used = 0;
    EXPECT_EQ(Decode(d, ok, 0, &used), MpaFrameDecoder::Status::Done);
    EXPECT_EQ(d.frame().private_data.size(), 512u);

    Bytes big = Cat(kReqKey, {0x00, 0x01, 0x02, 0x01});  // 513: refused before any of it is read
    MpaFrameDecoder e;
    EXPECT_EQ(Decode(e, big, SIZE_MAX, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(e.error(), Errc::MpaPrivateDataTooLong);
    Bytes huge = Cat(kReqKey, {0x00, 0x01, 0xff, 0xff});
    MpaFrameDecoder h;
    EXPECT_EQ(Decode(h, huge, 1, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(h.error(), Errc::MpaPrivateDataTooLong);
}

TEST(MpaFrame, EnhancedNeedsFourPrivateDataBytes) {
    const Bytes short_pd = Cat(kReqKey, {0x10, 0x02, 0x00, 0x03, 0x80, 0x01, 0x00});
    MpaFrameDecoder d;
    size_t used = 0;
    EXPECT_EQ(Decode(d, short_pd, 1, &used), MpaFrameDecoder::Status::Error);
    EXPECT_EQ(d.error(), Errc::MpaEnhancedTooShort);
}

TEST(MpaFrame, ReservedBitsAreReportedNotRejected) {
    // Res bits (0x0f) are ignored on receive (RFC 5044); siw may set 0x08
    // (its GSO hint). In revision 1 the S bit is reserved too.
    Bytes res = kV1Request;
    res[16] = 0x18;
    MpaFrameDecoder d;
    size_t used = 0;
    ASSERT_EQ(Decode(d, res, SIZE_MAX, &used), MpaFrameDecoder::Status::Done);
    EXPECT_FALSE(d.frame().enhanced);
    EXPECT_EQ(d.frame().reserved_bits, 0x18);
    EXPECT_EQ(d.frame().private_data, (Bytes{'a', 'b', 'c'}));
}

TEST(MpaFrame, EncoderRefusesWhatCannotBeSent) {
    Bytes out;
    MpaFrame f;
    f.revision = 1;
    f.private_data.assign(512, 1);
    EXPECT_TRUE(EncodeMpaFrame(f, &out));
    f.private_data.assign(513, 1);
    out.clear();
    EXPECT_FALSE(EncodeMpaFrame(f, &out));
    EXPECT_TRUE(out.empty());
    f = V2Request();
    f.private_data.assign(kMpaMaxUlpPrivateDataV2, 1);  // 508 + 4 enhanced bytes
    EXPECT_TRUE(EncodeMpaFrame(f, &out));
    EXPECT_EQ(out.size(), 20u + 512u);
    f.private_data.push_back(1);
    EXPECT_FALSE(EncodeMpaFrame(f, &out));
    f.private_data.clear();
    f.revision = 3;
    EXPECT_FALSE(EncodeMpaFrame(f, &out));
    // IRD/ORD are 14-bit fields: larger values never spill into the flags.
    f = V2Request();
    f.peer_to_peer = false;
    f.rtr = 0;
    f.ird = 0xffff;
    f.ord = 0x7fff;
    out.clear();
    ASSERT_TRUE(EncodeMpaFrame(f, &out));
    EXPECT_EQ(Bytes(out.begin() + 20, out.begin() + 24), (Bytes{0x3f, 0xff, 0x3f, 0xff}));
}

}  // namespace
