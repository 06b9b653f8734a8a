// Long tagged segments placed piece by piece (CRC off): the decoder hands
// on a Write or Read Response whose FPDU has not arrived whole as its
// header (checked for the whole range before a byte lands) and then pieces
// of payload; a provider may read the payload straight into place
// (DirectBuffers / DirectPlaced), every piece checked again first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "iwarp/engine.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

constexpr uint32_t kStag = 0x77;
constexpr uint64_t kBase = 0x10000;

Bytes TaggedFpdu(Opcode op, bool last, uint64_t to, const Bytes &payload) {
    Bytes b;
    EncodeTagged(&b, op, last, kStag, to, payload, false);
    return b;
}

TEST(Pieces, DecoderHandsOnALongTaggedSegmentAsItArrives) {
    const Bytes payload = Pattern(10001);  // odd: 3 pad bytes
    Bytes wire = TaggedFpdu(Opcode::RdmaWrite, true, kBase, payload);
    EncodeUntagged(&wire, Opcode::Send, true, kQueueSend, 1, 0, 0, Pattern(8), false);
    for (const auto &[name, chunk] : Chunkings()) {
        FpduOptions opt;
        opt.piece_min = 4096;
        FpduDecoder d(opt);
        Bytes got;
        int opened = 0, sends = 0, lasts = 0, wholes = 0;
        uint64_t next_to = kBase;
        size_t pos = 0;
        for (size_t k : Chunks(wire.size(), chunk == SIZE_MAX ? wire.size() : chunk, 5)) {
            auto in = std::span<const uint8_t>(wire).subspan(pos, k);
            pos += k;
            while (!in.empty()) {
                size_t used = 0;
                const auto st = d.Feed(in, &used);
                in = in.subspan(used);
                ASSERT_NE(st, FpduDecoder::Status::Error) << name;
                const Segment &s = d.segment();
                if (st == FpduDecoder::Status::Opened) {
                    ++opened;
                    EXPECT_TRUE(s.payload.empty());
                    EXPECT_EQ(s.ulpdu_length, sizeof(TaggedHeader) + payload.size());
                    EXPECT_EQ(s.to, kBase);
                    EXPECT_EQ(d.piece_left(), payload.size());
                } else if (st == FpduDecoder::Status::Piece) {
                    EXPECT_EQ(s.to, next_to) << name;
                    next_to += s.payload.size();
                    got.insert(got.end(), s.payload.begin(), s.payload.end());
                    lasts += s.last;
                    if (s.last) {
                        EXPECT_EQ(got.size(), payload.size()) << "last only on the final piece";
                    }
                } else if (st == FpduDecoder::Status::Segment) {
                    if (s.opcode == Opcode::Send) ++sends;
                    if (s.opcode == Opcode::RdmaWrite) {
                        ++wholes;
                        got.assign(s.payload.begin(), s.payload.end());
                    }
                }
            }
        }
        EXPECT_EQ(got, payload) << name;
        EXPECT_EQ(sends, 1) << name << ": the FPDU after it decodes (pad and CRC were skipped)";
        if (chunk == SIZE_MAX) {
            EXPECT_EQ(wholes, 1) << "an FPDU that arrives whole is handed on whole";
            EXPECT_EQ(opened, 0);
        } else {
            EXPECT_EQ(opened, 1) << name;
            EXPECT_EQ(lasts, 1) << name;
        }
    }
}

// RFC 5044: pad bytes are ignored on receive (Linux 6.1 siw with CRC on
// sends non-zero ones). After pieces, too: the segment ends normally.
TEST(Pieces, NonZeroPadAfterPiecesIsIgnored) {
    const Bytes payload = Pattern(5001);
    Bytes wire = TaggedFpdu(Opcode::RdmaWrite, true, kBase, payload);
    wire[wire.size() - 5] = 1;  // a pad byte (3 pad bytes, then 4 CRC bytes)
    FpduOptions opt;
    opt.piece_min = 4096;
    FpduDecoder d(opt);
    size_t used = 0;
    ASSERT_EQ(d.Feed(std::span<const uint8_t>(wire).first(100), &used), FpduDecoder::Status::Opened);
    auto rest = std::span<const uint8_t>(wire).subspan(used);
    Bytes got;
    FpduDecoder::Status st;
    do {
        st = d.Feed(rest, &used);
        if (st == FpduDecoder::Status::Piece) got.insert(got.end(), d.segment().payload.begin(), d.segment().payload.end());
        rest = rest.subspan(used);
    } while (st == FpduDecoder::Status::Piece || (st == FpduDecoder::Status::NeedMore && !rest.empty()));
    EXPECT_EQ(st, FpduDecoder::Status::NeedMore);
    EXPECT_TRUE(rest.empty());
    EXPECT_FALSE(d.open());
    EXPECT_EQ(got, payload);
}

