// Transmit: message segmentation into FPDUs of at most max_fpdu() bytes,
// whole messages at a time, alternating between the send queue (Sends,
// Writes, Read Requests in posting order) and the inbound Read queue (Read
// Responses in request order).
#include <algorithm>
#include <cstring>

#include "iwarp/engine.h"

namespace iwarp {

Engine::Source Engine::PickSource() const {
    if (current_ != Source::None) return current_;
    const bool irq_ready = !irq_.empty();
    bool sq_ready = !sq_.empty();
    if (sq_ready && sq_.front().opcode == Opcode::ReadRequest && orq_.size() >= negotiated_.ord)
        sq_ready = false;  // ORD Reads in flight: the send queue waits (in order)
    if (irq_ready && sq_ready) return last_ == Source::Sq ? Source::Irq : Source::Sq;
    if (irq_ready) return Source::Irq;
    return sq_ready ? Source::Sq : Source::None;
}

size_t Engine::NextFpduSize(Source s) const {
    if (s == Source::Irq) {
        const IrqEntry &e = irq_.front();
        return FpduSize(sizeof(TaggedHeader) + std::min<size_t>(max_payload(true), e.read.size - e.sent));
    }
    const SqOp &op = sq_.front();
    if (op.opcode == Opcode::ReadRequest) return FpduSize(sizeof(UntaggedHeader) + sizeof(ReadRequestHeader));
    const bool tagged = op.opcode == Opcode::RdmaWrite;
    const size_t header = tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
    return FpduSize(header + std::min(max_payload(tagged), op.total - op.sent));
}

// A fence when the send queue is idle and something on the wire is not
// covered by a Read yet: at once for an operation that wants its
// completion, for lazy ones only when asked (RequestConfirmation).
bool Engine::NeedFence() const {
    return Confirming() && sq_.empty() && !unconfirmed_.empty() && unconfirmed_.back().slot >= cover_ &&
           (urgent_below_ > cover_ || confirm_requested_);
}

void Engine::QueueFence() {
    SqOp f;
    f.kind = OpKind::Fence;
    f.opcode = Opcode::ReadRequest;
    f.read.source_stag = 1;  // zero length: no STag is checked (as the Read RTR)
    f.covers = slot_base_ + slots_.size();
    cover_ = f.covers;
    confirm_requested_ = false;
    sq_.push_back(std::move(f));
}

void Engine::ConfirmBelow(uint64_t covers) {
    while (!unconfirmed_.empty() && unconfirmed_.front().slot < covers) {
        const Unconfirmed u = unconfirmed_.front();
        unconfirmed_.pop_front();
        CompleteSlot(u.slot, OpStatus::Success, u.length);
    }
}

void Engine::ConfirmTaken() {
    if (failed_ || !Confirming()) return;
    uint64_t below = UINT64_MAX;
    for (const OrqEntry &e : orq_)
        if (!e.internal) below = std::min(below, e.slot);
    ConfirmBelow(below);
}

bool Engine::WantsToSend() const {
    if (!terminate_out_.empty()) return true;
    if (failed_ || awaiting_first_fpdu_ || hold_) return false;
    return PickSource() != Source::None || (NeedFence() && orq_.size() < negotiated_.ord);
}

size_t Engine::Pull(std::vector<uint8_t> *out, size_t budget) { return PullInto(out, budget); }

size_t Engine::PullGather(std::vector<uint8_t> *own, std::vector<TxPiece> *pieces, size_t budget) {
    if (!negotiated_.crc) {
        gather_ = pieces;
        gather_from_ = own->size();
        gather_named_ = 0;
    }
    const size_t n = PullInto(own, budget);
    if (gather_) {
        CloseOwnedRun(own);
        gather_ = nullptr;
        gather_named_ = 0;
    } else if (n > 0) {
        pieces->push_back({own->size() - n, nullptr, n});
    }
    return n;
}

// The owned bytes appended since the last piece become a piece.
void Engine::CloseOwnedRun(std::vector<uint8_t> *out) {
    if (out->size() > gather_from_) gather_->push_back({gather_from_, nullptr, out->size() - gather_from_});
    gather_from_ = out->size();
}

size_t Engine::PullInto(std::vector<uint8_t> *out, size_t budget) {
    const size_t start = out->size();
    if (terminate_out_.empty() && !failed_ && !awaiting_first_fpdu_ && !hold_) {
        for (Source s;;) {
            if (NeedFence()) QueueFence();
            if ((s = PickSource()) == Source::None) break;
            const size_t appended = out->size() - start + gather_named_;
            if (appended > 0 && appended + NextFpduSize(s) > budget) break;
            current_ = s;
            if (s == Source::Sq)
                EmitSq(out);
            else
                EmitIrq(out);
            if (failed_) break;
        }
    }
    if (!terminate_out_.empty()) {  // last thing on the stream
        out->insert(out->end(), terminate_out_.begin(), terminate_out_.end());
        terminate_out_.clear();
    }
    return out->size() - start + gather_named_;
}

void Engine::EmitSq(std::vector<uint8_t> *out) {
    SqOp &op = sq_.front();
    if (op.opcode == Opcode::ReadRequest) {
        const uint32_t msn = tx_msn_[kQueueReadRequest]++;
        EncodeReadRequest(out, msn, op.read, negotiated_.crc);
        OrqEntry e;
        e.id = op.id;
        e.slot = op.slot;
        e.internal = op.kind == OpKind::Rtr || op.kind == OpKind::Fence;
        e.covers = op.covers;
        e.msn = msn;
        e.read = op.read;
        orq_.push_back(e);
        sq_.pop_front();
        current_ = Source::None;
        last_ = Source::Sq;
        return;
    }
    const bool tagged = op.opcode == Opcode::RdmaWrite;
    const size_t n = std::min(max_payload(tagged), op.total - op.sent);
    const bool last = op.sent + n == op.total;
    const size_t fpdu = BeginFpdu(out, (tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader)) + n);
    if (tagged) {
        AppendTaggedHeader(out, Opcode::RdmaWrite, last, op.stag, op.to + op.sent);
    } else {
        if (op.sent == 0) op.msn = tx_msn_[kQueueSend]++;
        AppendUntaggedHeader(out, op.opcode, last, kQueueSend, op.msn, static_cast<uint32_t>(op.sent), op.rsvd);
    }
    // n bytes from the caller's buffers: named (PullGather) or copied
    // straight into the FPDU.
    const size_t unpadded = out->size() - fpdu + n;
    const bool name = gather_ && Confirming();  // else the caller may reuse them once we complete
    if (name) CloseOwnedRun(out);
    for (size_t left = n; left > 0;) {
        const ConstBuffer &b = op.sgl[op.sge];
        const size_t k = std::min(left, b.length - op.sge_offset);
        if (k > 0 && name) {
            gather_->push_back({0, b.data + op.sge_offset, k});
            gather_named_ += k;
        } else if (k > 0) {
            out->insert(out->end(), b.data + op.sge_offset, b.data + op.sge_offset + k);
        }
        left -= k;
        op.sge_offset += k;
        if (op.sge_offset == b.length) {
            ++op.sge;
            op.sge_offset = 0;
        }
    }
    if (name)
        out->resize(out->size() + (4 - unpadded % 4) % 4 + kMpaCrcSize, 0);  // pad and CRC field (no CRC)
    else
        FinishFpdu(out, fpdu, negotiated_.crc);
    op.sent += n;
    if (!last) return;
    if (op.kind != OpKind::Rtr) {
        const auto length = static_cast<uint32_t>(op.total);
        if (Confirming()) {
            unconfirmed_.push_back({op.slot, length, tagged, op.stag, op.to, op.to + op.total, op.msn});
            if (!op.lazy_confirm) urgent_below_ = std::max(urgent_below_, op.slot + 1);
        } else
            CompleteSlot(op.slot, OpStatus::Success, length);
    }
    sq_.pop_front();
    current_ = Source::None;
    last_ = Source::Sq;
}

