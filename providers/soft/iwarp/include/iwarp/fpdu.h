// FPDUs: one DDP segment (DDP + RDMAP headers and payload) framed by MPA
// with its length, pad and CRC32c (RFC 5044 "FPDU Format", RFC 5041 §4,
// RFC 5040 §4). Encoders append to a byte vector; the decoder takes the
// stream in arbitrary chunks and yields one validated segment at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "iwarp/status.h"
#include "iwarp/wire.h"

namespace iwarp {

struct ReadRequest {
    uint32_t sink_stag = 0;
    uint64_t sink_to = 0;
    uint32_t size = 0;
    uint32_t source_stag = 0;
    uint64_t source_to = 0;
};

// A decoded DDP segment. Spans point into the decoder's buffer or the
// caller's input; they are valid until the next Feed (or see Keep).
struct Segment {
    Opcode opcode = Opcode::Send;
    bool tagged = false;
    bool last = false;
    uint16_t ulpdu_length = 0;
    uint32_t stag = 0;  // tagged: Data Sink STag
    uint64_t to = 0;    // tagged: Data Sink Tagged Offset
    uint32_t qn = 0, msn = 0, mo = 0;  // untagged
    uint32_t invalidate_stag = 0;      // Send with Invalidate variants
    ReadRequest read;                  // Read Request
    std::span<const uint8_t> header;   // DDP header (+ RDMAP Read Request header) as received
    std::span<const uint8_t> payload;  // ULP data (empty for Read Request)
    // Its CRC did not match, handed on anyway (FpduOptions::
    // crc_failed_read_responses): a tagged Read Response, for the engine to
    // drop if it answers a zero-length Read of ours, else to fault on.
    bool crc_failed = false;
};

struct FpduOptions {
    bool crc = false;                     // negotiated at connection setup
    size_t max_ulpdu = kMaxUlpduLength;   // inbound limit (<= 65535)
    bool strict = true;                   // reject reserved bits (pad values are always ignored)
    // With CRC off: an RDMA Write, Read Response or Send FPDU whose payload
    // is at least this long and has not arrived whole is handed on in pieces
    // as its bytes arrive (Opened, then Piece), not gathered first, so its
    // payload can be placed once, or read from the stream straight into its
    // destination (Skip). 0: never.
    size_t piece_min = 0;
    // With CRC on: a well-formed tagged Read Response whose CRC does not
    // match is handed on marked crc_failed instead of failing the stream.
    // Linux 6.1 siw answers a zero-length Read that finds its transmitter
    // busy with the bytes of an earlier request's buffer, which the
    // application may already be rewriting, so their CRC can be wrong. Any
    // other FPDU with a bad CRC fails as always.
    bool crc_failed_read_responses = false;
};

// Validates a ULPDU as a DDP segment. On failure fills *fault and returns
// false. Checks everything knowable without connection state: versions,
// reserved bits (strict), opcode, T bit against opcode, queue number against
// opcode, Read Request and Terminate shape.
bool ParseSegment(std::span<const uint8_t> ulpdu, bool strict, Segment *seg, Fault *fault);

// ---- encoding: BeginFpdu, append headers and payload, FinishFpdu ----
size_t BeginFpdu(std::vector<uint8_t> *out, size_t ulpdu_length);  // returns the FPDU's start offset
void FinishFpdu(std::vector<uint8_t> *out, size_t start, bool crc);  // pad and CRC (zero when !crc)
void AppendTaggedHeader(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t stag, uint64_t to);
void AppendUntaggedHeader(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                          uint32_t rsvd = 0);
void AppendReadRequestHeader(std::vector<uint8_t> *out, const ReadRequest &rr);

// Whole FPDUs.
void EncodeTagged(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t stag, uint64_t to,
                  std::span<const uint8_t> payload, bool crc);
void EncodeUntagged(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                    uint32_t rsvd, std::span<const uint8_t> payload, bool crc);
void EncodeReadRequest(std::vector<uint8_t> *out, uint32_t msn, const ReadRequest &rr, bool crc);

// Incremental FPDU decoder. Memory is bounded by one FPDU of max_ulpdu.
class FpduDecoder {
public:
    // Opened: segment() is the header of a segment (payload empty) whose
    // piece_left() payload bytes follow, each run of them as a Piece:
    // segment() with `to` (tagged) or `mo` (untagged) at the piece, `payload`
    // its bytes, `last` only on the final piece of an L segment. The FPDU's pad and CRC are consumed
    // after the final piece (the pad is ignored).
    enum class Status : uint8_t { NeedMore, Segment, Error, Opened, Piece };

    explicit FpduDecoder(const FpduOptions &options = {}) : opt_(options) {}

    // Consumes bytes until one segment is complete (Segment), more are
    // needed (NeedMore, all consumed), or the stream is bad (Error, sticky).
    // A whole FPDU at the front of `in` is parsed in place without copying.
    Status Feed(std::span<const uint8_t> in, size_t *consumed);

    const Segment &segment() const { return seg_; }
    const Fault &fault() const { return fault_; }
    Status status() const { return status_; }
    const FpduOptions &options() const { return opt_; }

    // Copies the current segment into the decoder so its spans outlive the
    // caller's input buffer (until the next Feed).
    void Keep();

    // An Opened segment still has payload to come.
    bool open() const { return open_; }
    // Payload bytes of the open segment not yet handed on.
    size_t piece_left() const { return open_ ? piece_left_ : 0; }
    // Bytes to the end of the open FPDU (payload, pad and CRC).
    size_t open_left() const { return open_ ? piece_left_ + trailer_left_ : 0; }
    // The next `n` (<= piece_left()) payload bytes of the open segment, as
    // a Piece with no bytes (`payload` empty): what Skip would hand on.
    Segment PeekPiece(size_t n) const;
    // The caller took those `n` bytes from the stream itself (read straight
    // into their destination): the decoder moves past them.
    void Skip(size_t n);
    // Right after Opened, before any piece: take this FPDU back to be
    // gathered whole and handed on as one Segment (a Send with no receive
    // posted yet waits whole, as it would have without pieces).
    void Gather();

private:
    Status Parse(std::span<const uint8_t> fpdu);
    Status Fail(Errc e);
    Status CrcFail(std::span<const uint8_t> fpdu);
    Status Frame(std::span<const uint8_t> in, size_t *consumed);
    size_t HeaderEnd() const;
    bool Pieceable() const;
    Status Open();
    Status FeedOpen(std::span<const uint8_t> in, size_t *consumed);

    FpduOptions opt_;
    Status status_ = Status::NeedMore;
    std::vector<uint8_t> buf_;  // partial FPDU (or a kept one)
    size_t have_ = 0;
    size_t need_ = 0;           // whole FPDU size once the length is known
    std::span<const uint8_t> current_;  // the FPDU behind seg_
    Segment seg_;
    Fault fault_;
    // The open segment (Opened): its header stays in buf_ until it closes.
    bool open_ = false;
    Segment open_seg_;
    size_t piece_at_ = 0;        // payload bytes of the open segment handed on
    size_t piece_left_ = 0;      // payload bytes still to come
    size_t trailer_left_ = 0;    // then pad and CRC
};

}  // namespace iwarp
