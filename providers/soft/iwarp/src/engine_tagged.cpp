// Tagged traffic: inbound RDMA Writes, the peer's Read Requests and the
// Read Responses to our own Reads. Every range is checked (TO wrap first,
// then Placement::CheckTagged) before any byte moves.
#include <algorithm>
#include <limits>

#include "iwarp/engine.h"

namespace iwarp {
namespace {

Errc ErrcFor(TaggedCheck c) {
    switch (c) {
    case TaggedCheck::Ok: return Errc::Ok;
    case TaggedCheck::InvalidStag: return Errc::TaggedInvalidStag;
    case TaggedCheck::BaseBounds: return Errc::TaggedBaseBounds;
    case TaggedCheck::AccessRights: return Errc::TaggedAccessRights;
    case TaggedCheck::StagNotAssociated: return Errc::TaggedStagNotAssociated;
    }
    return Errc::TaggedInvalidStag;
}

// A range whose end offset (to + len) is not representable counts as a TO
// wrap, even if its last byte is the top one: Placement implementations may
// then compute to + len freely (found by fuzzing: a range ending at 2^64
// reached CheckTagged with to + len == 0, which defeats `to + len <= end`).
bool Wraps(uint64_t to, uint64_t len) {
    return len > std::numeric_limits<uint64_t>::max() - to;
}

}  // namespace

// Checks [s.to, s.to + len) of a tagged segment (or piece of one) before
// any byte of it is placed: a Write's against its STag, a Read Response's
// against the Read it answers (the next piece of it, the final one if
// s.last). Faults and returns false.
bool Engine::CheckTaggedRange(const Segment &s, uint32_t len) {
    Access access = Access::RemoteWrite;
    if (s.opcode == Opcode::ReadResponse) {
        if (orq_.empty()) return FaultOn(Errc::UnexpectedReadResponse, s), false;
        const OrqEntry &e = orq_.front();
        // Responses come in request order, each the next piece of its Read.
        if (s.stag != e.read.sink_stag) return FaultOn(Errc::TaggedInvalidStag, s), false;
        if (e.internal && e.read.size == 0) return true;  // nothing is placed (OnReadResponse)
        if (s.to != e.read.sink_to + e.received || len > e.read.size - e.received ||
            (s.last && e.received + len != e.read.size))
            return FaultOn(Errc::TaggedBaseBounds, s), false;
        access = Access::LocalWrite;
    }
    if (len == 0) return true;  // zero-length Write (an RTR, say): nothing to check or place
    if (Wraps(s.to, len)) return FaultOn(Errc::TaggedToWrap, s), false;
    const Errc e = ErrcFor(placement_.CheckTagged(s.stag, s.to, len, access));
    if (e != Errc::Ok) return FaultOn(e, s), false;
    return true;
}

void Engine::OnWrite(const Segment &s) {
    const auto len = static_cast<uint32_t>(s.payload.size());
    if (len == 0 || !CheckTaggedRange(s, len)) return;
    placement_.PlaceTagged(s.stag, s.to, s.payload.data(), len, Access::RemoteWrite);
}

void Engine::OnReadRequest(const Segment &s) {
    if (s.msn != rx_msn_[kQueueReadRequest]) return FaultOn(Errc::DdpMsnRange, s);
    // IRD is the number of Read Requests we queue; one more has no buffer
    // (siw reports RDMAP "catastrophic, stream" here; the DDP code says why).
    if (irq_.size() >= negotiated_.ird) return FaultOn(Errc::DdpNoBuffer, s);
    const ReadRequest &r = s.read;
    if (r.size > 0) {
        if (Wraps(r.source_to, r.size) || Wraps(r.sink_to, r.size)) return FaultOn(Errc::TaggedToWrap, s, true);
        const Errc e = ErrcFor(placement_.CheckTagged(r.source_stag, r.source_to, r.size, Access::RemoteRead));
        if (e != Errc::Ok) return FaultOn(e, s, true);
    }
    ++rx_msn_[kQueueReadRequest];
    IrqEntry q;
    q.read = r;
    q.header_length = static_cast<uint8_t>(s.header.size());
    std::copy(s.header.begin(), s.header.end(), q.header);
    q.ulpdu_length = s.ulpdu_length;
    irq_.push_back(q);
}

void Engine::OnReadResponse(const Segment &s) {
    const auto len = static_cast<uint32_t>(s.payload.size());
    if (!CheckTaggedRange(s, len)) return;
    OrqEntry &e = orq_.front();
    if (e.internal && e.read.size == 0) {
        // Our zero-length RTR or fence Read. Linux 6.1 siw, busy sending when
        // it arrives, answers with the payload of an earlier request (it
        // reuses that buffer): nothing is placed for a zero-length Read, so
        // take the answer for what it means (the peer got this far) and drop
        // the bytes instead of ending the connection.
        if (!s.last) return;
        ConfirmBelow(e.covers);
        orq_.pop_front();
        return;
    }
    if (len > 0) placement_.PlaceTagged(s.stag, s.to, s.payload.data(), len, Access::LocalWrite);
    e.received += len;
    if (!s.last) return;
    ConfirmBelow(e.covers);  // the peer took everything posted before this Read
    if (!e.internal) CompleteSlot(e.slot, OpStatus::Success, e.read.size);
    orq_.pop_front();
}

}  // namespace iwarp
