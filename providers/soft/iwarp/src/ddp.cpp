// DDP/RDMAP header validation (RFC 5041 §4, RFC 5040 §4) and FPDU encoding.
#include <algorithm>
#include <cstring>

#include "iwarp/bytes.h"
#include "iwarp/crc32c.h"
#include "iwarp/fpdu.h"

namespace iwarp {
namespace {

bool IsTaggedOpcode(Opcode op) {
    return op == Opcode::RdmaWrite || op == Opcode::ReadResponse;
}

bool IsInvalidateOpcode(Opcode op) {
    return op == Opcode::SendInvalidate || op == Opcode::SendSolicitedInvalidate;
}

uint32_t QueueOf(Opcode op) {
    switch (op) {
    case Opcode::ReadRequest: return kQueueReadRequest;
    case Opcode::Terminate: return kQueueTerminate;
    default: return kQueueSend;
    }
}

// Fills the fault; `header_bytes` > 0 copies that many header bytes for the
// Terminate (D flag, plus R when the Read Request header is complete).
bool Reject(Fault *f, Errc e, bool tagged, std::span<const uint8_t> ulpdu, size_t header_bytes) {
    *f = Fault{};
    f->errc = e;
    f->code = TerminateCodeFor(e, tagged);
    f->send_terminate = e != Errc::TerminateShape;  // never answer a Terminate with one
    if (header_bytes > 0 && ulpdu.size() >= header_bytes) {
        const size_t ddp = tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
        const size_t n = std::min(header_bytes, sizeof f->header);
        std::memcpy(f->header, ulpdu.data(), n);
        f->header_length = static_cast<uint8_t>(n);
        f->has_ddp_header = true;
        f->has_rdmap_header = n >= ddp + sizeof(ReadRequestHeader);
        f->has_segment_length = true;
        f->segment_length = static_cast<uint16_t>(ulpdu.size());
    }
    return false;
}

}  // namespace

bool ParseSegment(std::span<const uint8_t> u, bool strict, Segment *s, Fault *f) {
    if (u.size() < sizeof(TaggedHeader)) return Reject(f, Errc::FpduTooShort, false, u, 0);
    const uint8_t ddp = u[0], rdmap = u[1];
    const bool tagged = ddp & kDdpTagged;
    const size_t hdr = tagged ? sizeof(TaggedHeader) : sizeof(UntaggedHeader);
    if (u.size() < hdr) return Reject(f, Errc::FpduTooShort, tagged, u, 0);
    // Versions and opcode first: with either wrong the layout is unknown,
    // so the Terminate carries no headers (as siw).
    if ((ddp & kDdpVersionMask) != kDdpVersion) return Reject(f, Errc::DdpVersion, tagged, u, 0);
    if (strict && (ddp & kDdpReserved)) return Reject(f, Errc::DdpReserved, tagged, u, 0);
    if ((rdmap & kRdmapVersionMask) >> kRdmapVersionShift != kRdmapVersion)
        return Reject(f, Errc::RdmapVersion, tagged, u, 0);
    const uint8_t op = rdmap & kRdmapOpcodeMask;
    if (op > kMaxOpcode) return Reject(f, Errc::RdmapOpcode, tagged, u, 0);
    const auto opcode = static_cast<Opcode>(op);
    if (IsTaggedOpcode(opcode) != tagged) return Reject(f, Errc::RdmapOpcode, tagged, u, 0);
    if (strict && (rdmap & kRdmapReserved)) return Reject(f, Errc::RdmapReserved, tagged, u, hdr);

    *s = Segment{};
    s->opcode = opcode;
    s->tagged = tagged;
    s->last = ddp & kDdpLast;
    s->ulpdu_length = static_cast<uint16_t>(u.size());
    if (tagged) {
        s->stag = LoadBe32(u.data() + offsetof(TaggedHeader, stag));
        s->to = LoadBe64(u.data() + offsetof(TaggedHeader, to));
        s->header = u.first(hdr);
        s->payload = u.subspan(hdr);
        return true;
    }
    const uint32_t rsvd = LoadBe32(u.data() + offsetof(UntaggedHeader, rsvd));
    s->qn = LoadBe32(u.data() + offsetof(UntaggedHeader, qn));
    s->msn = LoadBe32(u.data() + offsetof(UntaggedHeader, msn));
    s->mo = LoadBe32(u.data() + offsetof(UntaggedHeader, mo));
    if (s->qn != QueueOf(opcode)) return Reject(f, Errc::DdpQueueNumber, false, u, hdr);
    if (IsInvalidateOpcode(opcode))
        s->invalidate_stag = rsvd;
    else if (strict && rsvd != 0)
        return Reject(f, Errc::RdmapReserved, false, u, hdr);
    s->header = u.first(hdr);
    s->payload = u.subspan(hdr);
    if (opcode == Opcode::ReadRequest) {
        // One whole segment: L set, MO 0, exactly the 28-byte RDMAP header.
        if (!s->last || s->mo != 0 || s->payload.size() != sizeof(ReadRequestHeader))
            return Reject(f, Errc::ReadRequestShape, false, u, hdr + std::min(s->payload.size(), sizeof(ReadRequestHeader)));
        const uint8_t *p = s->payload.data();
        s->read.sink_stag = LoadBe32(p + offsetof(ReadRequestHeader, sink_stag));
        s->read.sink_to = LoadBe64(p + offsetof(ReadRequestHeader, sink_to));
        s->read.size = LoadBe32(p + offsetof(ReadRequestHeader, size));
        s->read.source_stag = LoadBe32(p + offsetof(ReadRequestHeader, source_stag));
        s->read.source_to = LoadBe64(p + offsetof(ReadRequestHeader, source_to));
        s->header = u.first(hdr + sizeof(ReadRequestHeader));
        s->payload = {};
    } else if (opcode == Opcode::Terminate) {
        if (!s->last || s->mo != 0 || s->payload.size() < sizeof(TerminateControl))
            return Reject(f, Errc::TerminateShape, false, u, 0);
    }
    return true;
}

size_t BeginFpdu(std::vector<uint8_t> *out, size_t ulpdu_length) {
    const size_t start = out->size();
    out->resize(start + kMpaLengthSize);
    StoreBe16(out->data() + start, static_cast<uint16_t>(ulpdu_length));
    return start;
}

void FinishFpdu(std::vector<uint8_t> *out, size_t start, bool crc) {
    const size_t unpadded = out->size() - start;
    out->resize(start + (unpadded + 3) / 4 * 4, 0);
    const size_t crc_at = out->size();
    out->resize(crc_at + kMpaCrcSize);
    const uint32_t value = crc ? Crc32c(out->data() + start, crc_at - start) : 0;
    StoreLe32(out->data() + crc_at, value);
}

void AppendTaggedHeader(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t stag, uint64_t to) {
    TaggedHeader h{};
    h.ddp_ctrl = static_cast<uint8_t>(kDdpTagged | (last ? kDdpLast : 0) | kDdpVersion);
    h.rdmap_ctrl = static_cast<uint8_t>(kRdmapVersion << kRdmapVersionShift | static_cast<uint8_t>(op));
    StoreBe32(h.stag, stag);
    StoreBe64(h.to, to);
    const auto *b = reinterpret_cast<const uint8_t *>(&h);
    out->insert(out->end(), b, b + sizeof h);
}

void AppendUntaggedHeader(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                          uint32_t rsvd) {
    UntaggedHeader h{};
    h.ddp_ctrl = static_cast<uint8_t>((last ? kDdpLast : 0) | kDdpVersion);
    h.rdmap_ctrl = static_cast<uint8_t>(kRdmapVersion << kRdmapVersionShift | static_cast<uint8_t>(op));
    StoreBe32(h.rsvd, rsvd);
    StoreBe32(h.qn, qn);
    StoreBe32(h.msn, msn);
    StoreBe32(h.mo, mo);
    const auto *b = reinterpret_cast<const uint8_t *>(&h);
    out->insert(out->end(), b, b + sizeof h);
}

void AppendReadRequestHeader(std::vector<uint8_t> *out, const ReadRequest &rr) {
    ReadRequestHeader h{};
    StoreBe32(h.sink_stag, rr.sink_stag);
    StoreBe64(h.sink_to, rr.sink_to);
    StoreBe32(h.size, rr.size);
    StoreBe32(h.source_stag, rr.source_stag);
    StoreBe64(h.source_to, rr.source_to);
    const auto *b = reinterpret_cast<const uint8_t *>(&h);
    out->insert(out->end(), b, b + sizeof h);
}

void EncodeTagged(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t stag, uint64_t to,
                  std::span<const uint8_t> payload, bool crc) {
    const size_t start = BeginFpdu(out, sizeof(TaggedHeader) + payload.size());
    AppendTaggedHeader(out, op, last, stag, to);
    out->insert(out->end(), payload.begin(), payload.end());
    FinishFpdu(out, start, crc);
}

void EncodeUntagged(std::vector<uint8_t> *out, Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                    uint32_t rsvd, std::span<const uint8_t> payload, bool crc) {
    const size_t start = BeginFpdu(out, sizeof(UntaggedHeader) + payload.size());
    AppendUntaggedHeader(out, op, last, qn, msn, mo, rsvd);
    out->insert(out->end(), payload.begin(), payload.end());
    FinishFpdu(out, start, crc);
}

void EncodeReadRequest(std::vector<uint8_t> *out, uint32_t msn, const ReadRequest &rr, bool crc) {
    const size_t start = BeginFpdu(out, sizeof(UntaggedHeader) + sizeof(ReadRequestHeader));
    AppendUntaggedHeader(out, Opcode::ReadRequest, true, kQueueReadRequest, msn, 0);
    AppendReadRequestHeader(out, rr);
    FinishFpdu(out, start, crc);
}

}  // namespace iwarp
