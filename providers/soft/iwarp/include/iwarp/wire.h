// iWARP on-the-wire layouts: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and
// RDMAP (RFC 5040). Every multi-byte field is big-endian on the wire; the
// structs below are byte arrays (alignment 1, no padding) so their sizes and
// offsets ARE the wire layout, pinned by static_assert. Read and write the
// fields with the helpers in bytes.h, never by casting to wider integers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iwarp {

// ---- MPA connection setup frames (RFC 5044 "MPA Request and Reply Frame Format", RFC 6581) ----
inline constexpr char kMpaKeyRequest[] = "MPA ID Req Frame";  // 4D 50 41 20 49 44 20 52 65 71 20 46 72 61 6D 65
inline constexpr char kMpaKeyReply[] = "MPA ID Rep Frame";    // ... 52 65 70 20 ...
inline constexpr size_t kMpaKeySize = 16;
static_assert(sizeof(kMpaKeyRequest) == kMpaKeySize + 1 && sizeof(kMpaKeyReply) == kMpaKeySize + 1);

// Flags byte: |M|C|R|S|Res(4)|. S ("enhanced") exists from revision 2 on
// (RFC 6581); Res is sent as zero and ignored on receive (RFC 5044).
inline constexpr uint8_t kMpaFlagMarkers = 0x80;
inline constexpr uint8_t kMpaFlagCrc = 0x40;
inline constexpr uint8_t kMpaFlagReject = 0x20;
inline constexpr uint8_t kMpaFlagEnhanced = 0x10;
inline constexpr uint8_t kMpaFlagsReserved = 0x0f;
inline constexpr uint8_t kMpaRevision1 = 1;
inline constexpr uint8_t kMpaRevision2 = 2;
inline constexpr uint16_t kMpaMaxPrivateData = 512;

struct MpaFrameHeader {
    uint8_t key[16];
    uint8_t flags;
    uint8_t revision;
    uint8_t pd_length[2];  // private data bytes that follow (<= 512)
};
static_assert(sizeof(MpaFrameHeader) == 20);
static_assert(offsetof(MpaFrameHeader, flags) == 16 && offsetof(MpaFrameHeader, revision) == 17);
static_assert(offsetof(MpaFrameHeader, pd_length) == 18);

// Enhanced connection establishment: the first 4 private data bytes.
//   |A|B|   IRD (14)   |C|D|   ORD (14)   |
// A: peer-to-peer (an RTR message follows the reply), B: zero-length Send
// RTR, C: zero-length RDMA Write RTR, D: zero-length RDMA Read RTR.
struct MpaV2Params {
    uint8_t ird[2];
    uint8_t ord[2];
};
static_assert(sizeof(MpaV2Params) == 4 && offsetof(MpaV2Params, ord) == 2);
inline constexpr uint16_t kV2PeerToPeer = 0x8000;  // in the IRD word
inline constexpr uint16_t kV2RtrSend = 0x4000;     // in the IRD word
inline constexpr uint16_t kV2RtrWrite = 0x8000;    // in the ORD word
inline constexpr uint16_t kV2RtrRead = 0x4000;     // in the ORD word
inline constexpr uint16_t kV2IrdOrdMask = 0x3fff;
inline constexpr uint16_t kMpaMaxUlpPrivateDataV2 = kMpaMaxPrivateData - sizeof(MpaV2Params);

// RTR message types as a bit set (negotiation) and as a single choice.
inline constexpr uint8_t kRtrSend = 0x1;
inline constexpr uint8_t kRtrWrite = 0x2;
inline constexpr uint8_t kRtrRead = 0x4;
enum class RtrType : uint8_t { None = 0, Send = kRtrSend, Write = kRtrWrite, Read = kRtrRead };

// ---- FPDU (RFC 5044 "FPDU Format"): |ULPDU length (16)| ULPDU | pad to 4 | CRC32c | ----
inline constexpr size_t kMpaLengthSize = 2;
inline constexpr size_t kMpaCrcSize = 4;
inline constexpr size_t kMaxUlpduLength = 0xffff;

// Wire size of an FPDU carrying `ulpdu` bytes: length field, ULPDU, pad, CRC.
constexpr size_t FpduSize(size_t ulpdu) {
    return (kMpaLengthSize + ulpdu + 3) / 4 * 4 + kMpaCrcSize;
}
static_assert(FpduSize(0) == 8 && FpduSize(14) == 20 && FpduSize(18) == 24 && FpduSize(19) == 28);

// ---- DDP (RFC 5041 §4 Header Format) and RDMAP (RFC 5040 §4 Header Format) control bytes ----
// DDP control: |T|L| Rsvd (4) | DV (2) |   RDMAP control: | RV (2) | Rsvd (2) | Opcode (4) |
inline constexpr uint8_t kDdpTagged = 0x80;
inline constexpr uint8_t kDdpLast = 0x40;
inline constexpr uint8_t kDdpReserved = 0x3c;
inline constexpr uint8_t kDdpVersionMask = 0x03;
inline constexpr uint8_t kDdpVersion = 1;
inline constexpr uint8_t kRdmapVersionMask = 0xc0;
inline constexpr uint8_t kRdmapVersionShift = 6;
inline constexpr uint8_t kRdmapVersion = 1;
inline constexpr uint8_t kRdmapReserved = 0x30;
inline constexpr uint8_t kRdmapOpcodeMask = 0x0f;

