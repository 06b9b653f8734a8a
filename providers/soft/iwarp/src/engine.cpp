// Engine setup, posting and completions.
#include <algorithm>
#include <limits>

#include "iwarp/engine.h"

namespace iwarp {

Placement::~Placement() = default;

const uint8_t *Placement::TaggedSource(uint32_t, uint64_t, uint32_t) { return nullptr; }

bool Placement::ReceiveUsable(uint64_t) { return true; }

size_t Placement::TaggedDestination(uint32_t, uint64_t, uint32_t, Access, MutableBuffer *, size_t) { return 0; }

bool Placement::InvalidateStag(uint32_t) {
    return false;
}

const char *OpStatusName(OpStatus s) {
    switch (s) {
    case OpStatus::Success: return "success";
    case OpStatus::RemoteAccessError: return "remote-access-error";
    case OpStatus::RemoteOperationError: return "remote-operation-error";
    case OpStatus::LocalLengthError: return "local-length-error";
    case OpStatus::LocalAccessError: return "local-access-error";
    case OpStatus::RemoteNoReceive: return "remote-no-receive";
    case OpStatus::ProtocolError: return "protocol-error";
    case OpStatus::Flushed: return "flushed";
    }
    return "unknown";
}

namespace {
constexpr size_t kMinFpdu = 64;                                   // a Read Request and a few payload bytes
constexpr size_t kMaxFpdu = FpduSize(kMaxUlpduLength) & ~size_t{3};  // 65544
constexpr size_t kMaxMessage = std::numeric_limits<uint32_t>::max();  // MO and lengths are 32 bits

template <typename Buffer>
size_t TotalLength(std::span<const Buffer> sgl) {
    size_t total = 0;
    for (const auto &b : sgl) {
        if (b.length > kMaxMessage - total) return kMaxMessage + size_t{1};
        total += b.length;
    }
    return total;
}
}  // namespace

Engine::Engine(const Negotiated &n, Placement &placement, const EngineOptions &options)
    : negotiated_(n), placement_(placement), options_(options),
      max_fpdu_(std::clamp<size_t>(options.mss, kMinFpdu, kMaxFpdu) & ~size_t{3}),
      decoder_(FpduOptions{n.crc, std::min(options.max_inbound_ulpdu, kMaxUlpduLength), options.strict, options.piece_min,
                           /*crc_failed_read_responses=*/true}) {
    awaiting_first_fpdu_ = n.role == Role::Responder && (n.hold_until_first_fpdu || n.rtr != RtrType::None);
    if (n.role == Role::Initiator && n.rtr != RtrType::None) {
        // The RTR goes first (RFC 6581). Like siw: zero-length Write to STag 1
        // (some hardware treats STag 0 specially), or a zero-length Read
        // with sink STag 0 and source STag 1, or a zero-length Send.
        SqOp rtr;
        rtr.kind = OpKind::Rtr;
        switch (n.rtr) {
        case RtrType::Write:
            rtr.opcode = Opcode::RdmaWrite;
            rtr.stag = 1;
            break;
        case RtrType::Read:
            rtr.opcode = Opcode::ReadRequest;
            rtr.read.source_stag = 1;
            break;
        default: rtr.opcode = Opcode::Send; break;
        }
        sq_.push_back(std::move(rtr));
    }
}

size_t Engine::max_payload(bool tagged) const {
    const size_t header = tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
    return std::min(max_fpdu_ - kMpaLengthSize - kMpaCrcSize - header, kMaxUlpduLength - header);
}

bool Engine::PostSend(uint64_t id, std::span<const ConstBuffer> sgl, SendFlags flags) {
    const size_t total = TotalLength(sgl);
    if (failed_ || sq_.size() >= options_.max_send_queue || total > kMaxMessage) return false;
    SqOp op;
    op.kind = OpKind::Send;
    op.id = id;
    op.slot = AddSlot(CompletionKind::Send, id);
    op.sgl.assign(sgl.begin(), sgl.end());
    op.total = total;
    op.lazy_confirm = flags.lazy_confirm;
    if (flags.invalidate) {
        op.opcode = flags.solicited ? Opcode::SendSolicitedInvalidate : Opcode::SendInvalidate;
        op.rsvd = flags.invalidate_stag;
    } else {
        op.opcode = flags.solicited ? Opcode::SendSolicited : Opcode::Send;
    }
    sq_.push_back(std::move(op));
    return true;
}

bool Engine::PostWrite(uint64_t id, std::span<const ConstBuffer> sgl, uint32_t stag, uint64_t to,
                       bool lazy_confirm) {
    const size_t total = TotalLength(sgl);
    if (failed_ || sq_.size() >= options_.max_send_queue || total > kMaxMessage) return false;
    SqOp op;
    op.kind = OpKind::Write;
    op.id = id;
    op.slot = AddSlot(CompletionKind::Write, id);
    op.sgl.assign(sgl.begin(), sgl.end());
    op.total = total;
    op.opcode = Opcode::RdmaWrite;
    op.stag = stag;
    op.to = to;
    op.lazy_confirm = lazy_confirm;
    sq_.push_back(std::move(op));
    return true;
}

bool Engine::PostRead(uint64_t id, uint32_t sink_stag, uint64_t sink_to, uint32_t length, uint32_t source_stag,
                      uint64_t source_to) {
    if (failed_ || sq_.size() >= options_.max_send_queue || negotiated_.ord == 0) return false;
    SqOp op;
    op.kind = OpKind::Read;
    op.id = id;
    op.slot = AddSlot(CompletionKind::Read, id);
    op.opcode = Opcode::ReadRequest;
    op.read = ReadRequest{sink_stag, sink_to, length, source_stag, source_to};
    op.total = length;
    op.covers = op.slot;  // the peer answers it after everything posted before
    cover_ = std::max(cover_, op.covers);
    confirm_requested_ = false;  // this Read confirms all there is
    sq_.push_back(std::move(op));
    return true;
}

bool Engine::PostReceive(uint64_t id, std::span<const MutableBuffer> sgl) {
    const size_t total = TotalLength(sgl);
    if (failed_ || rq_.size() >= options_.max_receive_queue || total > kMaxMessage) return false;
    RqEntry e;
    e.id = id;
    e.sgl.assign(sgl.begin(), sgl.end());
    e.capacity = total;
    rq_.push_back(std::move(e));
    return true;
}

bool Engine::PollCompletion(Completion *c) {
    if (cq_.empty()) return false;
    *c = cq_.front();
    cq_.pop_front();
    return true;
}

void Engine::Complete(CompletionKind kind, uint64_t id, OpStatus status, uint32_t length) {
    Completion c;
    c.kind = kind;
    c.id = id;
    c.status = status;
    c.length = length;
    cq_.push_back(c);
}

uint64_t Engine::AddSlot(CompletionKind kind, uint64_t id) {
    SqSlot s;
    s.kind = kind;
    s.id = id;
    slots_.push_back(s);
    return slot_base_ + slots_.size() - 1;
}

void Engine::CompleteSlot(uint64_t slot, OpStatus status, uint32_t length) {
    SqSlot &s = slots_[slot - slot_base_];
    s.done = true;
    s.status = status;
    s.length = length;
    while (!slots_.empty() && slots_.front().done) {
        Complete(slots_.front().kind, slots_.front().id, slots_.front().status, slots_.front().length);
        slots_.pop_front();
        ++slot_base_;
    }
}

void Engine::Abort(bool send_terminate) {
    if (failed_) return;
    Fault f;
    f.errc = Errc::LocalAbort;
    f.code = TerminateCodeFor(Errc::LocalAbort);
    f.send_terminate = send_terminate;
    local_fault_ = f;
    failed_ = true;
    if (send_terminate) EncodeTerminate(&terminate_out_, f, tx_msn_[kQueueTerminate]++, negotiated_.crc);
    FailAll(OpStatus::Flushed, OpStatus::Flushed);
}

}  // namespace iwarp