TEST(Pieces, ShortOrCrcProtectedSegmentsAreNeverPieces) {
    for (bool crc : {false, true}) {
        const size_t n = crc ? 8000 : 4095;  // CRC on: must be whole to be checked; below piece_min
        Bytes wire;
        EncodeTagged(&wire, Opcode::RdmaWrite, true, kStag, kBase, Pattern(n), crc);
        FpduOptions opt;
        opt.crc = crc;
        opt.piece_min = 4096;
        FpduDecoder d(opt);
        for (size_t pos = 0; pos < wire.size(); pos += 100) {
            size_t used = 0;
            const auto st = d.Feed(std::span<const uint8_t>(wire).subspan(pos, std::min<size_t>(100, wire.size() - pos)), &used);
            EXPECT_TRUE(st == FpduDecoder::Status::NeedMore || st == FpduDecoder::Status::Segment) << crc;
        }
        EXPECT_EQ(d.status(), FpduDecoder::Status::Segment);
    }
}

// A connected pair whose FPDUs can be 64 KiB (loopback's MSS).
struct BigPair : Pair {
    static EngineOptions Big() {
        EngineOptions o;
        o.mss = 65536;
        return o;
    }
    BigPair() : Pair(Plain(Role::Initiator), Plain(Role::Responder), Big()) {}
};

TEST(Pieces, WriteLandsIntactUnderEveryChunking) {
    for (const auto &[name, chunk] : Chunkings()) {
        if (chunk > 1 && chunk < 7) continue;  // (the fake's check log makes tiny chunks slow)
        BigPair p;
        const size_t n = chunk == 1 ? 5000 : 140000;  // one FPDU byte by byte; else three
        p.pb.Add(kStag, kBase, n, true, false);
        const Bytes data = Pattern(n, 9);
        const ConstBuffer b{data.data(), data.size()};
        ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
        p.Pump(chunk);
        EXPECT_FALSE(p.b.failed()) << name;
        EXPECT_EQ(p.pb.regions[kStag].memory, data) << name;
    }
}

TEST(Pieces, OutOfRangeWriteIsRefusedBeforeItsFirstPieceLands) {
    BigPair p;
    p.pb.Add(kStag, kBase, 30000, true, false);
    const Bytes data = Pattern(30001);  // one FPDU, one byte too long
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
    p.Pump(1000);
    EXPECT_EQ(p.pb.Count('P'), 0u);
    ASSERT_TRUE(p.b.failed());
    EXPECT_EQ(p.b.local_fault().errc, Errc::TaggedBaseBounds);
    ASSERT_TRUE(p.a.remote_terminate().has_value());
    EXPECT_EQ(p.a.remote_terminate()->terminated.to, kBase);
    EXPECT_EQ(p.a.remote_terminate()->segment_length, sizeof(TaggedHeader) + data.size());
}

// Feeds `wire` to `e` as TcpPath reads its socket: each read of at most
// `max_read` bytes goes first into the buffers DirectBuffers names (copied
// straight there), then into our own buffer of ReadHintAfter bytes for
// Receive; with nothing named, ReadHint bytes for Receive. Returns the
// bytes that went straight into place.
size_t FeedLikeASocket(Engine &e, const Bytes &wire, size_t max_read, size_t *reads = nullptr) {
    size_t pos = 0, direct = 0;
    while (pos < wire.size()) {
        if (reads) ++*reads;
        MutableBuffer to[4];
        const size_t n = e.DirectBuffers(to, 4);
        size_t in_place = 0;
        for (size_t i = 0; i < n; ++i) in_place += to[i].length;
        const size_t tail = n > 0 ? e.ReadHintAfter(in_place, max_read) : e.ReadHint(max_read);
        const size_t k = std::min({in_place + tail, max_read, wire.size() - pos});
        const size_t placed = std::min(k, in_place);
        for (size_t i = 0, at = 0; i < n && at < placed; ++i) {
            const size_t m = std::min(to[i].length, placed - at);
            std::memcpy(to[i].data, wire.data() + pos + at, m);
            at += m;
        }
        if (placed > 0) e.DirectPlaced(placed);
        direct += placed;
        if (k > placed) {
            const RxResult r = e.Receive(std::span<const uint8_t>(wire).subspan(pos + placed, k - placed));
            EXPECT_EQ(r.consumed, k - placed);
            if (r.status != RxStatus::Ok) break;
        }
        pos += k;
    }
    return direct;
}