enum class Opcode : uint8_t {
    RdmaWrite = 0,
    ReadRequest = 1,
    ReadResponse = 2,
    Send = 3,
    SendInvalidate = 4,
    SendSolicited = 5,
    SendSolicitedInvalidate = 6,
    Terminate = 7,
};
inline constexpr uint8_t kMaxOpcode = 7;

// Untagged queue numbers (RFC 5040, "RDMA Message Definitions").
inline constexpr uint32_t kQueueSend = 0;
inline constexpr uint32_t kQueueReadRequest = 1;
inline constexpr uint32_t kQueueTerminate = 2;
inline constexpr uint32_t kQueueCount = 3;

struct TaggedHeader {  // RDMA Write, RDMA Read Response
    uint8_t ddp_ctrl;
    uint8_t rdmap_ctrl;
    uint8_t stag[4];
    uint8_t to[8];
};
static_assert(sizeof(TaggedHeader) == 14 && offsetof(TaggedHeader, to) == 6);

struct UntaggedHeader {  // Sends, Read Request, Terminate
    uint8_t ddp_ctrl;
    uint8_t rdmap_ctrl;
    uint8_t rsvd[4];  // Invalidate STag for the Send with Invalidate variants
    uint8_t qn[4];
    uint8_t msn[4];   // message sequence number, per queue, first message 1
    uint8_t mo[4];    // message offset of this segment's first byte
};
static_assert(sizeof(UntaggedHeader) == 18 && offsetof(UntaggedHeader, qn) == 6);
static_assert(offsetof(UntaggedHeader, msn) == 10 && offsetof(UntaggedHeader, mo) == 14);

struct ReadRequestHeader {  // RDMAP header carried as the Read Request's payload
    uint8_t sink_stag[4];
    uint8_t sink_to[8];
    uint8_t size[4];  // RDMA Read message size
    uint8_t source_stag[4];
    uint8_t source_to[8];
};
static_assert(sizeof(ReadRequestHeader) == 28 && offsetof(ReadRequestHeader, size) == 12);
static_assert(offsetof(ReadRequestHeader, source_stag) == 16 && offsetof(ReadRequestHeader, source_to) == 20);

// ---- Terminate (RFC 5040 "Terminate Header") ----
// Terminate Control: | Layer (4) | EType (4) | Error Code (8) |M|D|R| Rsvd (13) |
// then, when M: DDP Segment Length (16); when D: the terminated DDP header
// (14 tagged / 18 untagged); when R: the terminated RDMAP header (28, Read
// Request only).
struct TerminateControl {
    uint8_t layer_etype;
    uint8_t ecode;
    uint8_t hdrct;  // M D R flags and 5 reserved bits
    uint8_t rsvd;
};
static_assert(sizeof(TerminateControl) == 4);
inline constexpr uint8_t kTermHdrctM = 0x80;  // DDP Segment Length valid
inline constexpr uint8_t kTermHdrctD = 0x40;  // DDP header included
inline constexpr uint8_t kTermHdrctR = 0x20;  // RDMAP header included
inline constexpr size_t kTermSegmentLengthSize = 2;
inline constexpr size_t kMaxTerminatedHeaders =
    kTermSegmentLengthSize + sizeof(UntaggedHeader) + sizeof(ReadRequestHeader);
static_assert(kMaxTerminatedHeaders == 48);

// Error layers, types and codes (RFC 5040 "Terminate Header" tables, RFC 5041 and RFC 5044
// error sections, RFC 6581 for codes 0x05-0x07 of the LLP layer).
enum class Layer : uint8_t { Rdmap = 0, Ddp = 1, Llp = 2 };
namespace etype {
inline constexpr uint8_t kRdmapCatastrophic = 0x0, kRdmapProtection = 0x1, kRdmapOperation = 0x2;
inline constexpr uint8_t kDdpCatastrophic = 0x0, kDdpTagged = 0x1, kDdpUntagged = 0x2;
inline constexpr uint8_t kLlpMpa = 0x0;
}  // namespace etype
namespace ecode {
// RDMAP protection (etype 1) and operation (etype 2) errors
inline constexpr uint8_t kRdmapInvalidStag = 0x00, kRdmapBaseBounds = 0x01, kRdmapAccessRights = 0x02,
                         kRdmapStagNotAssociated = 0x03, kRdmapToWrap = 0x04, kRdmapVersion = 0x05,
                         kRdmapOpcode = 0x06, kRdmapCatastrophicStream = 0x07, kRdmapCatastrophicGlobal = 0x08,
                         kRdmapCannotInvalidate = 0x09, kRdmapUnspecified = 0xff;
// DDP tagged (etype 1)
inline constexpr uint8_t kDdpTInvalidStag = 0x00, kDdpTBaseBounds = 0x01, kDdpTStagNotAssociated = 0x02,
                         kDdpTToWrap = 0x03, kDdpTVersion = 0x04;
// DDP untagged (etype 2)
inline constexpr uint8_t kDdpUInvalidQn = 0x01, kDdpUNoBuffer = 0x02, kDdpUMsnRange = 0x03, kDdpUInvalidMo = 0x04,
                         kDdpUTooLong = 0x05, kDdpUVersion = 0x06;
// LLP / MPA (etype 0)
inline constexpr uint8_t kLlpCrc = 0x02, kLlpFraming = 0x03, kLlpBadRequestReply = 0x04,
                         kLlpLocalCatastrophic = 0x05, kLlpInsufficientIrd = 0x06, kLlpNoMatchingRtr = 0x07;
}  // namespace ecode

}  // namespace iwarp
