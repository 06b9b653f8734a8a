// Incremental FPDU decoding: length, then the whole FPDU (bounded by
// max_ulpdu), then CRC and DDP/RDMAP validation before anything is
// handed on. An FPDU that arrives whole is parsed where it lies; a long
// Write, Read Response or Send that does not (CRC off) is handed on in
// pieces.
#include <algorithm>
#include <cstring>

#include "iwarp/bytes.h"
#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"

namespace iwarp {

FpduDecoder::Status FpduDecoder::Fail(Errc e) {
    fault_ = Fault{};
    fault_.errc = e;
    fault_.code = TerminateCodeFor(e);
    fault_.send_terminate = true;
    status_ = Status::Error;
    open_ = false;
    buf_.clear();
    buf_.shrink_to_fit();
    return status_;
}

// A CRC failure keeps the DDP header as received (no header flags: an LLP
// Terminate carries none) so the log can say what the bad FPDU claimed to be.
FpduDecoder::Status FpduDecoder::CrcFail(std::span<const uint8_t> fpdu) {
    Fault f;  // copied first: fpdu may lie in buf_, which Fail frees
    const size_t ulpdu = LoadBe16(fpdu.data());
    f.segment_length = static_cast<uint16_t>(ulpdu);
    const size_t ddp = (fpdu[kMpaLengthSize] & kDdpTagged) ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
    f.header_length = static_cast<uint8_t>(std::min({ddp, ulpdu, fpdu.size() - kMpaLengthSize}));
    std::memcpy(f.header, fpdu.data() + kMpaLengthSize, f.header_length);
    Fail(Errc::FpduCrc);
    fault_.segment_length = f.segment_length;
    fault_.header_length = f.header_length;
    std::memcpy(fault_.header, f.header, f.header_length);
    return status_;
}

FpduDecoder::Status FpduDecoder::Parse(std::span<const uint8_t> fpdu) {
    const size_t ulpdu = LoadBe16(fpdu.data());
    const size_t crc_at = fpdu.size() - kMpaCrcSize;
    bool crc_failed = false;
    if (opt_.crc && LoadLe32(fpdu.data() + crc_at) != Crc32c(fpdu.data(), crc_at)) {
        if (!opt_.crc_failed_read_responses) return CrcFail(fpdu);
        crc_failed = true;
    }
    // Pad bytes count in the CRC but their values are ignored (RFC 5044
    // says the sender zeroes them; Linux 6.1 siw with CRC on sometimes does
    // not, and checks its CRC over what it sent).
    if (!ParseSegment(fpdu.subspan(kMpaLengthSize, ulpdu), opt_.strict, &seg_, &fault_)) {
        if (crc_failed) return CrcFail(fpdu);  // the bytes are wrong: say so, not what they parse to
        status_ = Status::Error;
        buf_.clear();
        return status_;
    }
    if (crc_failed && !(seg_.tagged && seg_.opcode == Opcode::ReadResponse)) return CrcFail(fpdu);
    seg_.crc_failed = crc_failed;
    current_ = fpdu;
    status_ = Status::Segment;
    return status_;
}

FpduDecoder::Status FpduDecoder::Feed(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    if (status_ == Status::Error) return status_;
    if (!open_) return Frame(in, consumed);
    size_t used = 0;
    const Status st = FeedOpen(in, &used);
    if (st != Status::NeedMore || open_) {
        *consumed = used;
        return st;
    }
    const Status next = Frame(in.subspan(used), consumed);  // the open FPDU ended: on to the next
    *consumed += used;
    return next;
}

// Bytes up to the end of the DDP header of the FPDU being framed: first
// the length and the DDP control byte, whose T bit says which header.
size_t FpduDecoder::HeaderEnd() const {
    if (have_ <= kMpaLengthSize && !open_) return kMpaLengthSize + 1;
    return kMpaLengthSize + ((buf_[kMpaLengthSize] & kDdpTagged) ? sizeof(TaggedHeader) : sizeof(UntaggedHeader));
}

// A long Write, Read Response or Send with CRC off, once its header is in:
// handed on in pieces.
bool FpduDecoder::Pieceable() const {
    if (opt_.piece_min == 0 || opt_.crc || have_ <= kMpaLengthSize + 1) return false;
    const bool tagged = buf_[kMpaLengthSize] & kDdpTagged;
    const auto op = static_cast<Opcode>(buf_[kMpaLengthSize + 1] & kRdmapOpcodeMask);
    if (!tagged && op != Opcode::Send && op != Opcode::SendInvalidate && op != Opcode::SendSolicited &&
        op != Opcode::SendSolicitedInvalidate)
        return false;
    const size_t ulpdu = LoadBe16(buf_.data());
    return ulpdu >= HeaderEnd() - kMpaLengthSize + opt_.piece_min;
}

FpduDecoder::Status FpduDecoder::Open() {
    const size_t ulpdu = LoadBe16(buf_.data());
    const size_t header = HeaderEnd() - kMpaLengthSize;
    if (!ParseSegment(std::span<const uint8_t>(buf_.data() + kMpaLengthSize, header), opt_.strict, &seg_, &fault_)) {
        if (fault_.has_segment_length) fault_.segment_length = static_cast<uint16_t>(ulpdu);
        status_ = Status::Error;
        buf_.clear();
        return status_;
    }
    seg_.ulpdu_length = static_cast<uint16_t>(ulpdu);
    open_seg_ = seg_;
    open_ = true;
    piece_at_ = 0;
    piece_left_ = ulpdu - header;
    trailer_left_ = need_ - kMpaLengthSize - ulpdu;
    have_ = 0;  // buf_ keeps the header (open_seg_.header) until the FPDU closes
    status_ = Status::Opened;
    return status_;
}

FpduDecoder::Status FpduDecoder::FeedOpen(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    current_ = {};
    if (piece_left_ > 0) {
        status_ = Status::NeedMore;
        seg_ = Segment{};
        if (in.empty()) return status_;
        const size_t take = std::min(piece_left_, in.size());
        seg_ = PeekPiece(take);
        seg_.payload = in.first(take);
        Skip(take);
        *consumed = take;
        status_ = Status::Piece;
        return status_;
    }
    const size_t pos = std::min(trailer_left_, in.size());  // pad (ignored) and the CRC (off here)
    trailer_left_ -= pos;
    *consumed = pos;
    if (trailer_left_ == 0) open_ = false;
    status_ = Status::NeedMore;
    return status_;
}

Segment FpduDecoder::PeekPiece(size_t n) const {
    Segment s = open_seg_;
    if (s.tagged)
        s.to += piece_at_;
    else
        s.mo += static_cast<uint32_t>(piece_at_);
    s.payload = {};
    s.last = open_seg_.last && n == piece_left_;
    return s;
}

void FpduDecoder::Skip(size_t n) {
    piece_at_ += n;
    piece_left_ -= n;
}

void FpduDecoder::Gather() {
    if (!open_ || piece_at_ != 0) return;
    have_ = HeaderEnd();  // the header is still in buf_
    open_ = false;
    status_ = Status::NeedMore;
}

FpduDecoder::Status FpduDecoder::Frame(std::span<const uint8_t> in, size_t *consumed) {
    *consumed = 0;
    status_ = Status::NeedMore;
    seg_ = Segment{};
    current_ = {};
    const size_t max_ulpdu = std::min(opt_.max_ulpdu, kMaxUlpduLength);
    auto check_length = [&](size_t ulpdu) {
        if (ulpdu < sizeof(TaggedHeader)) return Fail(Errc::FpduTooShort);
        if (ulpdu > max_ulpdu) return Fail(Errc::FpduTooLong);
        return Status::NeedMore;
    };

    // Fast path: nothing buffered and the whole FPDU is in `in`.
    if (have_ == 0 && in.size() >= kMpaLengthSize) {
        const size_t ulpdu = LoadBe16(in.data());
        if (check_length(ulpdu) == Status::Error) {
            *consumed = kMpaLengthSize;
            return status_;
        }
        const size_t total = FpduSize(ulpdu);
        if (in.size() >= total) {
            *consumed = total;
            return Parse(in.first(total));
        }
    }
    size_t pos = 0;
    while (pos < in.size()) {
        if (have_ < kMpaLengthSize) {
            if (buf_.size() < kMpaLengthSize) buf_.resize(kMpaLengthSize);
            buf_[have_++] = in[pos++];
            if (have_ == kMpaLengthSize) {
                const size_t ulpdu = LoadBe16(buf_.data());
                if (check_length(ulpdu) == Status::Error) {
                    *consumed = pos;
                    return status_;
                }
                need_ = FpduSize(ulpdu);
                buf_.resize(need_);
            }
            continue;
        }
        const bool header_only = have_ < HeaderEnd() && opt_.piece_min > 0 && !opt_.crc;
        const size_t take =
            std::min({header_only ? HeaderEnd() - have_ : need_ - have_, need_ - have_, in.size() - pos});
        std::memcpy(buf_.data() + have_, in.data() + pos, take);
        have_ += take;
        pos += take;
        if (have_ > kMpaLengthSize + 1 && have_ == HeaderEnd() && have_ < need_ && Pieceable()) {
            *consumed = pos;
            return Open();
        }
        if (have_ == need_) {
            *consumed = pos;
            have_ = 0;  // the next Feed starts a new FPDU; buf_ keeps this one until then
            return Parse(std::span<const uint8_t>(buf_.data(), need_));
        }
    }
    *consumed = pos;
    return status_;
}

void FpduDecoder::Keep() {
    if (status_ != Status::Segment || current_.empty()) return;
    if (!buf_.empty() && current_.data() == buf_.data()) return;  // already ours
    const uint8_t *old_base = current_.data();
    buf_.assign(current_.begin(), current_.end());
    const uint8_t *base = buf_.data();
    auto rebase = [&](std::span<const uint8_t> s) {
        return s.empty() ? s : std::span<const uint8_t>(base + (s.data() - old_base), s.size());
    };
    seg_.header = rebase(seg_.header);
    seg_.payload = rebase(seg_.payload);
    current_ = std::span<const uint8_t>(base, buf_.size());
}

}  // namespace iwarp
