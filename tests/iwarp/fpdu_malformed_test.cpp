// Every malformed-FPDU class the decoder rejects, with the error class and
// the Terminate code it maps to (RFC 5040/5041/5044 code tables).
#include <gtest/gtest.h>

#include "iwarp/bytes.h"
#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

Bytes Send(uint8_t ddp = 0x41, uint8_t rdmap = 0x43, uint32_t qn = 0, uint32_t rsvd = 0, size_t payload = 4) {
    Bytes b;
    EncodeUntagged(&b, Opcode::Send, true, qn, 1, 0, rsvd, Pattern(payload), false);
    b[2] = ddp;
    b[3] = rdmap;
    return b;
}

Bytes Write() {
    Bytes b;
    EncodeTagged(&b, Opcode::RdmaWrite, true, 5, 0x100, Pattern(2), false);  // ULPDU 16: 2 pad bytes
    return b;
}

Bytes ReadRequestBytes() {
    Bytes b;
    EncodeReadRequest(&b, 1, ReadRequest{1, 2, 3, 4, 5}, false);
    return b;
}

struct Case {
    const char *name;
    Bytes fpdu;
    Errc errc;
    TerminateCode code;
    bool headers = false;  // Terminate carries the DDP header
    bool send_terminate = true;
};

constexpr TerminateCode Llp(uint8_t c) { return {Layer::Llp, etype::kLlpMpa, c}; }
constexpr TerminateCode Ddp(uint8_t t, uint8_t c) { return {Layer::Ddp, t, c}; }
constexpr TerminateCode Rdmap(uint8_t t, uint8_t c) { return {Layer::Rdmap, t, c}; }

