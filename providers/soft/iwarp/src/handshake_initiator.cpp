// The initiator's side of MPA connection setup: request out, reply in,
// negotiation checked against what was asked for.
#include <algorithm>

#include "iwarp/handshake.h"
#include "iwarp/terminate.h"

namespace iwarp {

RtrType ChooseRtr(uint8_t set) {
    if (set & kRtrWrite) return RtrType::Write;
    if (set & kRtrRead) return RtrType::Read;
    if (set & kRtrSend) return RtrType::Send;
    return RtrType::None;
}

Initiator::Initiator(const MpaConfig &config, std::span<const uint8_t> private_data) : config_(config) {
    sent_.request = true;
    sent_.revision = config.revision;
    sent_.crc = config.crc;
    sent_.enhanced = config.revision >= kMpaRevision2 && config.enhanced;
    if (sent_.enhanced) {
        sent_.ird = std::min<uint16_t>(config.ird, kV2IrdOrdMask);
        sent_.ord = std::min<uint16_t>(config.ord, kV2IrdOrdMask);
        uint8_t offer = config.rtr_offer & (kRtrSend | kRtrWrite | kRtrRead);
        if (sent_.ord == 0) offer &= static_cast<uint8_t>(~kRtrRead);  // a Read RTR needs an ORD credit
        sent_.peer_to_peer = config.peer_to_peer && offer != 0;
        sent_.rtr = sent_.peer_to_peer ? offer : 0;
    }
    sent_.private_data.assign(private_data.begin(), private_data.end());
    if (!EncodeMpaFrame(sent_, &request_)) {
        const bool bad_rev = config.revision != kMpaRevision1 && config.revision != kMpaRevision2;
        status_ = HandshakeStatus::Failed;
        error_ = bad_rev ? Errc::MpaBadRevision : Errc::MpaPrivateDataTooLong;
    }
}

HandshakeStatus Initiator::Fail(Errc e, bool terminate, bool crc) {
    status_ = HandshakeStatus::Failed;
    error_ = e;
    if (terminate) {
        Fault f;
        f.errc = e;
        f.code = TerminateCodeFor(e);
        f.send_terminate = true;
        EncodeTerminate(&output_, f, 1, crc);  // the first message on the Terminate queue
    }
    return status_;
}

HandshakeStatus Initiator::Feed(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    if (status_ != HandshakeStatus::NeedMore) return status_;
    switch (decoder_.Feed(in, consumed)) {
    case MpaFrameDecoder::Status::NeedMore: return status_;
    case MpaFrameDecoder::Status::Error:
        // A wrong key is answered with a Terminate (as siw); the rest just closes.
        return Fail(decoder_.error(), decoder_.error() == Errc::MpaBadKey, false);
    case MpaFrameDecoder::Status::Done: break;
    }
    return Evaluate(decoder_.frame());
}

HandshakeStatus Initiator::Evaluate(const MpaFrame &r) {
    if (r.revision > sent_.revision) return Fail(Errc::MpaBadRevision, true, r.crc);
    if (r.reject) {
        status_ = HandshakeStatus::Rejected;
        error_ = Errc::MpaRejected;
        return status_;
    }
    // Markers we never asked for; a CRC we asked for must be echoed.
    if (r.markers || (sent_.crc && !r.crc)) return Fail(Errc::MpaBadReplyFlags, true, r.crc);

    Negotiated &n = negotiated_;
    n = Negotiated{};
    n.role = Role::Initiator;
    n.revision = r.revision;
    n.crc = r.crc;
    n.ird = sent_.enhanced ? sent_.ird : config_.ird;
    n.ord = sent_.enhanced ? sent_.ord : config_.ord;
    if (sent_.enhanced && r.revision >= kMpaRevision2) {
        // A revision 2 responder must answer an enhanced request in kind.
        if (!r.enhanced) return Fail(Errc::MpaBadReplyFlags, true, r.crc);
        n.enhanced = true;
        if (r.ord > sent_.ird) return Fail(Errc::MpaInsufficientIrd, true, r.crc);
        n.ord = std::min<uint32_t>(sent_.ord, r.ird);
        if (sent_.peer_to_peer && r.peer_to_peer) {
            // Take the responder's pick even if we did not offer it (siw answers
            // Write when offered neither Write nor Read): we can send them all.
            n.rtr = ChooseRtr(r.rtr);
            if (n.rtr == RtrType::None) return Fail(Errc::MpaNoMatchingRtr, true, r.crc);
            if (n.rtr == RtrType::Read && (r.ird == 0 || n.ord == 0))
                return Fail(Errc::MpaNoMatchingRtr, true, r.crc);
        }
    }
    // A revision 1 reply to a revision 2 request: the responder does not do
    // enhanced establishment; carry on without IRD/ORD exchange or RTR.
    status_ = HandshakeStatus::Connected;
    return status_;
}

}  // namespace iwarp
