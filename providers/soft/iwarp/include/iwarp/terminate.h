// Terminate messages (RFC 5040 "Terminate Header"): the last FPDU of a
// stream that failed, sent untagged on queue 2. The control word carries the
// layer, error type and code; the M, D and R flags say whether the DDP
// segment length, the terminated DDP header and the terminated RDMAP header
// (Read Request only) follow.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "iwarp/fpdu.h"
#include "iwarp/status.h"

namespace iwarp {

// Appends the Terminate FPDU for `fault` (its code and terminated headers).
void EncodeTerminate(std::vector<uint8_t> *out, const Fault &fault, uint32_t msn, bool crc);

// What a received Terminate says. Parsing is lenient about the optional
// parts (peers differ: Linux siw sets R with only a Send header attached):
// anything incomplete is reported absent, never read past the payload.
struct TerminateMessage {
    TerminateCode code{};
    bool m = false, d = false, r = false;  // flags as received
    bool bit_fields = false;               // laid out as Linux siw does on x86 (ParseTerminate)
    uint16_t segment_length = 0;           // valid if m and the field is present
    bool has_ddp_header = false;
    bool has_rdmap_header = false;
    Segment terminated;                    // fields of the terminated headers (spans empty)
};

// Parses a Terminate segment's payload (after the untagged DDP header).
// Returns false only if the Terminate Control itself is missing.
bool ParseTerminate(std::span<const uint8_t> payload, TerminateMessage *msg);

}  // namespace iwarp
