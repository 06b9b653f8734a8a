// Engine segmentation and reassembly: Sends, RDMA Writes and RDMA Reads of
// 0, 1, payload-1, payload, payload+1, MSS-1, MSS, MSS+1 bytes and 1 MiB,
// with and without CRC, delivered whole, in random chunks and byte by byte;
// every FPDU within the MSS, offsets and L bits as RFC 5041 has them.
#include <gtest/gtest.h>

#include "iwarp/engine.h"
#include "iwarp_test_util.h"

using namespace iwarp;
using namespace iwarp_test;

namespace {

constexpr uint32_t kMss = 1460;
constexpr uint32_t kSink = 0x100, kSource = 0x200, kLocalSink = 0x300;

struct Param {
    size_t size;
    bool crc;
    size_t chunk;  // SIZE_MAX whole, 0 random, else fixed
};

std::string Name(const testing::TestParamInfo<Param> &i) {
    return "n" + std::to_string(i.param.size) + (i.param.crc ? "_crc" : "") +
           (i.param.chunk == SIZE_MAX ? "_whole" : i.param.chunk == 0 ? "_random" : "_bytes");
}

std::vector<Param> Params() {
    const size_t tagged = kMss - 6 - 14, untagged = kMss - 6 - 18;  // payload per FPDU
    std::vector<Param> v;
    for (size_t n : {size_t{0}, size_t{1}, untagged - 1, untagged, untagged + 1, tagged - 1, tagged, tagged + 1,
                     size_t{kMss - 1}, size_t{kMss}, size_t{kMss + 1}, size_t{3 * kMss + 17}, size_t{1} << 20})
        for (bool crc : {false, true})
            for (size_t chunk : {SIZE_MAX, size_t{0}, size_t{1}})
                if (chunk != 1 || n < 10000) v.push_back({n, crc, chunk});
    return v;
}

class Segmentation : public testing::TestWithParam<Param> {
protected:
    Segmentation() : p(Plain(Role::Initiator, GetParam().crc), Plain(Role::Responder, GetParam().crc), Options()) {}
    static EngineOptions Options() {
        EngineOptions o;
        o.mss = kMss;
        return o;
    }
    // Every FPDU `from` sent: within the MSS, one message, offsets contiguous.
    void CheckWire(const Bytes &wire, Opcode op, size_t n, uint64_t to0) {
        std::vector<Bytes> store;
        const auto segs = Segments(wire, GetParam().crc, &store);
        size_t expect_fpdus = 0, offset = 0;
        const size_t cap = p.a.max_payload(op == Opcode::RdmaWrite || op == Opcode::ReadResponse);
        expect_fpdus = n == 0 ? 1 : (n + cap - 1) / cap;
        size_t seen = 0;
        for (size_t i = 0; i < segs.size(); ++i) {
            if (segs[i].opcode != op) continue;
            EXPECT_LE(store[i].size(), kMss);
            EXPECT_EQ(segs[i].last, offset + segs[i].payload.size() == n);
            if (segs[i].tagged)
                EXPECT_EQ(segs[i].to, to0 + offset);
            else
                EXPECT_EQ(segs[i].mo, offset);
            offset += segs[i].payload.size();
            ++seen;
        }
        EXPECT_EQ(seen, expect_fpdus);
        EXPECT_EQ(offset, n);
    }
    Pair p;
};

TEST_P(Segmentation, Send) {
    const auto [n, crc, chunk] = GetParam();
    const Bytes data = Pattern(n, 3);
    Bytes landing(n + 5, 0xee);
    const MutableBuffer rb{landing.data(), landing.size()};
    ASSERT_TRUE(p.b.PostReceive(11, {&rb, 1}));
    const ConstBuffer sb{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostSend(22, {&sb, 1}));
    p.Pump(chunk);
    auto ca = p.Drain(p.a), cb = p.Drain(p.b);
    ASSERT_EQ(ca.size(), 1u);
    EXPECT_EQ(ca[0].kind, CompletionKind::Send);
    EXPECT_EQ(ca[0].id, 22u);
    EXPECT_EQ(ca[0].status, OpStatus::Success);
    ASSERT_EQ(cb.size(), 1u);
    EXPECT_EQ(cb[0].kind, CompletionKind::Receive);
    EXPECT_EQ(cb[0].id, 11u);
    EXPECT_EQ(cb[0].status, OpStatus::Success);
    EXPECT_EQ(cb[0].length, n);
    EXPECT_FALSE(cb[0].solicited);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), landing.begin()));
    EXPECT_EQ(landing[n], 0xee);  // nothing beyond the message
    CheckWire(p.a_wire, Opcode::Send, n, 0);
    EXPECT_FALSE(p.a.failed() || p.b.failed());
}

TEST_P(Segmentation, Write) {
    const auto [n, crc, chunk] = GetParam();
    const Bytes data = Pattern(n, 5);
    p.pb.Add(kSink, 0x10000, n + 8, true, false);
    const ConstBuffer sb{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostWrite(33, {&sb, 1}, kSink, 0x10004));
    p.Pump(chunk);
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 1u);
    EXPECT_EQ(ca[0].kind, CompletionKind::Write);
    EXPECT_EQ(ca[0].status, OpStatus::Success);
    EXPECT_TRUE(p.Drain(p.b).empty());  // a Write completes nothing at the target
    const Bytes &mem = p.pb.regions[kSink].memory;
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mem.begin() + 4));
    CheckWire(p.a_wire, Opcode::RdmaWrite, n, 0x10004);
    EXPECT_EQ(p.pb.Count('C'), n == 0 ? 0u : p.pb.Count('P'));  // one check per placed segment
}

