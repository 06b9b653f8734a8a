// FPDU framing and DDP/RDMAP headers: golden bytes for every message type,
// built by hand from RFC 5044 (length, pad, CRC), RFC 5041 §4 (DDP control,
// tagged and untagged headers) and RFC 5040 §4 (RDMAP control, Read Request
// header); round trips through the decoder under every chunking.
#include <gtest/gtest.h>

#include "iwarp/bytes.h"
#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

// RDMA Write, last: DDP ctrl T|L|DV1 = 0xC1, RDMAP ctrl RV1|op 0 = 0x40,
// STag, TO, "hi"; ULPDU 16, so 2 pad bytes; CRC off = 0.
const Bytes kWrite = {0x00, 0x10, 0xc1, 0x40, 0x11, 0x22, 0x33, 0x44, 0x01, 0x02, 0x03, 0x04,
                      0x05, 0x06, 0x07, 0x08, 'h',  'i',  0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// Send, last, MSN 1, MO 0, "abcd": DDP ctrl L|DV1 = 0x41, RDMAP 0x43; rsvd,
// QN 0, MSN, MO; ULPDU 22, no pad; CRC32c over the first 24 bytes,
// 0x924D6471, least significant byte first.
const Bytes kSendCrc = {0x00, 0x16, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                        0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 'a',  'b',  'c',  'd',  0x71, 0x64, 0x4d, 0x92};
// Read Request, MSN 1, QN 1: RDMAP 0x41; 28-byte header: sink STag, sink
// TO 0x1000, size 0x2000, source STag, source TO; ULPDU 46.
const Bytes kReadRequest = {0x00, 0x2e, 0x41, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
                            0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00,
                            0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01, 0x02, 0x03,
                            0x04, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
// Read Response, not last: DDP ctrl T|DV1 = 0x81, RDMAP 0x42; 3 bytes, 1 pad.
const Bytes kReadResponse = {0x00, 0x11, 0x81, 0x42, 0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x10, 0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00};
// Send with Solicited Event and Invalidate, not last: RDMAP 0x46, the
// reserved word carries the STag to invalidate; MSN 7, MO 0x100, "z", 3 pad.
const Bytes kSendSeInv = {0x00, 0x13, 0x01, 0x46, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x00, 0x07, 0x00, 0x00, 0x01, 0x00, 'z',  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

Bytes Encoded(const std::function<void(Bytes *)> &f) {
    Bytes b;
    f(&b);
    return b;
}

TEST(Fpdu, GoldenEncodings) {
    const Bytes hi = {'h', 'i'}, abcd = {'a', 'b', 'c', 'd'}, three = {1, 2, 3}, z = {'z'};
    EXPECT_EQ(Encoded([&](Bytes *o) { EncodeTagged(o, Opcode::RdmaWrite, true, 0x11223344, 0x0102030405060708, hi, false); }),
              kWrite);
    EXPECT_EQ(Encoded([&](Bytes *o) { EncodeUntagged(o, Opcode::Send, true, 0, 1, 0, 0, abcd, true); }), kSendCrc);
    const ReadRequest rr{0xaabbccdd, 0x1000, 0x2000, 0x01020304, 0xffff000000000000};
    EXPECT_EQ(Encoded([&](Bytes *o) { EncodeReadRequest(o, 1, rr, false); }), kReadRequest);
    EXPECT_EQ(Encoded([&](Bytes *o) { EncodeTagged(o, Opcode::ReadResponse, false, 0xaabbccdd, 0x1000, three, false); }),
              kReadResponse);
    EXPECT_EQ(Encoded([&](Bytes *o) {
                  EncodeUntagged(o, Opcode::SendSolicitedInvalidate, false, 0, 7, 0x100, 0x55667788, z, false);
              }),
              kSendSeInv);
    EXPECT_EQ(LoadLe32(kSendCrc.data() + 24), Crc32c(kSendCrc.data(), 24));
}

// Decodes a stream of FPDUs fed in `chunk`-sized pieces.
std::vector<std::pair<Segment, Bytes>> DecodeAll(const Bytes &wire, size_t chunk, const FpduOptions &opt,
                                                 FpduDecoder::Status *last = nullptr, uint32_t seed = 3) {
    FpduDecoder d(opt);
    std::vector<std::pair<Segment, Bytes>> out;
    size_t pos = 0;
    for (size_t k : Chunks(wire.size(), chunk == SIZE_MAX ? wire.size() : chunk, seed)) {
        std::span<const uint8_t> piece = std::span<const uint8_t>(wire).subspan(pos, k);
        pos += k;
        while (!piece.empty()) {
            size_t used = 0;
            const auto st = d.Feed(piece, &used);
            piece = piece.subspan(used);
            if (last) *last = st;
            if (st == FpduDecoder::Status::Error) return out;
            if (st == FpduDecoder::Status::Segment)
                out.emplace_back(d.segment(), Bytes(d.segment().payload.begin(), d.segment().payload.end()));
        }
    }
    return out;
}

TEST(Fpdu, RoundTripsEveryMessageTypeUnderEveryChunking) {
    Bytes stream;
    for (const Bytes *f : {&kWrite, &kReadRequest, &kReadResponse, &kSendSeInv}) stream.insert(stream.end(), f->begin(), f->end());
    for (const auto &[name, chunk] : Chunkings()) {
        auto segs = DecodeAll(stream, chunk, FpduOptions{});
        ASSERT_EQ(segs.size(), 4u) << name;
        const Segment &w = segs[0].first;
        EXPECT_TRUE(w.tagged && w.last && w.opcode == Opcode::RdmaWrite) << name;
        EXPECT_EQ(w.stag, 0x11223344u);
        EXPECT_EQ(w.to, 0x0102030405060708u);
        EXPECT_EQ(segs[0].second, (Bytes{'h', 'i'}));
        const Segment &r = segs[1].first;
        EXPECT_EQ(r.opcode, Opcode::ReadRequest);
        EXPECT_EQ(r.qn, kQueueReadRequest);
        EXPECT_EQ(r.read.sink_stag, 0xaabbccddu);
        EXPECT_EQ(r.read.sink_to, 0x1000u);
        EXPECT_EQ(r.read.size, 0x2000u);
        EXPECT_EQ(r.read.source_stag, 0x01020304u);
        EXPECT_EQ(r.read.source_to, 0xffff000000000000u);
        EXPECT_EQ(r.header.size(), 46u);
        EXPECT_TRUE(segs[1].second.empty());
        EXPECT_TRUE(segs[2].first.tagged && !segs[2].first.last);
        EXPECT_EQ(segs[2].second, (Bytes{1, 2, 3}));
        const Segment &s = segs[3].first;
        EXPECT_EQ(s.opcode, Opcode::SendSolicitedInvalidate);
        EXPECT_EQ(s.invalidate_stag, 0x55667788u);
        EXPECT_EQ(s.msn, 7u);
        EXPECT_EQ(s.mo, 0x100u);
        EXPECT_FALSE(s.last);
        EXPECT_EQ(segs[3].second, (Bytes{'z'}));
    }
}

TEST(Fpdu, CrcIsCheckedWhenNegotiated) {
    for (const auto &[name, chunk] : Chunkings()) {
        auto ok = DecodeAll(kSendCrc, chunk, FpduOptions{true});
        ASSERT_EQ(ok.size(), 1u) << name;
        EXPECT_EQ(ok[0].second, (Bytes{'a', 'b', 'c', 'd'}));
    }
    for (size_t i = 0; i < kSendCrc.size(); ++i) {  // any flipped bit after the length field
        if (i < 2) continue;
        Bytes bad = kSendCrc;
        bad[i] ^= 0x10;
        FpduDecoder::Status st{};
        DecodeAll(bad, 1, FpduOptions{true}, &st);
        ASSERT_EQ(st, FpduDecoder::Status::Error) << "byte " << i;
    }
    FpduDecoder d(FpduOptions{true});
    Bytes bad = kSendCrc;
    bad[21] = 'X';
    size_t used = 0;
    ASSERT_EQ(d.Feed(bad, &used), FpduDecoder::Status::Error);
    EXPECT_EQ(d.fault().errc, Errc::FpduCrc);
    EXPECT_EQ(d.fault().code, (TerminateCode{Layer::Llp, etype::kLlpMpa, ecode::kLlpCrc}));
    // For the log: what the bad FPDU claimed to be (no header in the LLP Terminate).
    EXPECT_EQ(d.fault().segment_length, LoadBe16(kSendCrc.data()));
    ASSERT_EQ(d.fault().header_length, sizeof(UntaggedHeader));
    EXPECT_EQ(Bytes(d.fault().header, d.fault().header + d.fault().header_length),
              Bytes(kSendCrc.begin() + 2, kSendCrc.begin() + 2 + sizeof(UntaggedHeader)));
    EXPECT_FALSE(d.fault().has_ddp_header);
    // Without CRC negotiated the field is not checked (it is zero from us and siw).
    EXPECT_EQ(DecodeAll(kSendCrc, SIZE_MAX, FpduOptions{false}).size(), 1u);
}

TEST(Fpdu, ManyMessagesBackToBackWithCrcInRandomChunks) {
    Bytes stream;
    for (uint32_t i = 0; i < 200; ++i) {
        const Bytes p = Pattern(i * 13 % 300, static_cast<uint8_t>(i));
        if (i % 3 == 0)
            EncodeTagged(&stream, Opcode::RdmaWrite, i % 2, 7, i * 1000, p, true);
        else
            EncodeUntagged(&stream, Opcode::Send, true, 0, i, 0, 0, p, true);
    }
    for (uint32_t seed = 1; seed < 6; ++seed) {
        auto segs = DecodeAll(stream, 0, FpduOptions{true}, nullptr, seed);
        ASSERT_EQ(segs.size(), 200u);
        for (uint32_t i = 0; i < 200; ++i) EXPECT_EQ(segs[i].second, Pattern(i * 13 % 300, static_cast<uint8_t>(i)));
    }
}

TEST(Fpdu, KeepCopiesASegmentParsedInPlace) {
    Bytes input = kSendCrc;
    FpduDecoder d(FpduOptions{true});
    size_t used = 0;
    ASSERT_EQ(d.Feed(input, &used), FpduDecoder::Status::Segment);
    EXPECT_EQ(d.segment().payload.data(), input.data() + 20);  // parsed where it lay
    d.Keep();
    std::fill(input.begin(), input.end(), 0xee);
    EXPECT_EQ(Bytes(d.segment().payload.begin(), d.segment().payload.end()), (Bytes{'a', 'b', 'c', 'd'}));
    EXPECT_EQ(d.segment().header[0], 0x41);
}

TEST(Fpdu, BoundedWhileWaitingForALargeFpdu) {
    FpduDecoder d;
    const Bytes head = {0xff, 0xff, 0x41, 0x43};  // a 65535-byte ULPDU announced
    size_t used = 0;
    EXPECT_EQ(d.Feed(head, &used), FpduDecoder::Status::NeedMore);
    EXPECT_EQ(used, head.size());
    FpduDecoder small(FpduOptions{false, 1000});
    EXPECT_EQ(small.Feed(head, &used), FpduDecoder::Status::Error);
    EXPECT_EQ(small.fault().errc, Errc::FpduTooLong);
    EXPECT_EQ(used, 2u);  // refused on the length field alone
}

}  // namespace
