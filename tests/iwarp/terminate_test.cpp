// Terminate messages (RFC 5040 "Terminate Header"): golden bytes for the
// three shapes (LLP error without headers; DDP error with the DDP header;
// RDMAP protection error on a Read Request with DDP and RDMAP headers), and
// lenient parsing of what peers actually send.
#include <gtest/gtest.h>

#include "iwarp/terminate.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

// Untagged Terminate header: DDP ctrl L|DV1 0x41, RDMAP ctrl RV1|op 7 0x47,
// reserved word, QN 2, MSN 1, MO 0.
const Bytes kTermHeader = {0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0};

Bytes Fpdu(uint16_t ulpdu, std::initializer_list<Bytes> parts, size_t pad) {
    Bytes b = {static_cast<uint8_t>(ulpdu >> 8), static_cast<uint8_t>(ulpdu)};
    b.insert(b.end(), kTermHeader.begin(), kTermHeader.end());
    for (const Bytes &p : parts) b.insert(b.end(), p.begin(), p.end());
    b.resize(b.size() + pad + 4, 0);  // pad, CRC off
    return b;
}

Fault FaultWith(TerminateCode code, const Bytes &header, bool rdmap, uint16_t segment_length) {
    Fault f;
    f.code = code;
    f.send_terminate = true;
    f.has_ddp_header = f.has_segment_length = !header.empty();
    f.has_rdmap_header = rdmap;
    f.segment_length = segment_length;
    f.header_length = static_cast<uint8_t>(header.size());
    std::copy(header.begin(), header.end(), f.header);
    return f;
}

const Bytes kWriteHeader = {0xc1, 0x40, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8};

TEST(Terminate, GoldenLlpCrcError) {
    // Control: layer LLP (2) << 4 | etype MPA (0) = 0x20, code 0x02, no flags.
    const Bytes want = Fpdu(22, {{0x20, 0x02, 0x00, 0x00}}, 0);
    Bytes got;
    EncodeTerminate(&got, FaultWith({Layer::Llp, 0, ecode::kLlpCrc}, {}, false, 0), 1, false);
    EXPECT_EQ(got, want);
}

TEST(Terminate, GoldenDdpTaggedErrorCarriesTheWriteHeader) {
    // Control 0x11 (DDP, tagged buffer), code 0x00 (invalid STag), M|D = 0xC0;
    // DDP segment length 16, then the 14-byte tagged header. ULPDU 38.
    const Bytes want = Fpdu(38, {{0x11, 0x00, 0xc0, 0x00}, {0x00, 0x10}, kWriteHeader}, 0);
    Bytes got;
    EncodeTerminate(&got, FaultWith({Layer::Ddp, etype::kDdpTagged, ecode::kDdpTInvalidStag}, kWriteHeader, false, 16),
                    1, false);
    EXPECT_EQ(got, want);
}

TEST(Terminate, GoldenReadRequestProtectionErrorCarriesBothHeaders) {
    Bytes rr;
    EncodeReadRequest(&rr, 3, ReadRequest{0x10, 0x20, 0x30, 0x40, 0x50}, false);
    const Bytes headers(rr.begin() + 2, rr.begin() + 2 + 46);
    // Control 0x01 (RDMAP, remote protection), code 0x01 (base or bounds),
    // M|D|R = 0xE0; segment length 46; 18 + 28 header bytes. ULPDU 70.
    const Bytes want = Fpdu(70, {{0x01, 0x01, 0xe0, 0x00}, {0x00, 0x2e}, headers}, 0);
    Bytes got;
    EncodeTerminate(&got, FaultWith({Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapBaseBounds}, headers, true, 46),
                    1, false);
    EXPECT_EQ(got, want);

    FpduDecoder d;
    size_t used = 0;
    ASSERT_EQ(d.Feed(got, &used), FpduDecoder::Status::Segment);
    EXPECT_EQ(d.segment().opcode, Opcode::Terminate);
    TerminateMessage m;
    ASSERT_TRUE(ParseTerminate(d.segment().payload, &m));
    EXPECT_EQ(m.code, (TerminateCode{Layer::Rdmap, etype::kRdmapProtection, ecode::kRdmapBaseBounds}));
    EXPECT_TRUE(m.m && m.d && m.r && m.has_ddp_header && m.has_rdmap_header);
    EXPECT_EQ(m.segment_length, 46);
    EXPECT_EQ(m.terminated.opcode, Opcode::ReadRequest);
    EXPECT_EQ(m.terminated.qn, kQueueReadRequest);
    EXPECT_EQ(m.terminated.msn, 3u);
    EXPECT_EQ(m.terminated.read.sink_stag, 0x10u);
    EXPECT_EQ(m.terminated.read.source_to, 0x50u);
}

