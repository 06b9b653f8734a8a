// Failure: the Terminate we send when the peer breaks the protocol, the one
// we receive, and completing every operation exactly once either way.
#include <algorithm>
#include <cstring>

#include "iwarp/engine.h"

namespace iwarp {

void Engine::FaultOn(Errc e, const Segment &s, bool read_source, int64_t failed_rq) {
    Fault f;
    f.errc = e;
    f.code = TerminateCodeFor(e, s.tagged, read_source);
    f.send_terminate = true;
    // Terminated headers (as siw): DDP and RDMAP errors carry the DDP header
    // and segment length; a Read Request's protection error also carries its
    // RDMAP header; LLP errors carry nothing.
    if (f.code.layer != Layer::Llp) {
        const size_t ddp = s.tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
        const bool rdmap = read_source && s.opcode == Opcode::ReadRequest &&
                           s.header.size() >= ddp + sizeof(ReadRequestHeader);
        const size_t n = std::min(rdmap ? ddp + sizeof(ReadRequestHeader) : ddp, s.header.size());
        std::memcpy(f.header, s.header.data(), n);
        f.header_length = static_cast<uint8_t>(n);
        f.has_ddp_header = n == ddp || rdmap;
        f.has_rdmap_header = rdmap;
        f.has_segment_length = f.has_ddp_header;
        f.segment_length = s.ulpdu_length;
    } else if (e == Errc::FpduCrc) {  // for the log only: an LLP Terminate carries no header
        f.header_length = static_cast<uint8_t>(std::min(sizeof f.header, s.header.size()));
        std::memcpy(f.header, s.header.data(), f.header_length);
        f.segment_length = s.ulpdu_length;
    }
    LocalFault(f, failed_rq);
}

void Engine::LocalFault(const Fault &f, int64_t failed_rq) {
    if (failed_) return;
    failed_ = true;
    local_fault_ = f;
    if (f.send_terminate) EncodeTerminate(&terminate_out_, f, tx_msn_[kQueueTerminate]++, negotiated_.crc);
    FailAll(OpStatus::ProtocolError, OpStatus::Flushed, failed_rq);
}

void Engine::OnTerminate(const Segment &s) {
    TerminateMessage m;
    ParseTerminate(s.payload, &m);  // the decoder guaranteed the control word
    remote_terminate_ = m;
    failed_ = true;
    local_fault_ = Fault{};
    local_fault_.errc = Errc::TerminateReceived;
    local_fault_.code = m.code;
    // Protection errors (RDMAP remote protection, DDP tagged buffer) fail
    // what was in flight with an access error: ND_ACCESS_VIOLATION.
    const bool protection = (m.code.layer == Layer::Rdmap && m.code.etype == etype::kRdmapProtection) ||
                            (m.code.layer == Layer::Ddp && m.code.etype == etype::kDdpTagged);
    OpStatus status = protection ? OpStatus::RemoteAccessError : OpStatus::RemoteOperationError;
    // A Send that found no receive buffer at the peer (DDP untagged, queue 0).
    if (m.code.layer == Layer::Ddp && m.code.etype == etype::kDdpUntagged && m.code.ecode == ecode::kDdpUNoBuffer &&
        m.has_ddp_header && !m.terminated.tagged && m.terminated.qn == kQueueSend)
        status = OpStatus::RemoteNoReceive;
    // A Send too long for the receive it landed in: the receiver's failure
    // alone; the sender's Send succeeds, as on every other path (COMPAT).
    if (m.code.layer == Layer::Ddp && m.code.etype == etype::kDdpUntagged && m.code.ecode == ecode::kDdpUTooLong &&
        m.has_ddp_header && !m.terminated.tagged && m.terminated.qn == kQueueSend)
        status = OpStatus::Success;
    SettleCulprit(m, status);
    FailAll(status, OpStatus::Flushed);
}

void Engine::SettleCulprit(const TerminateMessage &m, OpStatus status) {
    if (!m.has_ddp_header) return;
    const Segment &t = m.terminated;
    int64_t culprit = -1;  // its slot
    for (const Unconfirmed &u : unconfirmed_) {
        const bool hit = t.tagged ? (u.tagged && u.stag == t.stag && t.to >= u.to && t.to <= u.end)
                                  : (!u.tagged && t.qn == kQueueSend && t.msn == u.msn);
        if (hit) {
            culprit = static_cast<int64_t>(u.slot);
            break;
        }
    }
    if (culprit < 0 && !t.tagged && t.qn == kQueueReadRequest)
        for (const OrqEntry &e : orq_)
            if (e.msn == t.msn && !e.internal) culprit = static_cast<int64_t>(e.slot);
    if (culprit < 0) return;
    // The peer handles its stream in order: what came before the culprit was taken.
    while (!unconfirmed_.empty()) {
        const Unconfirmed u = unconfirmed_.front();
        unconfirmed_.pop_front();
        const auto slot = static_cast<int64_t>(u.slot);
        CompleteSlot(u.slot, slot < culprit ? OpStatus::Success : slot == culprit ? status : OpStatus::Flushed,
                     slot < culprit || (slot == culprit && status == OpStatus::Success) ? u.length : 0);
    }
    for (const OrqEntry &e : orq_)
        if (!e.internal) CompleteSlot(e.slot, static_cast<int64_t>(e.slot) == culprit ? status : OpStatus::Flushed, 0);
    orq_.clear();
}

void Engine::FailStalled() {
    if (failed_ || !stalled_) return;
    FaultOn(Errc::DdpNoBuffer, decoder_.segment());
}

void Engine::FailAll(OpStatus in_flight, OpStatus queued, int64_t failed_rq) {
    // Every open send-queue slot belongs to a Read in orq_ or an op in sq_;
    // marking them all delivers the lot in posting order.
    for (const Unconfirmed &u : unconfirmed_) CompleteSlot(u.slot, in_flight, 0);
    unconfirmed_.clear();
    for (const OrqEntry &e : orq_)
        if (!e.internal) CompleteSlot(e.slot, in_flight, 0);
    orq_.clear();
    for (size_t i = 0; i < sq_.size(); ++i) {
        const SqOp &op = sq_[i];
        if (op.kind == OpKind::Rtr || op.kind == OpKind::Fence) continue;  // ours: no slot, no completion
        const bool started = i == 0 && current_ == Source::Sq && op.sent > 0;
        CompleteSlot(op.slot, started ? in_flight : queued, 0);
    }
    sq_.clear();
    irq_.clear();
    current_ = Source::None;
    // The receive the local fault names fails with its own status.
    const OpStatus named = local_fault_.errc == Errc::ReceiveBufferGone    ? OpStatus::LocalAccessError
                           : local_fault_.errc == Errc::CannotInvalidate ? OpStatus::RemoteOperationError
                                                                         : OpStatus::LocalLengthError;
    for (size_t i = 0; i < rq_.size(); ++i) {
        const bool culprit = static_cast<int64_t>(i) == failed_rq;
        Complete(CompletionKind::Receive, rq_[i].id, culprit ? named : queued, rq_[i].received);
    }
    rq_.clear();
    stalled_ = false;
}

}  // namespace iwarp