void Engine::EmitIrq(std::vector<uint8_t> *out) {
    IrqEntry &e = irq_.front();
    const size_t n = std::min<size_t>(max_payload(true), e.read.size - e.sent);
    const bool last = e.sent + n == e.read.size;
    const size_t fpdu = BeginFpdu(out, sizeof(TaggedHeader) + n);
    AppendTaggedHeader(out, Opcode::ReadResponse, last, e.read.sink_stag, e.read.sink_to + e.sent);
    const uint8_t *source =
        n > 0 ? placement_.TaggedSource(e.read.source_stag, e.read.source_to + e.sent, static_cast<uint32_t>(n))
              : nullptr;
    if (source && gather_) {
        // Named, as Sends and Writes: the provider copies what is still
        // unsent before the memory may go (its Deregister barrier).
        CloseOwnedRun(out);
        gather_->push_back({0, source, n});
        gather_named_ += n;
        const size_t unpadded = out->size() - fpdu + n;
        out->resize(out->size() + (4 - unpadded % 4) % 4 + kMpaCrcSize, 0);  // pad and CRC field (no CRC)
    } else {
        const size_t at = out->size();
        if (source)
            out->insert(out->end(), source, source + n);  // one copy, no zero-fill first
        else
            out->resize(at + n);
        if (n > 0 && !source &&
            !placement_.FetchTagged(e.read.source_stag, e.read.source_to + e.sent, out->data() + at,
                                    static_cast<uint32_t>(n))) {
            out->resize(fpdu);
            // The source went away after the Read Request was checked: report
            // it against that request (RDMAP remote protection, as siw).
            Fault f;
            f.errc = Errc::LocalFetchFailed;
            f.code = TerminateCodeFor(Errc::LocalFetchFailed, false, true);
            f.send_terminate = true;
            f.has_segment_length = f.has_ddp_header = f.has_rdmap_header = true;
            f.segment_length = e.ulpdu_length;
            f.header_length = e.header_length;
            std::memcpy(f.header, e.header, e.header_length);
            LocalFault(f);
            return;
        }
        FinishFpdu(out, fpdu, negotiated_.crc);
    }
    e.sent += static_cast<uint32_t>(n);
    if (!last) return;
    irq_.pop_front();
    current_ = Source::None;
    last_ = Source::Irq;
}

}  // namespace iwarp
