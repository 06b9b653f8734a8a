// One fuzz input through the iWARP decoders and the engine's receive path.
// Shared by the libFuzzer target (iwarp_fuzzer) and the plain corpus replay
// test in tests/iwarp, so CI runs every corpus entry under the normal build.
//
// Input: byte 0 picks the mode and flags, byte 1 seeds the chunking (the
// stream is fed in pieces, split anywhere), then mode-specific configuration
// bytes, then the stream:
//   mode 0  MPA request/reply frame decoder
//   mode 1  FPDU decoder (CRC, strict and size limit from the flags)
//   mode 2  Engine: a connection in RDMA mode receiving the stream, with
//           receives, Reads, Sends and Writes posted, transmitting as it goes
//   mode 3  Handshake (initiator or responder) and then the engine
// A broken invariant prints a message and aborts: a crash for the fuzzer, a
// failure for the replay test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace iwarp_fuzz {

void RunOne(const uint8_t *data, size_t size);

// Internals shared by the two driver files.
#define IWARP_FUZZ_CHECK(c) ::iwarp_fuzz::Check((c), #c, __FILE__, __LINE__)
void Check(bool ok, const char *what, const char *file, int line);

// Reads configuration bytes (0 once exhausted) and then hands out the rest.
class Cursor {
public:
    Cursor(const uint8_t *p, size_t n) : p_(p), n_(n) {}
    uint8_t Byte() {
        if (n_ == 0) return 0;
        --n_;
        return *p_++;
    }
    std::span<const uint8_t> Rest() const { return {p_, n_}; }

private:
    const uint8_t *p_;
    size_t n_;
};

// Chunk sizes from a seed byte: 0 = whole, else pseudo-random in [1, 2^k].
class Splitter {
public:
    explicit Splitter(uint8_t seed) : state_(seed * 2654435761u + 1), max_(seed == 0 ? 0 : size_t{1} << (seed % 12)) {}
    size_t Next(size_t remaining) {
        if (max_ == 0) return remaining;
        state_ = state_ * 1103515245u + 12345u;
        const size_t k = 1 + (state_ >> 8) % max_;
        return k < remaining ? k : remaining;
    }

private:
    uint32_t state_;
    size_t max_;
};

void RunFrames(uint8_t flags, Splitter &split, Cursor &in);     // modes 0 and 1
void RunEngineMode(uint8_t flags, Splitter &split, Cursor &in); // modes 2 and 3

}  // namespace iwarp_fuzz
