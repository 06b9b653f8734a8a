// Long segments in pieces (CRC off): a Write, Read Response or Send whose
// FPDU has not arrived whole is checked for its whole payload when its
// header is in (Opened), then placed piece by piece as the bytes arrive,
// each piece checked again (the memory may be deregistered in between). A
// provider may read the payload straight into its destination.
#include <algorithm>
#include <cassert>

#include "iwarp/engine.h"

namespace iwarp {

void Engine::OnOpened(const Segment &s) {
    if (awaiting_first_fpdu_) {
        if (negotiated_.rtr != RtrType::None) return FaultOn(Errc::MpaNoMatchingRtr, s);  // an RTR has no payload
        awaiting_first_fpdu_ = false;
    }
    if (s.tagged) {
        CheckTaggedRange(s, s.ulpdu_length - static_cast<uint32_t>(sizeof(TaggedHeader)));
        return;
    }
    // A Send with no receive posted yet waits whole, as without pieces.
    if (SendReceive(s, s.ulpdu_length - sizeof(UntaggedHeader)) == kNoReceive) decoder_.Gather();
}

size_t Engine::DirectBuffers(MutableBuffer *out, size_t max) {
    if (failed_ || stalled_ || decoder_.piece_left() <= 1 || max == 0) return 0;
    const size_t n = decoder_.piece_left() - 1;  // the last byte goes through Receive (stored last)
    const Segment s = decoder_.PeekPiece(n);
    if (!s.tagged) {
        // Checked as a piece would be; on any doubt the piece path decides.
        const int64_t d = SendReceive(s, n, false);
        if (d < 0) return 0;
        const RqEntry &e = rq_[static_cast<size_t>(d)];
        size_t count = 0, sge = e.sge, offset = e.sge_offset;
        for (size_t left = n; left > 0 && count < max && sge < e.sgl.size(); ++sge, offset = 0) {
            const size_t k = std::min(left, e.sgl[sge].length - offset);
            if (k > 0) out[count++] = {e.sgl[sge].data + offset, k};
            left -= k;
        }
        return count;
    }
    const bool write = s.opcode == Opcode::RdmaWrite;
    if (!write && (orq_.empty() || (orq_.front().internal && orq_.front().read.size == 0))) return 0;
    if (!CheckTaggedRange(s, static_cast<uint32_t>(n))) return 0;
    return placement_.TaggedDestination(s.stag, s.to, static_cast<uint32_t>(n),
                                        write ? Access::RemoteWrite : Access::LocalWrite, out, max);
}

void Engine::DirectPlaced(size_t n) {
    assert(n <= decoder_.piece_left());
    const Segment s = decoder_.PeekPiece(n);
    decoder_.Skip(n);
    if (!s.tagged)
        Scatter(rq_[s.msn - rx_msn_[kQueueSend]], nullptr, n);
    else if (s.opcode == Opcode::ReadResponse)
        orq_.front().received += static_cast<uint32_t>(n);
}

// The next FPDU's header: an untagged one is the longer (a tagged one's
// first payload bytes then come as a short piece).
constexpr size_t kNextHeader = kMpaLengthSize + sizeof(UntaggedHeader);

size_t Engine::ReadHint(size_t room) const {
    if (failed_ || !decoder_.open()) return room;  // (after a failure the bytes are only discarded)
    return std::min(room, decoder_.open_left() + kNextHeader);
}

size_t Engine::ReadHintAfter(size_t direct, size_t room) const {
    if (failed_ || direct == 0 || direct + 1 != decoder_.piece_left()) return 0;
    return std::min(room, decoder_.open_left() - direct + kNextHeader);
}

}  // namespace iwarp
