// Big-endian field access and the scatter/gather element types the engine
// takes from its user. Loads and stores go byte by byte: wire structs are
// unaligned byte arrays (wire.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace iwarp {

inline uint16_t LoadBe16(const uint8_t *p) {
    return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
inline uint32_t LoadBe32(const uint8_t *p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}
inline uint64_t LoadBe64(const uint8_t *p) {
    return uint64_t{LoadBe32(p)} << 32 | LoadBe32(p + 4);
}
inline void StoreBe16(uint8_t *p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
inline void StoreBe32(uint8_t *p, uint32_t v) {
    for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
inline void StoreBe64(uint8_t *p, uint64_t v) {
    StoreBe32(p, static_cast<uint32_t>(v >> 32));
    StoreBe32(p + 4, static_cast<uint32_t>(v));
}
// The MPA CRC goes on the wire least significant byte first, as iSCSI's
// (RFC 3720 B.4 lists the digests in that byte order; Linux siw does the same).
inline void StoreLe32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
inline uint32_t LoadLe32(const uint8_t *p) {
    return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | uint32_t{p[0]};
}

// One element of a gather list (data to send) or scatter list (where a
// received message lands). The memory is the caller's and must stay valid
// until the operation's completion is polled.
struct ConstBuffer {
    const uint8_t *data;
    size_t length;
};
struct MutableBuffer {
    uint8_t *data;
    size_t length;
};

}  // namespace iwarp