TEST(Pieces, WritePayloadGoesStraightIntoPlaceAndItsLastByteLast) {
    BigPair p;
    p.pb.Add(kStag, kBase, 300000, true, false);
    const Bytes data = Pattern(300000, 3);
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
    ASSERT_TRUE(p.a.PostSend(2, {}));
    Bytes wire;
    p.a.Pull(&wire, 1 << 20);
    ASSERT_TRUE(p.b.PostReceive(9, {}));
    size_t reads = 0;
    const size_t direct = FeedLikeASocket(p.b, wire, 40000, &reads);
    EXPECT_FALSE(p.b.failed());
    EXPECT_EQ(p.pb.regions[kStag].memory, data);
    // All but what preceded the first header read and one byte per FPDU
    // (stored last, through PlaceTagged) went straight into place.
    const size_t fpdus = (data.size() + p.a.max_payload(true) - 1) / p.a.max_payload(true);
    EXPECT_GE(direct, data.size() - 40000 - fpdus);
    EXPECT_LT(reads, 4 * fpdus + 20);
    for (const FakePlacement::Call &c : p.pb.calls)
        if (c.what == 'P' && c.to + c.len == kBase + data.size()) {
            EXPECT_EQ(c.len, 1u) << "the last byte alone, last";
        }
    Completion c;
    ASSERT_TRUE(p.b.PollCompletion(&c));
    EXPECT_EQ(c.kind, CompletionKind::Receive);  // the Send behind the Write was decoded in order
}

// With room enough, one read per FPDU: the rest of a payload straight into
// place, and its last byte, trailer and the next header for Receive. Feeds
// `wire` (one `size`-byte message) with TcpPath's buffer size, which is not
// a multiple of the FPDU size: the first read ends inside an FPDU, and from
// there on each read ends after a header.
void FeedOneReadPerFpdu(Engine &e, const Bytes &wire, size_t size, size_t max_payload) {
    const size_t buffer = 252 * 1024;
    size_t reads = 0;
    const size_t direct = FeedLikeASocket(e, wire, buffer, &reads);
    EXPECT_FALSE(e.failed());
    const size_t fpdus = (size + max_payload - 1) / max_payload;
    EXPECT_EQ(fpdus, 17u);  // 64 KiB FPDUs for 1 MiB
    EXPECT_LE(reads, fpdus - buffer / 65536 + 1);
    // All but the first read, each FPDU's last byte and the short last FPDU
    // (under piece_min) went straight into place.
    EXPECT_GE(direct, size - buffer - fpdus - 4096);
}

TEST(Pieces, OneReadPerFpduWhenTheBytesAreThere) {
    BigPair p;
    const size_t size = 1 << 20;
    p.pb.Add(kStag, kBase, size, true, false);
    const Bytes data = Pattern(size, 5);
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
    Bytes wire;
    p.a.Pull(&wire, 2 << 20);
    FeedOneReadPerFpdu(p.b, wire, size, p.a.max_payload(true));
    EXPECT_EQ(p.pb.regions[kStag].memory, data);
}

