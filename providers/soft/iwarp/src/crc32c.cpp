// CRC32c: slice-by-8 over compile-time tables, and the SSE4.2 instruction on
// x86-64 when present. Both process the same reflected register, so they can
// be mixed across calls.
#include "iwarp/crc32c.h"

#include <array>
#include <cstring>

namespace iwarp {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // reflected 0x1EDC6F41

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
    Tables t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
        t[0][i] = c;
    }
    for (size_t s = 1; s < 8; ++s)
        for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    return t;
}

constexpr Tables kTables = MakeTables();
static_assert(kTables[0][1] == 0xf26b8303u, "CRC32c table");

inline uint32_t LoadLe32At(const uint8_t *p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const void *data, size_t n) {
    const auto *p = static_cast<const uint8_t *>(data);
    while (n >= 8) {
        uint32_t lo = LoadLe32At(p) ^ crc;
        uint32_t hi = LoadLe32At(p + 4);
        crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
              kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
              kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xff];
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

__attribute__((target("sse4.2"))) uint32_t Crc32cExtendHardware(uint32_t crc, const void *data, size_t n) {
    const auto *p = static_cast<const uint8_t *>(data);
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<uint32_t>(c);
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

bool Crc32cHardwareAvailable() {
    static const bool available = __builtin_cpu_supports("sse4.2");
    return available;
}

#else

uint32_t Crc32cExtendHardware(uint32_t crc, const void *data, size_t n) {
    return Crc32cExtendPortable(crc, data, n);
}
bool Crc32cHardwareAvailable() {
    return false;
}

#endif

uint32_t Crc32cExtend(uint32_t crc, const void *data, size_t n) {
    return Crc32cHardwareAvailable() ? Crc32cExtendHardware(crc, data, n) : Crc32cExtendPortable(crc, data, n);
}

}  // namespace iwarp
