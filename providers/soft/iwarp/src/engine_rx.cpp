// Receive: stream bytes to validated segments, the first-FPDU/RTR rule, and
// untagged Send reassembly into posted receive buffers.
#include <algorithm>
#include <cstring>

#include "iwarp/engine.h"

namespace iwarp {

RxResult Engine::Receive(std::span<const uint8_t> bytes) {
    if (failed_) return {bytes.size(), RxStatus::Failed};
    if (stalled_) return {0, RxStatus::Stalled};
    size_t pos = 0;
    while (pos < bytes.size()) {
        size_t used = 0;
        const auto st = decoder_.Feed(bytes.subspan(pos), &used);
        pos += used;
        if (st == FpduDecoder::Status::NeedMore) break;
        if (st == FpduDecoder::Status::Error) {
            LocalFault(decoder_.fault());
            return {bytes.size(), RxStatus::Failed};
        }
        if (st == FpduDecoder::Status::Opened) {
            OnOpened(decoder_.segment());
        } else if (st == FpduDecoder::Status::Piece) {
            const Segment &s = decoder_.segment();
            if (s.opcode == Opcode::RdmaWrite)
                OnWrite(s);
            else if (s.opcode == Opcode::ReadResponse)
                OnReadResponse(s);
            else if (OnSend(s) == Step::Stall)  // (Opened found its receive; receives stay until done)
                FaultOn(Errc::DdpNoBuffer, s);
        } else if (Dispatch(decoder_.segment()) == Step::Stall) {
            decoder_.Keep();  // the caller's buffer may go; the segment waits here
            stalled_ = true;
            return {pos, RxStatus::Stalled};
        }
        if (failed_) return {bytes.size(), RxStatus::Failed};
    }
    return {pos, RxStatus::Ok};
}

RxStatus Engine::Resume() {
    if (failed_) return RxStatus::Failed;
    if (!stalled_) return RxStatus::Ok;
    if (Dispatch(decoder_.segment()) == Step::Stall) return RxStatus::Stalled;
    stalled_ = false;
    return failed_ ? RxStatus::Failed : RxStatus::Ok;
}

// The responder's first inbound FPDU: with an RTR negotiated it must be that
// RTR (else LLP "no matching RTR"). A Send or Write RTR is consumed here; a
// Read RTR goes on as a zero-length Read Request, answered by a zero-length
// Read Response. Returns false on a fault.
bool Engine::AcceptFirstFpdu(const Segment &s, bool *consumed) {
    *consumed = false;
    awaiting_first_fpdu_ = false;
    switch (negotiated_.rtr) {
    case RtrType::None: return true;
    case RtrType::Write:
        if (s.opcode == Opcode::RdmaWrite && s.last && s.payload.empty()) {
            *consumed = true;  // STag and TO of a zero-length Write are not checked
            return true;
        }
        break;
    case RtrType::Read:
        if (s.opcode == Opcode::ReadRequest && s.read.size == 0 && s.msn == rx_msn_[kQueueReadRequest]) return true;
        break;
    case RtrType::Send:
        if (s.opcode == Opcode::Send && s.last && s.mo == 0 && s.payload.empty() &&
            s.msn == rx_msn_[kQueueSend]) {
            ++rx_msn_[kQueueSend];  // consumes MSN 1 without a receive buffer
            *consumed = true;
            return true;
        }
        break;
    }
    FaultOn(Errc::MpaNoMatchingRtr, s);
    return false;
}

Engine::Step Engine::Dispatch(const Segment &s) {
    if (s.crc_failed) {  // a Read Response (the decoder passes no other kind)
        // Its header is not to be trusted either: it must at least name the
        // sink STag of our zero-length Read (siw's stale answer does; its
        // offset and length are the earlier request's, so they cannot be
        // checked). Anything else is reported as what it is, a CRC error.
        const bool ours = !orq_.empty() && orq_.front().internal && orq_.front().read.size == 0 &&
                          s.stag == orq_.front().read.sink_stag;
        if (!ours) {
            FaultOn(Errc::FpduCrc, s);
            return Step::Done;
        }
        ++dropped_bad_crc_;  // siw's answer to a zero-length Read: nothing is placed (OnReadResponse)
    }
    if (awaiting_first_fpdu_ && s.opcode != Opcode::Terminate) {
        bool consumed = false;
        if (!AcceptFirstFpdu(s, &consumed) || consumed) return Step::Done;
    }
    switch (s.opcode) {
    case Opcode::RdmaWrite: OnWrite(s); break;
    case Opcode::ReadRequest: OnReadRequest(s); break;
    case Opcode::ReadResponse: OnReadResponse(s); break;
    case Opcode::Send:
    case Opcode::SendInvalidate:
    case Opcode::SendSolicited:
    case Opcode::SendSolicitedInvalidate: return OnSend(s);
    case Opcode::Terminate: OnTerminate(s); break;
    }
    return Step::Done;
}

// The receive a Send segment (or piece) fills, checked for `len` bytes of
// it before a byte is placed: its index in rq_, kNoReceive if none is
// posted yet (the segment waits), or -1 (faulted, unless !fault: then the
// caller only learns that these bytes may not go there).
int64_t Engine::SendReceive(const Segment &s, size_t len, bool fault) {
    auto fail = [&](Errc errc, int64_t rq = -1) {
        if (fault) FaultOn(errc, s, false, rq);
        return int64_t{-1};
    };
    const uint32_t d = s.msn - rx_msn_[kQueueSend];  // window position, modulo 2^32
    if (d >= rq_.size()) {
        if (d - rq_.size() >= options_.max_receive_queue) return fail(Errc::DdpMsnRange);  // behind, or absurdly ahead
        if (options_.stall_on_missing_receive) return kNoReceive;
        return fail(Errc::DdpNoBuffer);
    }
    const RqEntry &e = rq_[d];
    if (e.done) return fail(Errc::DdpMsnRange);
    if (s.mo != e.received) return fail(Errc::DdpMessageOffset);  // segments arrive in order over TCP
    if (len > e.capacity - e.received) return fail(Errc::DdpMessageTooLong, d);
    if (len > 0 && !placement_.ReceiveUsable(e.id)) return fail(Errc::ReceiveBufferGone, d);
    return d;
}

// Moves the receive's scatter cursor past n bytes, copying them from src
// (null: they are there already, read straight into place).
void Engine::Scatter(RqEntry &e, const uint8_t *src, size_t n) {
    for (size_t left = n; left > 0;) {
        const MutableBuffer &b = e.sgl[e.sge];
        const size_t k = std::min(left, b.length - e.sge_offset);
        if (k > 0 && src) std::memcpy(b.data + e.sge_offset, src, k);
        if (src) src += k;
        left -= k;
        e.sge_offset += k;
        if (e.sge_offset == b.length) {
            ++e.sge;
            e.sge_offset = 0;
        }
    }
    e.received += static_cast<uint32_t>(n);
}

Engine::Step Engine::OnSend(const Segment &s) {
    const int64_t d = SendReceive(s, s.payload.size());
    if (d == kNoReceive) return Step::Stall;
    if (d < 0) return Step::Done;
    RqEntry &e = rq_[static_cast<size_t>(d)];
    Scatter(e, s.payload.data(), s.payload.size());
    if (!s.last) return Step::Done;
    e.done = true;
    e.solicited = s.opcode == Opcode::SendSolicited || s.opcode == Opcode::SendSolicitedInvalidate;
    if (s.opcode == Opcode::SendInvalidate || s.opcode == Opcode::SendSolicitedInvalidate) {
        if (!placement_.InvalidateStag(s.invalidate_stag)) {
            // The receive that took the message fails with the peer's error.
            FaultOn(Errc::CannotInvalidate, s, false, d);
            return Step::Done;
        }
        e.invalidated = true;
        e.invalidated_stag = s.invalidate_stag;
    }
    // Messages complete in MSN order.
    while (!rq_.empty() && rq_.front().done) {
        const RqEntry &f = rq_.front();
        Complete(CompletionKind::Receive, f.id, OpStatus::Success, f.received);
        cq_.back().solicited = f.solicited;
        cq_.back().invalidated = f.invalidated;
        cq_.back().invalidated_stag = f.invalidated_stag;
        rq_.pop_front();
        ++rx_msn_[kQueueSend];
    }
    return Step::Done;
}

}  // namespace iwarp