TEST(Pieces, NoReadPastDirectBuffersThatStopShort) {
    BigPair p;
    p.pb.Add(kStag, kBase, 100000, true, false);
    const Bytes data = Pattern(100000, 6);
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
    Bytes wire;
    p.a.Pull(&wire, 1 << 20);
    const size_t first = std::min(wire.size(), p.b.ReadHint(1000));
    ASSERT_EQ(p.b.Receive(std::span<const uint8_t>(wire).first(first)).status, RxStatus::Ok);
    MutableBuffer to[4];
    ASSERT_EQ(p.b.DirectBuffers(to, 4), 1u);
    const size_t in_place = to[0].length;
    EXPECT_EQ(p.b.ReadHintAfter(in_place - 1, 1 << 20), 0u) << "the named bytes must come first";
    EXPECT_EQ(p.b.ReadHintAfter(0, 1 << 20), 0u);
    // The last byte, pad and CRC, and the next header (MPA length and the
    // longer, untagged, DDP header).
    const size_t after = p.b.ReadHintAfter(in_place, 1 << 20);
    EXPECT_GE(after, 1u + kMpaCrcSize + kMpaLengthSize + sizeof(UntaggedHeader));
    EXPECT_LE(after, 1u + 3 + kMpaCrcSize + kMpaLengthSize + sizeof(UntaggedHeader));
    EXPECT_EQ(p.b.ReadHintAfter(in_place, 3), 3u) << "never more than the room";
}

TEST(Pieces, ReadResponseGoesStraightIntoTheSink) {
    BigPair p;
    p.pa.Add(kStag, kBase, 150000, false, false);  // our sink (local write)
    p.pb.Add(0x99, 0x500000, 150000, false, true);
    p.pb.regions[0x99].memory = Pattern(150000, 4);
    ASSERT_TRUE(p.a.PostRead(1, kStag, kBase, 150000, 0x99, 0x500000));
    p.Move(p.a, p.b, SIZE_MAX, nullptr);  // the Read Request
    Bytes wire;
    p.b.Pull(&wire, 1 << 20);
    const size_t direct = FeedLikeASocket(p.a, wire, 20000);
    EXPECT_GT(direct, 100000u);
    EXPECT_EQ(p.pa.regions[kStag].memory, p.pb.regions[0x99].memory);
    Completion c;
    ASSERT_TRUE(p.a.PollCompletion(&c));
    EXPECT_EQ(c.kind, CompletionKind::Read);
    EXPECT_EQ(c.status, OpStatus::Success);
    EXPECT_EQ(c.length, 150000u);
}

TEST(Pieces, MemoryWithdrawnBetweenPiecesIsNeverWrittenAgain) {
    BigPair p;
    p.pb.Add(kStag, kBase, 60000, true, false);
    const Bytes data = Pattern(60000, 5);
    const ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(1, {&b, 1}, kStag, kBase));
    Bytes wire;
    p.a.Pull(&wire, 1 << 20);
    size_t used = 0;
    ASSERT_EQ(p.b.Receive(std::span<const uint8_t>(wire).first(16)).status, RxStatus::Ok);
    MutableBuffer to[4];
    ASSERT_EQ(p.b.DirectBuffers(to, 4), 1u);
    std::memcpy(to[0].data, wire.data() + 16, 1000);
    p.b.DirectPlaced(1000);
    used = 16 + 1000;
    p.pb.regions[kStag].valid = false;  // deregistered now
    EXPECT_EQ(p.b.DirectBuffers(to, 4), 0u);
    EXPECT_TRUE(p.b.failed());
    EXPECT_EQ(p.b.local_fault().errc, Errc::TaggedInvalidStag);
    p.b.Receive(std::span<const uint8_t>(wire).subspan(used));  // discarded
    const Bytes &m = p.pb.regions[kStag].memory;
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 1000, m.begin()));
    EXPECT_TRUE(std::all_of(m.begin() + 1000, m.end(), [](uint8_t x) { return x == 0; }));
    p.Move(p.b, p.a, SIZE_MAX, nullptr);
    ASSERT_TRUE(p.a.remote_terminate().has_value());
    EXPECT_EQ(p.a.remote_terminate()->code.ecode, ecode::kDdpTInvalidStag);
}

TEST(Pieces, ALongWriteCannotStandInForTheRtr) {
    Negotiated b_neg = Plain(Role::Responder);
    b_neg.rtr = RtrType::Write;
    Pair p(Plain(Role::Initiator), b_neg, BigPair::Big());
    p.pb.Add(kStag, kBase, 60000, true, false);
    const Bytes wire = TaggedFpdu(Opcode::RdmaWrite, true, kBase, Pattern(50000));
    ASSERT_EQ(p.b.Receive(std::span<const uint8_t>(wire).first(3000)).status, RxStatus::Failed);
    EXPECT_EQ(p.b.local_fault().errc, Errc::MpaNoMatchingRtr);
    EXPECT_EQ(p.pb.Count('P'), 0u);
}


