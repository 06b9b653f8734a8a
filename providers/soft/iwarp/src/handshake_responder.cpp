// The responder's side of MPA connection setup: request in, reply out.
#include <algorithm>

#include "iwarp/handshake.h"

namespace iwarp {

HandshakeStatus Responder::Feed(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    if (status_ == HandshakeStatus::RequestReceived && !in.empty()) {
        // The initiator sends nothing between its request and our reply.
        status_ = HandshakeStatus::Failed;
        error_ = Errc::MpaUnexpectedData;
        return status_;
    }
    if (status_ != HandshakeStatus::NeedMore) return status_;
    switch (decoder_.Feed(in, consumed)) {
    case MpaFrameDecoder::Status::NeedMore: return status_;
    case MpaFrameDecoder::Status::Error:
        status_ = HandshakeStatus::Failed;
        error_ = decoder_.error();
        return status_;
    case MpaFrameDecoder::Status::Done: break;
    }
    if (decoder_.frame().markers) {
        // Markers are not implemented: answer with a Reject (R set, M clear).
        MpaFrame reply = ReplyTemplate();
        reply.reject = true;
        EncodeMpaFrame(reply, &output_);
        status_ = HandshakeStatus::Failed;
        error_ = Errc::MpaMarkersRequested;
        return status_;
    }
    status_ = HandshakeStatus::RequestReceived;
    return status_;
}

MpaFrame Responder::ReplyTemplate() const {
    const MpaFrame &q = decoder_.frame();
    MpaFrame r;
    r.request = false;
    r.revision = std::min(q.revision, config_.revision == kMpaRevision1 ? kMpaRevision1 : kMpaRevision2);
    r.crc = q.crc || config_.crc;
    r.enhanced = r.revision >= kMpaRevision2 && q.enhanced && config_.enhanced;
    if (r.enhanced) {
        r.ird = std::min<uint16_t>(config_.ird, kV2IrdOrdMask);
        r.ord = std::min<uint16_t>(std::min<uint16_t>(config_.ord, kV2IrdOrdMask), q.ird);
    }
    return r;
}

std::vector<uint8_t> Responder::Accept(std::span<const uint8_t> private_data) {
    std::vector<uint8_t> out;
    if (status_ != HandshakeStatus::RequestReceived) return out;
    const MpaFrame &q = decoder_.frame();
    MpaFrame r = ReplyTemplate();
    r.private_data.assign(private_data.begin(), private_data.end());

    RtrType rtr = RtrType::None;
    if (r.enhanced && q.peer_to_peer) {
        uint8_t acceptable = q.rtr & config_.rtr_accept;
        if (r.ird == 0 || q.ord == 0) acceptable &= static_cast<uint8_t>(~kRtrRead);  // a Read RTR uses a credit
        rtr = ChooseRtr(acceptable);
        // Offered nothing we take: propose a zero-length Write, as siw does.
        if (rtr == RtrType::None) rtr = RtrType::Write;
        r.peer_to_peer = true;
        r.rtr = static_cast<uint8_t>(rtr);
    }
    if (!EncodeMpaFrame(r, &out)) {
        status_ = HandshakeStatus::Failed;
        error_ = Errc::MpaPrivateDataTooLong;
        return out;
    }
    Negotiated &n = negotiated_;
    n = Negotiated{};
    n.role = Role::Responder;
    n.revision = r.revision;
    n.enhanced = r.enhanced;
    n.crc = r.crc;
    n.rtr = rtr;
    n.ird = r.enhanced ? r.ird : config_.ird;
    n.ord = r.enhanced ? r.ord : config_.ord;
    n.hold_until_first_fpdu = rtr != RtrType::None || config_.responder_waits_for_first_fpdu;
    status_ = HandshakeStatus::Connected;
    return out;
}

std::vector<uint8_t> Responder::Reject(std::span<const uint8_t> private_data) {
    std::vector<uint8_t> out;
    if (status_ != HandshakeStatus::RequestReceived) return out;
    MpaFrame r = ReplyTemplate();
    r.reject = true;
    r.private_data.assign(private_data.begin(), private_data.end());
    if (!EncodeMpaFrame(r, &out)) {
        status_ = HandshakeStatus::Failed;
        error_ = Errc::MpaPrivateDataTooLong;
        return out;
    }
    status_ = HandshakeStatus::Rejected;
    error_ = Errc::MpaRejected;
    return out;
}

}  // namespace iwarp