TEST(Terminate, CrcCoversTheTerminateToo) {
    Bytes got;
    EncodeTerminate(&got, FaultWith({Layer::Llp, 0, ecode::kLlpFraming}, {}, false, 0), 1, true);
    FpduDecoder d(FpduOptions{true});
    size_t used = 0;
    EXPECT_EQ(d.Feed(got, &used), FpduDecoder::Status::Segment);
}

TEST(Terminate, ParsingIsLenientAboutOptionalParts) {
    TerminateMessage m;
    EXPECT_FALSE(ParseTerminate(Bytes{0x01, 0x02, 0x00}, &m));  // no full control word
    ASSERT_TRUE(ParseTerminate(Bytes{0x02, 0x05, 0x00, 0x00}, &m));
    EXPECT_EQ(m.code, (TerminateCode{Layer::Rdmap, etype::kRdmapOperation, ecode::kRdmapVersion}));
    EXPECT_FALSE(m.has_ddp_header);
    // D set but the header is cut short: reported absent, nothing read past the end.
    ASSERT_TRUE(ParseTerminate(Bytes{0x11, 0x00, 0xc0, 0x00, 0x00, 0x10, 0xc1}, &m));
    EXPECT_TRUE(m.d);
    EXPECT_FALSE(m.has_ddp_header);
    // R set for a protection error on a Send with only the Send header attached.
    Bytes siw = {0x01, 0x02, 0xe0, 0x00, 0x00, 0x16};
    Bytes send;
    EncodeUntagged(&send, Opcode::Send, true, 0, 9, 0, 0, Pattern(4), false);
    siw.insert(siw.end(), send.begin() + 2, send.begin() + 20);
    ASSERT_TRUE(ParseTerminate(siw, &m));
    EXPECT_TRUE(m.r && m.has_ddp_header);
    EXPECT_FALSE(m.has_rdmap_header);
    EXPECT_EQ(m.terminated.opcode, Opcode::Send);
    EXPECT_EQ(m.terminated.msn, 9u);
}

// Linux siw on x86 writes its control word with little-endian bit-fields:
// Layer and EType swapped within the first byte, M, D and R in the low bits
// of the third. Seen from siw 6.1 across providers: "layer 2, etype 1,
// code 2" for a Send that found no receive (DDP, untagged, no buffer), and
// "layer 1, etype 0" for a Read of an unknown STag (RDMAP, protection).
TEST(Terminate, SiwsBitFieldLayoutIsReadAsItMeansIt) {
    Bytes send;
    EncodeUntagged(&send, Opcode::Send, true, 0, 9, 0, 0, Pattern(4), false);
    // DDP (1), untagged (2), no buffer (2); M and D (0x01, 0x02) with the header.
    Bytes no_buffer = {0x21, 0x02, 0x03, 0x00, 0x00, 0x16};
    no_buffer.insert(no_buffer.end(), send.begin() + 2, send.begin() + 20);
    TerminateMessage m;
    ASSERT_TRUE(ParseTerminate(no_buffer, &m));
    EXPECT_TRUE(m.bit_fields);
    EXPECT_EQ(m.code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUNoBuffer}));
    EXPECT_TRUE(m.m && m.d && !m.r);
    ASSERT_TRUE(m.has_ddp_header);
    EXPECT_FALSE(m.terminated.tagged);
    EXPECT_EQ(m.terminated.qn, kQueueSend);
    EXPECT_EQ(m.terminated.msn, 9u);
    // No flag set: a pair RFC 5040 does not define ("LLP, 1"), whose swap it does.
    ASSERT_TRUE(ParseTerminate(Bytes{0x21, 0x02, 0x00, 0x00}, &m));
    EXPECT_TRUE(m.bit_fields);
    EXPECT_EQ(m.code.layer, Layer::Ddp);
    EXPECT_EQ(m.code.etype, etype::kDdpUntagged);
    // An RFC layout stays as it is, flags or not, defined pairs or not.
    ASSERT_TRUE(ParseTerminate(Bytes{0x12, 0x02, 0xc0, 0x00}, &m));
    EXPECT_FALSE(m.bit_fields);
    EXPECT_EQ(m.code, (TerminateCode{Layer::Ddp, etype::kDdpUntagged, ecode::kDdpUNoBuffer}));
    EXPECT_TRUE(m.m && m.d);
    ASSERT_TRUE(ParseTerminate(Bytes{0x10, 0x00, 0x00, 0x00}, &m));
    EXPECT_FALSE(m.bit_fields) << "DDP, local catastrophic is defined: taken as the RFC has it";
    ASSERT_TRUE(ParseTerminate(Bytes{0x33, 0x00, 0x00, 0x00}, &m));
    EXPECT_FALSE(m.bit_fields) << "undefined either way: as received";
}

}  // namespace
