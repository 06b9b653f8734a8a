// MPA connection setup frames: the request the initiator sends and the reply
// (accept or reject) the responder answers with, as the first bytes of the
// TCP stream (RFC 5044 "MPA Request and Reply Frame Format"), with the
// enhanced connection establishment parameters of RFC 6581 (IRD, ORD, RTR).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "iwarp/status.h"
#include "iwarp/wire.h"

namespace iwarp {

struct MpaFrame {
    bool request = true;  // "MPA ID Req Frame" or "MPA ID Rep Frame"
    uint8_t revision = kMpaRevision2;
    bool markers = false;
    bool crc = false;
    bool reject = false;
    bool enhanced = false;       // revision 2 with the S bit: IRD/ORD lead the private data
    uint8_t reserved_bits = 0;   // Res bits as received (ignored, RFC 5044)
    // Enhanced parameters (meaningful when `enhanced`).
    uint16_t ird = 0;            // 14 bits
    uint16_t ord = 0;            // 14 bits
    bool peer_to_peer = false;   // A: an RTR message follows the reply
    uint8_t rtr = 0;             // kRtrSend | kRtrWrite | kRtrRead (B, C, D)
    std::vector<uint8_t> private_data;  // the ULP's private data (after the enhanced bytes)
};

// Largest ULP private data a frame can carry.
inline size_t MaxUlpPrivateData(bool enhanced) {
    return enhanced ? kMpaMaxUlpPrivateDataV2 : kMpaMaxPrivateData;
}

// Appends the frame's wire bytes. Returns false, appending nothing, if the
// private data does not fit or the revision is not 1 or 2.
bool EncodeMpaFrame(const MpaFrame &frame, std::vector<uint8_t> *out);

// Incremental decoder for one frame: feed it bytes as they arrive, split
// anywhere. It never consumes past the frame's end (the FPDU stream follows
// the reply directly) and never holds more than 20 + 512 bytes.
class MpaFrameDecoder {
public:
    enum class Expect : uint8_t { Request, Reply, Either };
    enum class Status : uint8_t { NeedMore, Done, Error };

    explicit MpaFrameDecoder(Expect expect = Expect::Either) : expect_(expect) {}

    // Consumes from `in`; *consumed says how much. Done and Error are sticky.
    Status Feed(std::span<const uint8_t> in, size_t *consumed);

    Status status() const { return status_; }
    const MpaFrame &frame() const { return frame_; }  // valid once Done
    Errc error() const { return error_; }

private:
    Status Fail(Errc e);
    Status Finish();

    Expect expect_;
    Status status_ = Status::NeedMore;
    Errc error_ = Errc::Ok;
    uint8_t header_[sizeof(MpaFrameHeader)] = {};
    size_t have_ = 0;          // header bytes so far
    size_t pd_length_ = 0;
    std::vector<uint8_t> pd_;  // raw private data so far
    MpaFrame frame_;
};

}  // namespace iwarp
