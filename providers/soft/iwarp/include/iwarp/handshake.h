// MPA connection setup as two state machines, pure logic: the initiator
// (sends the request, reads the reply) and the responder (reads the request,
// answers accept or reject). They consume exactly the handshake bytes; what
// follows on the stream belongs to the Engine, built from negotiated().
//
// Negotiation (RFC 5044, RFC 6581):
//   revision  the lower of the two; revision 2 with the enhanced bit carries
//             IRD/ORD and the RTR choice in the first 4 private data bytes
//   CRC       on when either side asks (the reply's C bit is the outcome)
//   markers   refused: a request asking for them gets a Reject reply
//   IRD/ORD   responder ORD <= initiator IRD; initiator ORD <= responder IRD;
//             a responder ORD above the initiator's IRD fails the connection
//             with a Terminate (LLP, "insufficient IRD")
//   RTR       peer-to-peer mode: the initiator offers zero-length Write, Read
//             and/or Send, the responder picks one (Write > Read > Send); the
//             initiator sends it as its first FPDU and the responder sends
//             nothing before it has arrived (see Engine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "iwarp/mpa.h"
#include "iwarp/status.h"
#include "iwarp/wire.h"

namespace iwarp {

enum class Role : uint8_t { Initiator, Responder };

struct MpaConfig {
    uint8_t revision = kMpaRevision2;
    bool enhanced = true;                            // RFC 6581 IRD/ORD exchange (revision 2)
    bool peer_to_peer = true;                        // initiator: ask for the RTR exchange
    uint8_t rtr_offer = kRtrWrite | kRtrRead;        // initiator: RTR types proposed (as siw)
    uint8_t rtr_accept = kRtrWrite | kRtrRead | kRtrSend;  // responder: types it will take
    bool crc = false;                                // ask for / insist on CRC (siw's default is off)
    uint16_t ird = 16;                               // inbound Read Requests we can queue (<= 0x3fff)
    uint16_t ord = 16;                               // outbound Read Requests we want in flight
    bool responder_waits_for_first_fpdu = true;      // RFC 5044: the responder sends second
};

// The outcome of a successful handshake, everything the Engine needs.
struct Negotiated {
    Role role = Role::Initiator;
    uint8_t revision = kMpaRevision2;
    bool enhanced = false;
    bool crc = false;
    RtrType rtr = RtrType::None;
    uint32_t ird = 0;  // inbound Read Requests this side accepts outstanding
    uint32_t ord = 0;  // outbound Read Requests this side may have outstanding
    bool hold_until_first_fpdu = false;  // responder: transmit nothing before the first inbound FPDU
};

enum class HandshakeStatus : uint8_t { NeedMore, RequestReceived, Connected, Rejected, Failed };

// Picks one RTR type from a set (Write > Read > Send), None if empty.
RtrType ChooseRtr(uint8_t set);

class Initiator {
public:
    Initiator(const MpaConfig &config, std::span<const uint8_t> private_data);

    // The request frame to send first; empty if the configuration is
    // invalid (status() is then Failed, error() says why).
    const std::vector<uint8_t> &request() const { return request_; }

    // Feeds reply bytes; stops at the end of the reply frame (later bytes
    // are FPDUs for the Engine). Connected, Rejected and Failed are final.
    HandshakeStatus Feed(std::span<const uint8_t> in, size_t *consumed);

    HandshakeStatus status() const { return status_; }
    Errc error() const { return error_; }
    const Negotiated &negotiated() const { return negotiated_; }
    const MpaFrame &reply() const { return decoder_.frame(); }
    std::span<const uint8_t> peer_private_data() const { return decoder_.frame().private_data; }

    // Bytes to send after a failure (a Terminate), or nothing.
    std::vector<uint8_t> TakeOutput() { return std::move(output_); }

private:
    HandshakeStatus Fail(Errc e, bool terminate, bool crc);
    HandshakeStatus Evaluate(const MpaFrame &reply);

    MpaConfig config_;
    MpaFrame sent_;
    std::vector<uint8_t> request_;
    MpaFrameDecoder decoder_{MpaFrameDecoder::Expect::Reply};
    HandshakeStatus status_ = HandshakeStatus::NeedMore;
    Errc error_ = Errc::Ok;
    Negotiated negotiated_;
    std::vector<uint8_t> output_;
};

class Responder {
public:
    explicit Responder(const MpaConfig &config) : config_(config) {}

    // Feeds request bytes: RequestReceived once the request is in (the
    // consumer then calls Accept or Reject), Failed on a bad request (with a
    // Reject reply in TakeOutput where one can be formed, e.g. markers).
    // Any byte after the request and before the reply is a protocol error.
    HandshakeStatus Feed(std::span<const uint8_t> in, size_t *consumed);

    const MpaFrame &request() const { return decoder_.frame(); }
    std::span<const uint8_t> peer_private_data() const { return decoder_.frame().private_data; }

    // The reply frames. Empty (and status Failed) if called out of state or
    // with private data over the limit. After Accept the status is Connected
    // and negotiated() is valid; after Reject it is Rejected.
    std::vector<uint8_t> Accept(std::span<const uint8_t> private_data);
    std::vector<uint8_t> Reject(std::span<const uint8_t> private_data);

    // The IRD/ORD to answer with (the consumer's choice at Accept time; the
    // ORD is still capped at the initiator's IRD).
    void SetReadLimits(uint16_t ird, uint16_t ord) {
        config_.ird = ird;
        config_.ord = ord;
    }

    HandshakeStatus status() const { return status_; }
    Errc error() const { return error_; }
    const Negotiated &negotiated() const { return negotiated_; }
    std::vector<uint8_t> TakeOutput() { return std::move(output_); }

private:
    MpaFrame ReplyTemplate() const;

    MpaConfig config_;
    MpaFrameDecoder decoder_{MpaFrameDecoder::Expect::Request};
    HandshakeStatus status_ = HandshakeStatus::NeedMore;
    Errc error_ = Errc::Ok;
    Negotiated negotiated_;
    std::vector<uint8_t> output_;
};

}  // namespace iwarp
