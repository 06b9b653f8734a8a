// MPA request/reply frame encoding and incremental decoding.
#include "iwarp/mpa.h"

#include <algorithm>
#include <cstring>

#include "iwarp/bytes.h"

namespace iwarp {

bool EncodeMpaFrame(const MpaFrame &f, std::vector<uint8_t> *out) {
    if (f.revision != kMpaRevision1 && f.revision != kMpaRevision2) return false;
    const bool enhanced = f.enhanced && f.revision >= kMpaRevision2;
    if (f.private_data.size() > MaxUlpPrivateData(enhanced)) return false;

    MpaFrameHeader h{};
    std::memcpy(h.key, f.request ? kMpaKeyRequest : kMpaKeyReply, kMpaKeySize);
    h.flags = static_cast<uint8_t>((f.markers ? kMpaFlagMarkers : 0) | (f.crc ? kMpaFlagCrc : 0) |
                                   (f.reject ? kMpaFlagReject : 0) | (enhanced ? kMpaFlagEnhanced : 0));
    h.revision = f.revision;
    const size_t pd_length = f.private_data.size() + (enhanced ? sizeof(MpaV2Params) : 0);
    StoreBe16(h.pd_length, static_cast<uint16_t>(pd_length));

    const auto *hb = reinterpret_cast<const uint8_t *>(&h);
    out->insert(out->end(), hb, hb + sizeof h);
    if (enhanced) {
        MpaV2Params v{};
        uint16_t ird = f.ird & kV2IrdOrdMask, ord = f.ord & kV2IrdOrdMask;
        if (f.peer_to_peer) ird |= kV2PeerToPeer;
        if (f.rtr & kRtrSend) ird |= kV2RtrSend;
        if (f.rtr & kRtrWrite) ord |= kV2RtrWrite;
        if (f.rtr & kRtrRead) ord |= kV2RtrRead;
        StoreBe16(v.ird, ird);
        StoreBe16(v.ord, ord);
        const auto *vb = reinterpret_cast<const uint8_t *>(&v);
        out->insert(out->end(), vb, vb + sizeof v);
    }
    out->insert(out->end(), f.private_data.begin(), f.private_data.end());
    return true;
}

MpaFrameDecoder::Status MpaFrameDecoder::Fail(Errc e) {
    error_ = e;
    status_ = Status::Error;
    pd_.clear();
    return status_;
}

MpaFrameDecoder::Status MpaFrameDecoder::Feed(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    if (status_ != Status::NeedMore) return status_;
    size_t pos = 0;
    while (have_ < sizeof header_ && pos < in.size()) {
        header_[have_++] = in[pos++];
        if (have_ == kMpaKeySize) {  // the key decides early: no need to wait for more bytes
            const bool req = std::memcmp(header_, kMpaKeyRequest, kMpaKeySize) == 0;
            const bool rep = std::memcmp(header_, kMpaKeyReply, kMpaKeySize) == 0;
            if ((!req && !rep) || (req && expect_ == Expect::Reply) || (rep && expect_ == Expect::Request)) {
                *consumed = pos;
                return Fail(Errc::MpaBadKey);
            }
            frame_.request = req;
        } else if (have_ == offsetof(MpaFrameHeader, revision) + 1) {
            const uint8_t rev = header_[offsetof(MpaFrameHeader, revision)];
            if (rev != kMpaRevision1 && rev != kMpaRevision2) {
                *consumed = pos;
                return Fail(Errc::MpaBadRevision);
            }
        } else if (have_ == sizeof header_) {
            pd_length_ = LoadBe16(header_ + offsetof(MpaFrameHeader, pd_length));
            if (pd_length_ > kMpaMaxPrivateData) {
                *consumed = pos;
                return Fail(Errc::MpaPrivateDataTooLong);
            }
            pd_.reserve(pd_length_);
        }
    }
    if (have_ == sizeof header_) {
        const size_t take = std::min(pd_length_ - pd_.size(), in.size() - pos);
        pd_.insert(pd_.end(), in.begin() + static_cast<ptrdiff_t>(pos),
                   in.begin() + static_cast<ptrdiff_t>(pos + take));
        pos += take;
    }
    *consumed = pos;
    if (have_ == sizeof header_ && pd_.size() == pd_length_) return Finish();
    return status_;
}

MpaFrameDecoder::Status MpaFrameDecoder::Finish() {
    const uint8_t flags = header_[offsetof(MpaFrameHeader, flags)];
    frame_.revision = header_[offsetof(MpaFrameHeader, revision)];
    frame_.markers = flags & kMpaFlagMarkers;
    frame_.crc = flags & kMpaFlagCrc;
    frame_.reject = flags & kMpaFlagReject;
    frame_.enhanced = frame_.revision >= kMpaRevision2 && (flags & kMpaFlagEnhanced);
    frame_.reserved_bits =
        static_cast<uint8_t>(flags & (kMpaFlagsReserved | (frame_.revision < kMpaRevision2 ? kMpaFlagEnhanced : 0)));
    size_t skip = 0;
    if (frame_.enhanced) {
        if (pd_.size() < sizeof(MpaV2Params)) return Fail(Errc::MpaEnhancedTooShort);
        const uint16_t ird = LoadBe16(pd_.data()), ord = LoadBe16(pd_.data() + 2);
        frame_.ird = ird & kV2IrdOrdMask;
        frame_.ord = ord & kV2IrdOrdMask;
        frame_.peer_to_peer = ird & kV2PeerToPeer;
        frame_.rtr = static_cast<uint8_t>(((ird & kV2RtrSend) ? kRtrSend : 0) | ((ord & kV2RtrWrite) ? kRtrWrite : 0) |
                                          ((ord & kV2RtrRead) ? kRtrRead : 0));
        skip = sizeof(MpaV2Params);
    }
    frame_.private_data.assign(pd_.begin() + static_cast<ptrdiff_t>(skip), pd_.end());
    pd_.clear();
    pd_.shrink_to_fit();
    status_ = Status::Done;
    return status_;
}

}  // namespace iwarp
