// Terminate encoding and lenient parsing.
#include "iwarp/terminate.h"

#include <cstring>

#include "iwarp/bytes.h"

namespace iwarp {

void EncodeTerminate(std::vector<uint8_t> *out, const Fault &f, uint32_t msn, bool crc) {
    const bool d = f.has_ddp_header && f.header_length > 0;
    const size_t ulpdu =
        sizeof(UntaggedHeader) + sizeof(TerminateControl) + (d ? kTermSegmentLengthSize + f.header_length : 0);
    const size_t start = BeginFpdu(out, ulpdu);
    AppendUntaggedHeader(out, Opcode::Terminate, true, kQueueTerminate, msn, 0);
    TerminateControl c{};
    c.layer_etype = static_cast<uint8_t>(static_cast<uint8_t>(f.code.layer) << 4 | (f.code.etype & 0x0f));
    c.ecode = f.code.ecode;
    if (d) {
        c.hdrct = static_cast<uint8_t>(kTermHdrctD | (f.has_segment_length ? kTermHdrctM : 0) |
                                       (f.has_rdmap_header ? kTermHdrctR : 0));
    }
    const auto *cb = reinterpret_cast<const uint8_t *>(&c);
    out->insert(out->end(), cb, cb + sizeof c);
    if (d) {
        uint8_t len[kTermSegmentLengthSize];
        StoreBe16(len, f.has_segment_length ? f.segment_length : 0);
        out->insert(out->end(), len, len + sizeof len);
        out->insert(out->end(), f.header, f.header + f.header_length);
    }
    FinishFpdu(out, start, crc);
}

namespace {

// The Layer and EType pairs RFC 5040 7.2 defines (RDMAP and DDP: local
// catastrophic, then their two kinds; the LLP: its one).
bool Defined(unsigned layer, unsigned etype) { return layer <= 1 ? etype <= 2 : layer == 2 && etype == 0; }

}  // namespace

bool ParseTerminate(std::span<const uint8_t> p, TerminateMessage *m) {
    *m = TerminateMessage{};
    if (p.size() < sizeof(TerminateControl)) return false;
    // Linux siw on a little-endian host lays its control word out with
    // bit-fields: the Layer in the low nibble of the first byte and the
    // EType in the high one, and M, D and R in the low bits of the third
    // byte, where RFC 5040 has its reserved bits (it puts them high). Its
    // flags give it away; with no flag set, a pair RFC 5040 does not define
    // whose swap it does (siw's "DDP, untagged" read as "LLP, 1") is siw's.
    const unsigned high = p[0] >> 4, low = p[0] & 0x0f;
    const bool siw_flags = (p[2] & 0x07) != 0 && (p[2] & (kTermHdrctM | kTermHdrctD | kTermHdrctR)) == 0;
    m->bit_fields = siw_flags || (p[2] == 0 && !Defined(high, low) && Defined(low, high));
    m->code.layer = static_cast<Layer>(m->bit_fields ? low : high);
    m->code.etype = static_cast<uint8_t>(m->bit_fields ? high : low);
    m->code.ecode = p[1];
    m->m = m->bit_fields ? (p[2] & 0x01) : (p[2] & kTermHdrctM);
    m->d = m->bit_fields ? (p[2] & 0x02) : (p[2] & kTermHdrctD);
    m->r = m->bit_fields ? (p[2] & 0x04) : (p[2] & kTermHdrctR);
    auto rest = p.subspan(sizeof(TerminateControl));
    if (!m->d || rest.size() < kTermSegmentLengthSize + sizeof(TaggedHeader)) return true;
    m->segment_length = LoadBe16(rest.data());
    const auto h = rest.subspan(kTermSegmentLengthSize);
    Segment &t = m->terminated;
    t.tagged = h[0] & kDdpTagged;
    t.last = h[0] & kDdpLast;
    t.opcode = static_cast<Opcode>(h[1] & kRdmapOpcodeMask);
    if (t.tagged) {
        t.stag = LoadBe32(h.data() + offsetof(TaggedHeader, stag));
        t.to = LoadBe64(h.data() + offsetof(TaggedHeader, to));
        m->has_ddp_header = true;
        return true;
    }
    if (h.size() < sizeof(UntaggedHeader)) return true;
    t.invalidate_stag = LoadBe32(h.data() + offsetof(UntaggedHeader, rsvd));
    t.qn = LoadBe32(h.data() + offsetof(UntaggedHeader, qn));
    t.msn = LoadBe32(h.data() + offsetof(UntaggedHeader, msn));
    t.mo = LoadBe32(h.data() + offsetof(UntaggedHeader, mo));
    m->has_ddp_header = true;
    const auto rr = h.subspan(sizeof(UntaggedHeader));
    if (m->r && rr.size() >= sizeof(ReadRequestHeader)) {
        t.read.sink_stag = LoadBe32(rr.data() + offsetof(ReadRequestHeader, sink_stag));
        t.read.sink_to = LoadBe64(rr.data() + offsetof(ReadRequestHeader, sink_to));
        t.read.size = LoadBe32(rr.data() + offsetof(ReadRequestHeader, size));
        t.read.source_stag = LoadBe32(rr.data() + offsetof(ReadRequestHeader, source_stag));
        t.read.source_to = LoadBe64(rr.data() + offsetof(ReadRequestHeader, source_to));
        m->has_rdmap_header = true;
    }
    return true;
}

}  // namespace iwarp