// ---- Sends in pieces: straight into the posted receive ---------------------

// `a` sends `size` bytes (Pattern(size, seed), into *data) to `b`, after `b`
// posted one receive of *buf (none if buf is null); returns the wire bytes.
Bytes SendWire(BigPair &p, Bytes *buf, size_t size, uint8_t seed, Bytes *data) {
    if (buf) {
        const MutableBuffer rb{buf->data(), buf->size()};
        EXPECT_TRUE(p.b.PostReceive(7, {&rb, 1}));
    }
    *data = Pattern(size, seed);
    const ConstBuffer sb{data->data(), data->size()};
    EXPECT_TRUE(p.a.PostSend(1, {&sb, 1}));
    Bytes wire;
    p.a.Pull(&wire, 2 << 20);
    return wire;
}

TEST(Pieces, SendLandsIntactInItsReceiveUnderEveryChunking) {
    for (const auto &[name, chunk] : Chunkings()) {
        if (chunk > 1 && chunk < 7) continue;
        BigPair p;
        const size_t n = chunk == 1 ? 6000 : 150000;
        Bytes first(n / 3), second(n - n / 3 + 10);  // two SGEs, room to spare
        const MutableBuffer rb[2] = {{first.data(), first.size()}, {second.data(), second.size()}};
        ASSERT_TRUE(p.b.PostReceive(7, rb));
        const Bytes data = Pattern(n, 11);
        const ConstBuffer b{data.data(), data.size()};
        ASSERT_TRUE(p.a.PostSend(1, {&b, 1}));
        p.Pump(chunk);
        EXPECT_FALSE(p.b.failed()) << name;
        Bytes got(first);
        got.insert(got.end(), second.begin(), second.begin() + static_cast<ptrdiff_t>(n - first.size()));
        EXPECT_EQ(got, data) << name;
        const auto c = p.Drain(p.b);
        ASSERT_EQ(c.size(), 1u) << name;
        EXPECT_EQ(c[0].status, OpStatus::Success);
        EXPECT_EQ(c[0].length, n);
    }
}

TEST(Pieces, SendPayloadGoesStraightIntoTheReceive) {
    BigPair p;
    const size_t size = 1 << 20;
    Bytes a(100000), b(size);  // the payload crosses from one SGE to the next
    const MutableBuffer rb[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
    ASSERT_TRUE(p.b.PostReceive(7, rb));
    const Bytes data = Pattern(size, 12);
    const ConstBuffer sb{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostSend(1, {&sb, 1}));
    Bytes wire;
    p.a.Pull(&wire, 2 << 20);
    FeedOneReadPerFpdu(p.b, wire, size, p.a.max_payload(false));
    Bytes got(a);
    got.insert(got.end(), b.begin(), b.begin() + static_cast<ptrdiff_t>(size - a.size()));
    EXPECT_EQ(got, data);
    Completion c;
    ASSERT_TRUE(p.b.PollCompletion(&c));
    EXPECT_EQ(c.kind, CompletionKind::Receive);
    EXPECT_EQ(c.length, size);
}

// The second of two posted receives, with empty SGEs about: pieces and
// direct reads go to the receive the MSN names, at the right SGE.
TEST(Pieces, SendPiecesFindTheirOwnReceiveAndSkipEmptySges) {
    BigPair p;
    Bytes small(100), x(70000), y(90000), none;
    const MutableBuffer r1{small.data(), small.size()};
    const MutableBuffer r2[4] = {{none.data(), 0}, {x.data(), x.size()}, {none.data(), 0}, {y.data(), y.size()}};
    ASSERT_TRUE(p.b.PostReceive(7, {&r1, 1}));
    ASSERT_TRUE(p.b.PostReceive(8, r2));
    const Bytes first = Pattern(100, 16), second = Pattern(150000, 17);
    const ConstBuffer s1{first.data(), first.size()}, s2{second.data(), second.size()};
    ASSERT_TRUE(p.a.PostSend(1, {&s1, 1}));
    ASSERT_TRUE(p.a.PostSend(2, {&s2, 1}));
    Bytes wire;
    p.a.Pull(&wire, 1 << 20);
    EXPECT_GT(FeedLikeASocket(p.b, wire, 30000), 100000u);
    EXPECT_FALSE(p.b.failed());
    EXPECT_EQ(small, first);
    Bytes got(x);
    got.insert(got.end(), y.begin(), y.begin() + static_cast<ptrdiff_t>(second.size() - x.size()));
    EXPECT_EQ(got, second);
    const auto c = p.Drain(p.b);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].id, 7u);
    EXPECT_EQ(c[1].id, 8u);
    EXPECT_EQ(c[1].length, second.size());
}