TEST_P(Segmentation, Read) {
    const auto [n, crc, chunk] = GetParam();
    Region &src = p.pb.Add(kSource, 0x40000, n + 3, false, true);
    src.memory = Pattern(n + 3, 9);
    p.pa.Add(kLocalSink, 0x80000, n, false, false);
    ASSERT_TRUE(p.a.PostRead(44, kLocalSink, 0x80000, static_cast<uint32_t>(n), kSource, 0x40003));
    p.Pump(chunk);
    auto ca = p.Drain(p.a);
    ASSERT_EQ(ca.size(), 1u);
    EXPECT_EQ(ca[0].kind, CompletionKind::Read);
    EXPECT_EQ(ca[0].id, 44u);
    EXPECT_EQ(ca[0].status, OpStatus::Success);
    EXPECT_EQ(ca[0].length, n);
    EXPECT_TRUE(std::equal(src.memory.begin() + 3, src.memory.end(), p.pa.regions[kLocalSink].memory.begin()));
    CheckWire(p.b_wire, Opcode::ReadResponse, n, 0x80000);
    EXPECT_EQ(p.a.outstanding_reads(), 0u);
    EXPECT_EQ(p.b.inbound_reads(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Segmentation, testing::ValuesIn(Params()), Name);

TEST(Reassembly, GatherAndScatterAcrossUnevenElements) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    const Bytes data = Pattern(5000, 1);
    const ConstBuffer sgl[] = {{data.data(), 1000}, {data.data() + 1000, 0}, {data.data() + 1000, 4000}};
    Bytes r1(7), r2(0), r3(3000), r4(4000);
    const MutableBuffer rgl[] = {{r1.data(), r1.size()}, {r2.data(), 0}, {r3.data(), r3.size()}, {r4.data(), r4.size()}};
    ASSERT_TRUE(p.b.PostReceive(1, rgl));
    ASSERT_TRUE(p.a.PostSend(2, sgl, SendFlags{true}));
    p.Pump(0);
    auto cb = p.Drain(p.b);
    ASSERT_EQ(cb.size(), 1u);
    EXPECT_TRUE(cb[0].solicited);
    EXPECT_EQ(cb[0].length, 5000u);
    Bytes got = r1;
    got.insert(got.end(), r3.begin(), r3.end());
    got.insert(got.end(), r4.begin(), r4.begin() + 1993);
    EXPECT_EQ(got, data);
}

TEST(Reassembly, ManyMessagesCompleteInOrderWithTheirFlags) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    std::vector<Bytes> in(20, Bytes(3000));
    std::vector<Bytes> out;
    for (int i = 0; i < 20; ++i) {
        const MutableBuffer b{in[i].data(), in[i].size()};
        ASSERT_TRUE(p.b.PostReceive(100 + i, {&b, 1}));
        out.push_back(Pattern(i * 150, static_cast<uint8_t>(i)));
    }
    p.pb.Add(0x77, 0, 16, true, true);
    for (int i = 0; i < 20; ++i) {
        const ConstBuffer b{out[i].data(), out[i].size()};
        SendFlags f;
        f.solicited = i % 3 == 0;
        f.invalidate = i == 7;
        f.invalidate_stag = 0x77;
        ASSERT_TRUE(p.a.PostSend(i, {&b, 1}, f));
    }
    p.Pump(0);
    auto cb = p.Drain(p.b);
    ASSERT_EQ(cb.size(), 20u);
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(cb[i].id, 100u + i);
        EXPECT_EQ(cb[i].length, i * 150u);
        EXPECT_EQ(cb[i].solicited, i % 3 == 0);
        EXPECT_EQ(cb[i].invalidated, i == 7);
        EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[i].begin()));
    }
    EXPECT_EQ(cb[7].invalidated_stag, 0x77u);
    EXPECT_FALSE(p.pb.regions[0x77].valid);
    EXPECT_EQ(p.Drain(p.a).size(), 20u);
}

TEST(Reassembly, ZeroLengthSendConsumesAReceive) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    Bytes r(4);
    const MutableBuffer b{r.data(), r.size()};
    ASSERT_TRUE(p.b.PostReceive(5, {&b, 1}));
    ASSERT_TRUE(p.a.PostSend(6, {}));
    p.Pump();
    auto cb = p.Drain(p.b);
    ASSERT_EQ(cb.size(), 1u);
    EXPECT_EQ(cb[0].id, 5u);
    EXPECT_EQ(cb[0].length, 0u);
}

TEST(Reassembly, LargeMssMakesLargeFpdus) {
    EngineOptions o;
    o.mss = 65536 * 2;  // clamped to the largest FPDU the 16-bit length allows
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    EXPECT_EQ(p.a.max_payload(false), 65535u - 18);
    const Bytes data = Pattern(200000);
    Bytes r(200000);
    const MutableBuffer rb{r.data(), r.size()};
    const ConstBuffer sb{data.data(), data.size()};
    ASSERT_TRUE(p.b.PostReceive(1, {&rb, 1}));
    ASSERT_TRUE(p.a.PostSend(2, {&sb, 1}));
    p.Pump(0);
    EXPECT_EQ(r, data);
    EXPECT_EQ(p.a_wire.size(), 4 * FpduSize(65535) - (65517 * 4 - 200000));
}

}  // namespace
