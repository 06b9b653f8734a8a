// What went wrong, in one vocabulary for the decoders, the handshake and the
// engine: an error class (Errc, with a stable name for logs and tests), the
// Terminate error code it maps to, and the offending headers the Terminate
// message carries back to the peer.
#pragma once

#include <cstdint>

#include "iwarp/wire.h"

namespace iwarp {

enum class Errc : uint8_t {
    Ok = 0,
    // MPA request/reply frames (connection setup)
    MpaBadKey,               // not "MPA ID Req Frame" / "MPA ID Rep Frame" where one was due
    MpaBadRevision,          // revision other than 1 or 2, or a reply newer than the request
    MpaPrivateDataTooLong,   // PD_Length > 512, or local private data over the limit
    MpaEnhancedTooShort,     // enhanced bit set but fewer than 4 private data bytes
    MpaMarkersRequested,     // markers are refused (the responder replies with Reject)
    MpaUnexpectedData,       // bytes after a request before the reply was sent
    MpaRejected,             // the responder set R (not a protocol error: an answer)
    MpaBadReplyFlags,        // reply with markers, without CRC we asked for, or not enhanced
    MpaInsufficientIrd,      // responder's ORD above our IRD (RFC 6581)
    MpaNoMatchingRtr,        // no acceptable RTR type, or the first FPDU is not the RTR
    // FPDU framing (MPA)
    FpduTooShort,            // ULPDU shorter than the DDP header it must carry
    FpduTooLong,             // ULPDU longer than the configured maximum
    FpduCrc,                 // CRC32c mismatch
    // DDP / RDMAP header validation
    DdpVersion,
    DdpReserved,             // reserved DDP control bits set (strict)
    RdmapVersion,
    RdmapReserved,           // reserved RDMAP control bits or reserved header field set (strict)
    RdmapOpcode,             // opcode 8..15, or T bit not matching the opcode
    DdpQueueNumber,          // QN not the one the opcode uses
    DdpMessageOffset,        // MO not the next byte of the message (or non-zero where it must be)
    DdpMsnRange,             // MSN outside the valid window, or out of order
    DdpNoBuffer,             // untagged message with no receive buffer (or IRD exhausted)
    DdpMessageTooLong,       // message longer than the receive buffer
    ReadRequestShape,        // Read Request not one whole 46-byte segment
    TerminateShape,          // Terminate not one whole segment with consistent header flags
    // tagged placement
    TaggedInvalidStag,
    TaggedBaseBounds,
    TaggedAccessRights,
    TaggedStagNotAssociated,
    TaggedToWrap,
    UnexpectedReadResponse,  // Read Response with no outstanding Read
    CannotInvalidate,        // Send with Invalidate naming an STag that cannot be invalidated
    LocalFetchFailed,        // source memory of a Read Response vanished after the check
    ReceiveBufferGone,       // an inbound Send's receive buffer is no longer usable (deregistered)
    // peer and local state
    TerminateReceived,       // the peer sent a Terminate
    LocalAbort,              // the consumer failed the connection
};

const char *ErrcName(Errc e);

// The Terminate Control's layer, error type and error code.
struct TerminateCode {
    Layer layer = Layer::Rdmap;
    uint8_t etype = 0;
    uint8_t ecode = 0;
    bool operator==(const TerminateCode &) const = default;
};

// A protocol error detected on receive, with what the Terminate reports.
struct Fault {
    Errc errc = Errc::Ok;
    TerminateCode code{};
    bool send_terminate = false;  // false: drop the connection without one (e.g. a Terminate arrived)
    // Terminated headers (wire bytes): DDP header, then the RDMAP Read Request header.
    bool has_segment_length = false;  // Terminate M flag
    bool has_ddp_header = false;      // Terminate D flag
    bool has_rdmap_header = false;    // Terminate R flag
    uint16_t segment_length = 0;      // DDP segment (MPA ULPDU) length
    uint8_t header_length = 0;
    uint8_t header[sizeof(UntaggedHeader) + sizeof(ReadRequestHeader)] = {};

    explicit operator bool() const { return errc != Errc::Ok; }
};

// The Terminate code for an error class. `tagged` selects the DDP etype for
// DdpVersion; `read_source` maps placement errors to RDMAP protection errors
// (Read Request source checks) instead of DDP tagged buffer errors.
TerminateCode TerminateCodeFor(Errc e, bool tagged = false, bool read_source = false);

}  // namespace iwarp