std::vector<Case> Cases() {
    std::vector<Case> v;
    Bytes tiny = {0x00, 0x0d, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // ULPDU 13 < 14
    v.push_back({"ulpdu shorter than any DDP header", tiny, Errc::FpduTooShort, Llp(ecode::kLlpFraming)});
    Bytes short_untagged;  // ULPDU 14: enough for a tagged header, not for the untagged one it claims
    EncodeTagged(&short_untagged, Opcode::RdmaWrite, true, 1, 1, {}, false);
    short_untagged[2] = 0x41;
    short_untagged[3] = 0x43;
    v.push_back({"untagged header cut short", short_untagged, Errc::FpduTooShort, Llp(ecode::kLlpFraming)});
    v.push_back({"DDP version 2, tagged", [] { Bytes b = Write(); b[2] = 0xc2; return b; }(), Errc::DdpVersion,
                 Ddp(etype::kDdpTagged, ecode::kDdpTVersion)});
    v.push_back({"DDP version 0, untagged", Send(0x40), Errc::DdpVersion, Ddp(etype::kDdpUntagged, ecode::kDdpUVersion)});
    v.push_back({"DDP reserved bit", Send(0x41 | 0x08), Errc::DdpReserved, Ddp(etype::kDdpCatastrophic, 0)});
    v.push_back({"RDMAP version 2", Send(0x41, 0x83), Errc::RdmapVersion,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapVersion)});
    v.push_back({"RDMAP version 0", Send(0x41, 0x03), Errc::RdmapVersion,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapVersion)});
    v.push_back({"RDMAP reserved bits", Send(0x41, 0x43 | 0x20), Errc::RdmapReserved,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    for (uint8_t op = 8; op < 16; ++op)
        v.push_back({"opcode 8..15", Send(0x41, static_cast<uint8_t>(0x40 | op)), Errc::RdmapOpcode,
                     Rdmap(etype::kRdmapOperation, ecode::kRdmapOpcode)});
    v.push_back({"Send with T set", Send(0xc1, 0x43), Errc::RdmapOpcode, Rdmap(etype::kRdmapOperation, ecode::kRdmapOpcode)});
    v.push_back({"Write without T", [] { Bytes b = Send(); b[3] = 0x40; return b; }(), Errc::RdmapOpcode,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapOpcode)});
    v.push_back({"Read Response without T", Send(0x41, 0x42), Errc::RdmapOpcode,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapOpcode)});
    v.push_back({"Send on queue 1", Send(0x41, 0x43, 1), Errc::DdpQueueNumber,
                 Ddp(etype::kDdpUntagged, ecode::kDdpUInvalidQn), true});
    v.push_back({"Send on queue 3", Send(0x41, 0x43, 3), Errc::DdpQueueNumber,
                 Ddp(etype::kDdpUntagged, ecode::kDdpUInvalidQn), true});
    v.push_back({"Read Request on queue 0", [] { Bytes b = ReadRequestBytes(); b[11] = 0; return b; }(),
                 Errc::DdpQueueNumber, Ddp(etype::kDdpUntagged, ecode::kDdpUInvalidQn), true});
    v.push_back({"Terminate on queue 0", Send(0x41, 0x47, 0, 0, 8), Errc::DdpQueueNumber,
                 Ddp(etype::kDdpUntagged, ecode::kDdpUInvalidQn), true});
    v.push_back({"Send reserved word set", Send(0x41, 0x43, 0, 0x1234), Errc::RdmapReserved,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    v.push_back({"Read Request not last", [] { Bytes b = ReadRequestBytes(); b[2] = 0x01; return b; }(),
                 Errc::ReadRequestShape, Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    v.push_back({"Read Request with MO", [] { Bytes b = ReadRequestBytes(); b[19] = 4; return b; }(),
                 Errc::ReadRequestShape, Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    Bytes rr_short;
    EncodeUntagged(&rr_short, Opcode::ReadRequest, true, kQueueReadRequest, 1, 0, 0, Pattern(27), false);
    v.push_back({"Read Request header 27 bytes", rr_short, Errc::ReadRequestShape,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    Bytes rr_long;
    EncodeUntagged(&rr_long, Opcode::ReadRequest, true, kQueueReadRequest, 1, 0, 0, Pattern(29), false);
    v.push_back({"Read Request header 29 bytes", rr_long, Errc::ReadRequestShape,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), true});
    Bytes term_short;
    EncodeUntagged(&term_short, Opcode::Terminate, true, kQueueTerminate, 1, 0, 0, Pattern(3), false);
    v.push_back({"Terminate without its control word", term_short, Errc::TerminateShape,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), false, false});
    Bytes term_partial;
    EncodeUntagged(&term_partial, Opcode::Terminate, false, kQueueTerminate, 1, 0, 0, Pattern(4), false);
    v.push_back({"Terminate not last", term_partial, Errc::TerminateShape,
                 Rdmap(etype::kRdmapOperation, ecode::kRdmapUnspecified), false, false});
    return v;
}

TEST(FpduMalformed, EveryClassIsRejectedWithItsTerminateCode) {
    for (const Case &c : Cases()) {
        for (const auto &[name, chunk] : Chunkings()) {
            FpduDecoder d;
            size_t pos = 0;
            auto st = FpduDecoder::Status::NeedMore;
            for (size_t k : Chunks(c.fpdu.size(), chunk == SIZE_MAX ? c.fpdu.size() : chunk, 9)) {
                size_t used = 0;
                st = d.Feed(std::span<const uint8_t>(c.fpdu).subspan(pos, k), &used);
                pos += used;
                if (st != FpduDecoder::Status::NeedMore) break;
            }
            ASSERT_EQ(st, FpduDecoder::Status::Error) << c.name << " / " << name;
            EXPECT_EQ(d.fault().errc, c.errc) << c.name << ": " << ErrcName(d.fault().errc);
            EXPECT_EQ(d.fault().code, c.code) << c.name;
            EXPECT_EQ(d.fault().send_terminate, c.send_terminate) << c.name;
            EXPECT_EQ(d.fault().has_ddp_header, c.headers) << c.name;
            if (c.headers) {
                EXPECT_EQ(d.fault().segment_length, (c.fpdu[0] << 8) | c.fpdu[1]) << c.name;
                EXPECT_EQ(d.fault().header[0], c.fpdu[2]) << c.name;
            }
            // Sticky: nothing more is consumed.
            size_t used = 1;
            EXPECT_EQ(d.Feed(c.fpdu, &used), FpduDecoder::Status::Error);
            EXPECT_EQ(used, 0u);
        }
    }
}

TEST(FpduMalformed, LenientModeAcceptsReservedBits) {
    FpduOptions lenient;
    lenient.strict = false;
    for (Bytes b : {Send(0x41 | 0x08), Send(0x41, 0x43 | 0x10), Send(0x41, 0x43, 0, 0x1234)}) {
        FpduDecoder d(lenient);
        size_t used = 0;
        EXPECT_EQ(d.Feed(b, &used), FpduDecoder::Status::Segment);
    }
}

// RFC 5044: the sender zeroes the pad, the receiver ignores it (CRC aside).
// Linux 6.1 siw with CRC on sends non-zero pad, its CRC computed over it.
TEST(FpduMalformed, PadValuesAreIgnoredButCoveredByTheCrc) {
    for (bool strict : {true, false}) {
        FpduOptions o;
        o.strict = strict;
        Bytes w = Write();  // ULPDU 16: pad at [18], [19]
        w[18] = 9;
        w[19] = 0xff;
        FpduDecoder d(o);
        size_t used = 0;
        EXPECT_EQ(d.Feed(w, &used), FpduDecoder::Status::Segment) << strict;
        EXPECT_EQ(used, w.size());
        EXPECT_EQ(d.segment().payload.size(), 2u);

        Bytes c;  // with CRC: computed over the non-zero pad, accepted
        EncodeTagged(&c, Opcode::RdmaWrite, true, 5, 0x100, Pattern(2), true);
        ASSERT_EQ(c.size(), 24u);
        c[18] = 0x23, c[19] = 0x76;
        StoreLe32(c.data() + 20, Crc32c(c.data(), 20));
        o.crc = true;
        FpduDecoder dc(o);
        EXPECT_EQ(dc.Feed(c, &used), FpduDecoder::Status::Segment) << strict;
        c[19] = 0x77;  // a pad byte changed after the CRC: refused
        FpduDecoder bad(o);
        EXPECT_EQ(bad.Feed(c, &used), FpduDecoder::Status::Error);
        EXPECT_EQ(bad.fault().errc, Errc::FpduCrc);
    }
}

TEST(FpduMalformed, SendWithInvalidateUsesTheReservedWord) {
    Bytes b;
    EncodeUntagged(&b, Opcode::SendInvalidate, true, 0, 1, 0, 0xabcdef01, Pattern(1), false);
    FpduDecoder d;
    size_t used = 0;
    ASSERT_EQ(d.Feed(b, &used), FpduDecoder::Status::Segment);
    EXPECT_EQ(d.segment().invalidate_stag, 0xabcdef01u);
}

}  // namespace
