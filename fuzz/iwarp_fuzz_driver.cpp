// Fuzz driver, modes 0 and 1: the MPA frame and FPDU decoders. Oracles: a
// stream decodes the same whole and in pieces; what decodes re-encodes to
// something that decodes to the same fields; every fault's Terminate is a
// valid FPDU carrying the fault's code.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "iwarp/fpdu.h"
#include "iwarp/mpa.h"
#include "iwarp/terminate.h"
#include "iwarp_fuzz_driver.h"

namespace iwarp_fuzz {

using namespace iwarp;

void Check(bool ok, const char *what, const char *file, int line) {
    if (ok) return;
    std::fprintf(stderr, "iwarp fuzz invariant failed: %s (%s:%d)\n", what, file, line);
    std::abort();
}

namespace {

void FramesMpa(uint8_t flags, Splitter &split, std::span<const uint8_t> s) {
    const auto expect = static_cast<MpaFrameDecoder::Expect>((flags >> 2) % 3);
    MpaFrameDecoder d(expect);
    size_t pos = 0;
    while (pos < s.size() && d.status() == MpaFrameDecoder::Status::NeedMore) {
        size_t used = 0;
        d.Feed(s.subspan(pos, split.Next(s.size() - pos)), &used);
        IWARP_FUZZ_CHECK(used <= s.size() - pos);
        pos += used;
    }
    // Whole-input decoding agrees.
    MpaFrameDecoder whole(expect);
    size_t used = 0;
    whole.Feed(s, &used);
    IWARP_FUZZ_CHECK(whole.status() == d.status() && whole.error() == d.error());
    if (d.status() != MpaFrameDecoder::Status::Done) return;
    IWARP_FUZZ_CHECK(used == pos);
    const MpaFrame &f = d.frame();
    IWARP_FUZZ_CHECK(f.private_data.size() <= kMpaMaxPrivateData);
    std::vector<uint8_t> again;
    IWARP_FUZZ_CHECK(EncodeMpaFrame(f, &again));
    MpaFrameDecoder re(expect);
    IWARP_FUZZ_CHECK(re.Feed(again, &used) == MpaFrameDecoder::Status::Done && used == again.size());
    const MpaFrame &g = re.frame();
    IWARP_FUZZ_CHECK(g.request == f.request && g.revision == f.revision && g.crc == f.crc && g.reject == f.reject &&
                     g.markers == f.markers && g.enhanced == f.enhanced && g.private_data == f.private_data);
    if (f.enhanced)
        IWARP_FUZZ_CHECK(g.ird == f.ird && g.ord == f.ord && g.peer_to_peer == f.peer_to_peer && g.rtr == f.rtr);
}

struct Seen {
    FpduDecoder::Status status;
    Opcode opcode;
    uint16_t ulpdu;
    Errc errc;
};

std::vector<Seen> DecodeStream(const FpduOptions &opt, std::span<const uint8_t> s, Splitter *split) {
    std::vector<Seen> seen;
    FpduDecoder d(opt);
    size_t pos = 0;
    while (pos < s.size()) {
        const size_t piece_end = pos + (split ? split->Next(s.size() - pos) : s.size() - pos);
        while (pos < piece_end) {
            size_t used = 0;
            const auto st = d.Feed(s.subspan(pos, piece_end - pos), &used);
            IWARP_FUZZ_CHECK(used <= piece_end - pos);
            pos += used;
            if (st == FpduDecoder::Status::NeedMore) {
                IWARP_FUZZ_CHECK(pos == piece_end);
                break;
            }
            if (st == FpduDecoder::Status::Error) {
                const Fault &f = d.fault();
                IWARP_FUZZ_CHECK(f.errc != Errc::Ok && f.header_length <= sizeof f.header);
                if (f.send_terminate) {  // the Terminate we would send is itself valid
                    std::vector<uint8_t> t;
                    EncodeTerminate(&t, f, 1, opt.crc);
                    FpduDecoder td(FpduOptions{opt.crc});
                    size_t tu = 0;
                    IWARP_FUZZ_CHECK(td.Feed(t, &tu) == FpduDecoder::Status::Segment && tu == t.size());
                    TerminateMessage m;
                    IWARP_FUZZ_CHECK(ParseTerminate(td.segment().payload, &m) && m.code == f.code);
                }
                seen.push_back({st, Opcode::Send, 0, f.errc});
                return seen;
            }
            const Segment &g = d.segment();
            IWARP_FUZZ_CHECK(g.header.size() + g.payload.size() == g.ulpdu_length);
            IWARP_FUZZ_CHECK(g.ulpdu_length <= opt.max_ulpdu);
            std::vector<uint8_t> again;  // re-encode and compare
            if (g.opcode == Opcode::ReadRequest)
                EncodeReadRequest(&again, g.msn, g.read, opt.crc);
            else if (g.tagged)
                EncodeTagged(&again, g.opcode, g.last, g.stag, g.to, g.payload, opt.crc);
            else
                EncodeUntagged(&again, g.opcode, g.last, g.qn, g.msn, g.mo, g.invalidate_stag, g.payload, opt.crc);
            if (opt.strict) {
                FpduDecoder rd(opt);
                size_t ru = 0;
                IWARP_FUZZ_CHECK(rd.Feed(again, &ru) == FpduDecoder::Status::Segment && ru == again.size());
                IWARP_FUZZ_CHECK(rd.segment().opcode == g.opcode && rd.segment().ulpdu_length == g.ulpdu_length);
            }
            if (g.opcode == Opcode::Terminate) {
                TerminateMessage m;
                IWARP_FUZZ_CHECK(ParseTerminate(g.payload, &m));
            }
            seen.push_back({st, g.opcode, g.ulpdu_length, Errc::Ok});
        }
    }
    return seen;
}

void FramesFpdu(uint8_t flags, Splitter &split, Cursor &in) {
    FpduOptions opt;
    opt.crc = flags & 0x04;
    opt.strict = !(flags & 0x08);
    const uint8_t limit = in.Byte();
    opt.max_ulpdu = limit == 0 ? kMaxUlpduLength : size_t{limit} * 4;
    const auto s = in.Rest();
    const auto chunked = DecodeStream(opt, s, &split);
    const auto whole = DecodeStream(opt, s, nullptr);
    IWARP_FUZZ_CHECK(chunked.size() == whole.size());
    for (size_t i = 0; i < whole.size(); ++i)
        IWARP_FUZZ_CHECK(chunked[i].status == whole[i].status && chunked[i].opcode == whole[i].opcode &&
                         chunked[i].ulpdu == whole[i].ulpdu && chunked[i].errc == whole[i].errc);
}

}  // namespace

void RunFrames(uint8_t flags, Splitter &split, Cursor &in) {
    if ((flags & 3) == 0)
        FramesMpa(flags, split, in.Rest());
    else
        FramesFpdu(flags, split, in);
}

void RunOne(const uint8_t *data, size_t size) {
    Cursor in(data, size);
    const uint8_t flags = in.Byte();
    Splitter split(in.Byte());
    if ((flags & 3) < 2)
        RunFrames(flags, split, in);
    else
        RunEngineMode(flags, split, in);
}

}  // namespace iwarp_fuzz
