// Writes a seed corpus for iwarp_fuzzer into the directory given as the
// first argument: valid inputs for every mode, built with the library's own
// encoders, so the fuzzer starts from streams that get deep into the engine.
//   iwarp_fuzz_seeds <dir>
#include <cstdio>
#include <string>
#include <vector>

#include "iwarp/fpdu.h"
#include "iwarp/handshake.h"
#include "iwarp/mpa.h"
#include "iwarp/terminate.h"

using namespace iwarp;
using Bytes = std::vector<uint8_t>;

namespace {

int g_count = 0;

void Write(const std::string &dir, const std::string &name, const Bytes &b) {
    const std::string path = dir + "/seed-" + name;
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) return;
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
    ++g_count;
}

Bytes Cat(Bytes a, const Bytes &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Bytes Frame(const MpaFrame &f) {
    Bytes b;
    EncodeMpaFrame(f, &b);
    return b;
}

// A stream exercising every opcode at an engine with receives and Reads posted.
Bytes EngineStream(bool crc, bool with_rtr) {
    Bytes s;
    const Bytes data(300, 0x42);
    if (with_rtr) EncodeTagged(&s, Opcode::RdmaWrite, true, 1, 0, {}, crc);
    EncodeUntagged(&s, Opcode::Send, false, 0, 1, 0, 0, Bytes(data.begin(), data.begin() + 20), crc);
    EncodeUntagged(&s, Opcode::Send, true, 0, 1, 20, 0, Bytes(data.begin(), data.begin() + 10), crc);
    EncodeUntagged(&s, Opcode::SendSolicitedInvalidate, true, 0, 2, 0, 4, Bytes(5, 1), crc);
    EncodeTagged(&s, Opcode::RdmaWrite, false, 1, 0x1000, Bytes(100, 2), crc);
    EncodeTagged(&s, Opcode::RdmaWrite, true, 3, 0x3010, Bytes(50, 3), crc);
    EncodeReadRequest(&s, 1, ReadRequest{9, 0x100, 200, 2, 0x2000}, crc);
    EncodeReadRequest(&s, 2, ReadRequest{9, 0x400, 0, 0, 0}, crc);
    EncodeTagged(&s, Opcode::ReadResponse, false, 1, 0x1010, Bytes(8, 4), crc);
    EncodeTagged(&s, Opcode::ReadResponse, true, 1, 0x1018, Bytes(8, 5), crc);
    EncodeUntagged(&s, Opcode::SendSolicited, true, 0, 3, 0, 0, Bytes(1, 6), crc);
    return s;
}

// Streams aimed at the placement checks: access rights, another
// connection's STag, a Read source invalidated before its response, and
// responses to the Reads the harness posts (sink STag 1 at 0x1000 + byte).
Bytes PlacementStream(int which) {
    Bytes s;
    switch (which) {
    case 0: EncodeTagged(&s, Opcode::RdmaWrite, true, 2, 0x2000, Bytes(16, 1), false); break;  // read-only
    case 1: EncodeReadRequest(&s, 1, ReadRequest{9, 0, 16, 3, 0x3000}, false); break;          // write-only
    case 2: EncodeTagged(&s, Opcode::RdmaWrite, true, 5, 0x5000, Bytes(16, 1), false); break;  // not associated
    case 3:  // Read from STag 4, then a Send with Invalidate of STag 4 before the response goes out
        EncodeReadRequest(&s, 1, ReadRequest{9, 0, 64, 4, 0}, false);
        EncodeUntagged(&s, Opcode::SendInvalidate, true, 0, 1, 0, 4, Bytes(2, 1), false);
        break;
    default:  // Read Responses for the harness's first Read (sink 1 at 0x1010, 16 bytes)
        EncodeTagged(&s, Opcode::ReadResponse, false, 1, 0x1010, Bytes(8, 4), false);
        EncodeTagged(&s, Opcode::ReadResponse, true, 1, 0x1018, Bytes(8, 5), false);
        break;
    }
    return s;
}

Bytes TerminateFpdu(bool crc) {
    Fault f;
    f.code = {Layer::Ddp, etype::kDdpTagged, ecode::kDdpTBaseBounds};
    f.send_terminate = f.has_ddp_header = f.has_segment_length = true;
    f.segment_length = 114;
    f.header_length = sizeof(TaggedHeader);
    Bytes t;
    EncodeTerminate(&t, f, 1, crc);
    return t;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus-dir>\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    // Mode 0: MPA frames (flags bits 2-3: expect request, reply, either).
    MpaFrame req;
    req.enhanced = true;
    req.ird = 4;
    req.ord = 2;
    req.peer_to_peer = true;
    req.rtr = kRtrWrite | kRtrRead;
    req.private_data = Bytes(12, 0x33);
    MpaFrame rep = req;
    rep.request = false;
    rep.rtr = kRtrRead;
    MpaFrame v1 = req;
    v1.revision = 1;
    v1.enhanced = false;
    v1.crc = true;
    MpaFrame rej = rep;
    rej.reject = true;
    Write(dir, "mpa-v2-request", Cat({0x00, 0x00}, Frame(req)));
    Write(dir, "mpa-v2-reply-chunked", Cat({0x04, 0x13}, Frame(rep)));
    Write(dir, "mpa-v1-request", Cat({0x08, 0x01}, Frame(v1)));
    Write(dir, "mpa-reject", Cat({0x04, 0x07}, Frame(rej)));
    // Mode 1: FPDU streams (flags: 0x04 CRC, 0x08 lenient; then a size limit byte).
    Write(dir, "fpdu-all", Cat({0x01, 0x00, 0x00}, EngineStream(false, false)));
    Write(dir, "fpdu-all-crc-chunked", Cat({0x05, 0x25, 0x00}, EngineStream(true, true)));
    Write(dir, "fpdu-terminate", Cat({0x01, 0x03, 0x00}, TerminateFpdu(false)));
    Write(dir, "fpdu-limit", Cat({0x09, 0x00, 0x10}, EngineStream(false, false)));
    // Mode 2: engine. Bytes: flags, split, negotiated (role|crc|rtr|hold),
    // ird|ord, then the 9 harness bytes: options (MSS 64 + 30*32, stall,
    // strict, 0x80 pieces), Pull budget, 3 receive sizes, ops (Send with SE and
    // Invalidate, Write, Read), send size / 3, Read sink offset, Read length.
    const Bytes engine_cfg = {0x3e, 0x20, 0x80, 0xff, 0x3f, 0x1f, 0x10, 0x10, 0x10};
    Write(dir, "engine-initiator", Cat(Cat({0x02, 0x00, 0x00, 0x1b}, engine_cfg), EngineStream(false, false)));
    Write(dir, "engine-initiator-crc", Cat(Cat({0x02, 0x31, 0x02, 0x1b}, engine_cfg), EngineStream(true, false)));
    Write(dir, "engine-responder-rtr", Cat(Cat({0x02, 0x05, 0x29, 0x1b}, engine_cfg), EngineStream(false, true)));
    Bytes pieces_cfg = engine_cfg;
    pieces_cfg[0] |= 0x80;  // options: Write, Read Response and Send payloads placed piece by piece (and straight into place)
    Write(dir, "engine-pieces-chunked", Cat(Cat({0x02, 0x13, 0x00, 0x1b}, pieces_cfg), EngineStream(false, false)));
    Write(dir, "engine-terminate", Cat(Cat({0x02, 0x00, 0x00, 0x1b}, engine_cfg), TerminateFpdu(false)));
    const char *placement_names[] = {"write-read-only", "read-write-only", "not-associated", "fetch-after-invalidate",
                                     "read-responses"};
    for (int i = 0; i < 5; ++i)
        Write(dir, std::string("engine-") + placement_names[i],
              Cat(Cat({0x02, 0x00, 0x00, 0x1b}, engine_cfg), PlacementStream(i)));
    // Mode 3: handshake then engine. Responder (flag 0x04) fed a request;
    // initiator fed a reply. Bytes: config a, config b, private data length.
    Initiator ini(MpaConfig{}, Bytes(4, 1));
    Write(dir, "handshake-responder",
          Cat(Cat(Cat({0x07, 0x00, 0x3a, 0x7f, 0x02}, ini.request()), engine_cfg), EngineStream(false, true)));
    MpaFrame accept;
    accept.request = false;
    accept.enhanced = true;
    accept.ird = accept.ord = 1;
    accept.peer_to_peer = true;
    accept.rtr = kRtrWrite;
    Write(dir, "handshake-initiator",
          Cat(Cat(Cat({0x03, 0x11, 0x3a, 0x7f, 0x00}, Frame(accept)), engine_cfg), EngineStream(false, false)));
    std::printf("%d seeds written to %s\n", g_count, dir.c_str());
    return 0;
}
