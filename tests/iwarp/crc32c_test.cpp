// CRC32c against the RFC 3720 (iSCSI) B.4 test vectors, which list each
// digest in wire byte order (least significant byte first), and the common
// check value. Both implementations, and mixed use across calls.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "iwarp/bytes.h"
#include "iwarp/crc32c.h"

using namespace iwarp;

namespace {

std::array<uint8_t, 4> WireBytes(uint32_t crc) {
    std::array<uint8_t, 4> b{};
    StoreLe32(b.data(), crc);
    return b;
}

struct Vector {
    std::vector<uint8_t> data;
    std::array<uint8_t, 4> wire;
};

std::vector<Vector> Rfc3720Vectors() {
    std::vector<Vector> v;
    v.push_back({std::vector<uint8_t>(32, 0x00), {0xaa, 0x36, 0x91, 0x8a}});  // 32 bytes of zeroes
    v.push_back({std::vector<uint8_t>(32, 0xff), {0x43, 0xab, 0xa8, 0x62}});  // 32 bytes of ones
    std::vector<uint8_t> inc(32), dec(32);
    std::iota(inc.begin(), inc.end(), uint8_t{0});
    for (int i = 0; i < 32; ++i) dec[i] = static_cast<uint8_t>(31 - i);
    v.push_back({inc, {0x4e, 0x79, 0xdd, 0x46}});  // 00 01 .. 1f
    v.push_back({dec, {0x5c, 0xdb, 0x3f, 0x11}});  // 1f 1e .. 00
    // An iSCSI SCSI Read (10) command PDU.
    v.push_back({{0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                  0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
                  0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
                 {0x56, 0x3a, 0x96, 0xd9}});
    return v;
}

TEST(Crc32c, Rfc3720VectorsPortable) {
    for (const auto &v : Rfc3720Vectors()) {
        const uint32_t crc = Crc32cFinish(Crc32cExtendPortable(kCrc32cInit, v.data.data(), v.data.size()));
        EXPECT_EQ(WireBytes(crc), v.wire);
    }
}

TEST(Crc32c, Rfc3720VectorsDispatched) {
    for (const auto &v : Rfc3720Vectors()) EXPECT_EQ(WireBytes(Crc32c(v.data.data(), v.data.size())), v.wire);
}

TEST(Crc32c, Rfc3720VectorsHardware) {
    if (!Crc32cHardwareAvailable()) GTEST_SKIP() << "no SSE4.2 on this CPU";
    for (const auto &v : Rfc3720Vectors()) {
        const uint32_t crc = Crc32cFinish(Crc32cExtendHardware(kCrc32cInit, v.data.data(), v.data.size()));
        EXPECT_EQ(WireBytes(crc), v.wire);
    }
}

TEST(Crc32c, CheckValue) {
    const char *s = "123456789";
    EXPECT_EQ(Crc32c(s, 9), 0xe3069283u);
    EXPECT_EQ(Crc32cFinish(Crc32cExtendPortable(kCrc32cInit, s, 9)), 0xe3069283u);
    EXPECT_EQ(Crc32c(s, 0), 0u);
}

TEST(Crc32c, IncrementalAndMixedImplementationsAgree) {
    std::vector<uint8_t> data(1000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
    const uint32_t whole = Crc32c(data.data(), data.size());
    for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{500}, size_t{999}}) {
        uint32_t st = Crc32cExtendPortable(kCrc32cInit, data.data(), split);
        st = Crc32cExtend(st, data.data() + split, data.size() - split);
        EXPECT_EQ(Crc32cFinish(st), whole) << "split at " << split;
    }
    // Every length and alignment through the 8-byte loop and the tail.
    for (size_t off = 0; off < 8; ++off)
        for (size_t n = 0; n < 40; ++n)
            EXPECT_EQ(Crc32cFinish(Crc32cExtendPortable(kCrc32cInit, data.data() + off, n)),
                      Crc32cFinish(Crc32cExtend(kCrc32cInit, data.data() + off, n)));
}

}  // namespace