// With no receive posted, a long Send waits whole (the stream stalls), as
// it does without pieces; once a receive comes it lands and the rest flows.
TEST(Pieces, SendWithNoReceiveYetWaitsWholeThenLands) {
    BigPair p;
    Bytes data;
    const Bytes wire = SendWire(p, nullptr, 100000, 13, &data);
    size_t pos = 0;
    RxResult r{};
    while (pos < wire.size()) {
        r = p.b.Receive(std::span<const uint8_t>(wire).subspan(pos, std::min<size_t>(9000, wire.size() - pos)));
        pos += r.consumed;
        if (r.status != RxStatus::Ok) break;
    }
    ASSERT_EQ(r.status, RxStatus::Stalled) << static_cast<int>(p.b.local_fault().errc) << " at " << pos;
    EXPECT_GT(pos, 65000u) << "the first FPDU was gathered whole before stalling";
    Bytes buf(100000);
    const MutableBuffer rb{buf.data(), buf.size()};
    ASSERT_TRUE(p.b.PostReceive(7, {&rb, 1}));
    ASSERT_EQ(p.b.Resume(), RxStatus::Ok);
    FeedLikeASocket(p.b, Bytes(wire.begin() + static_cast<ptrdiff_t>(pos), wire.end()), 5000);
    EXPECT_FALSE(p.b.failed());
    EXPECT_EQ(buf, data);
    Completion c;
    ASSERT_TRUE(p.b.PollCompletion(&c));
    EXPECT_EQ(c.length, data.size());
}

TEST(Pieces, SendTooLongForItsReceiveFailsBeforeAByteLands) {
    BigPair p;
    Bytes buf(50000), data;
    FeedLikeASocket(p.b, SendWire(p, &buf, 100000, 14, &data), 1000);
    ASSERT_TRUE(p.b.failed());
    EXPECT_EQ(p.b.local_fault().errc, Errc::DdpMessageTooLong);
    EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](uint8_t x) { return x == 0; }));
    Completion c;
    ASSERT_TRUE(p.b.PollCompletion(&c));
    EXPECT_NE(c.status, OpStatus::Success);
}

TEST(Pieces, ReceiveWithdrawnBetweenPiecesIsNeverWrittenAgain) {
    BigPair p;
    Bytes buf(100000), data;
    const Bytes wire = SendWire(p, &buf, 60000, 15, &data);
    const size_t first = p.b.ReadHint(8000);  // the header and the first 8000 - 20 bytes
    ASSERT_EQ(p.b.Receive(std::span<const uint8_t>(wire).first(first)).status, RxStatus::Ok);
    p.pb.receive_checks_left = 0;  // the receive's memory is gone from here on
    MutableBuffer to[4];
    EXPECT_EQ(p.b.DirectBuffers(to, 4), 0u) << "nothing named in withdrawn memory";
    const RxResult r = p.b.Receive(std::span<const uint8_t>(wire).subspan(first));
    EXPECT_EQ(r.status, RxStatus::Failed);
    EXPECT_EQ(p.b.local_fault().errc, Errc::ReceiveBufferGone);
    EXPECT_TRUE(std::all_of(buf.begin() + 8000, buf.end(), [](uint8_t x) { return x == 0; }));
    Completion c;
    ASSERT_TRUE(p.b.PollCompletion(&c));
    EXPECT_EQ(c.status, OpStatus::LocalAccessError);
}

}  // namespace
