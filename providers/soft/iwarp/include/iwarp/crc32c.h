// CRC32c (Castagnoli, reflected polynomial 0x82F63B78), the MPA FPDU CRC
// (RFC 5044, computed as iSCSI's, RFC 3720). Slice-by-8 tables, or the SSE4.2
// crc32 instruction when the CPU has it (checked once at run time).
#pragma once

#include <cstddef>
#include <cstdint>

namespace iwarp {

inline constexpr uint32_t kCrc32cInit = 0xffffffffu;

// Extends a running CRC register (start with kCrc32cInit) over `n` bytes.
uint32_t Crc32cExtend(uint32_t state, const void *data, size_t n);
// The transmitted value of a finished register.
inline uint32_t Crc32cFinish(uint32_t state) {
    return ~state;
}
// One-shot: the standard CRC32c of a buffer (crc32c("123456789") == 0xE3069283).
inline uint32_t Crc32c(const void *data, size_t n) {
    return Crc32cFinish(Crc32cExtend(kCrc32cInit, data, n));
}

// The implementations behind Crc32cExtend, exposed for tests.
uint32_t Crc32cExtendPortable(uint32_t state, const void *data, size_t n);
bool Crc32cHardwareAvailable();
uint32_t Crc32cExtendHardware(uint32_t state, const void *data, size_t n);  // only if available

}  // namespace iwarp
