// Test support for the iWARP engine: chunked feeding (a TCP stream may split
// anywhere), a Placement over in-memory regions that logs every call (to
// prove checks happen before placement), and a connected engine pair.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "iwarp/engine.h"
#include "iwarp/handshake.h"

namespace iwarp_test {

using Bytes = std::vector<uint8_t>;

// Splits `n` bytes into chunk sizes: 0 = random (seeded), else fixed.
inline std::vector<size_t> Chunks(size_t n, size_t fixed, uint32_t seed = 1) {
    std::vector<size_t> out;
    std::mt19937 rng(seed);
    for (size_t pos = 0; pos < n;) {
        size_t k = fixed ? fixed : std::uniform_int_distribution<size_t>(1, 97)(rng);
        k = std::min(k, n - pos);
        out.push_back(k);
        pos += k;
    }
    return out;
}

// The chunkings every decoder test runs through: whole, 1 byte, 2, 3, 7 and random.
inline std::vector<std::pair<std::string, size_t>> Chunkings() {
    return {{"whole", SIZE_MAX}, {"1", 1}, {"2", 2}, {"3", 3}, {"7", 7}, {"random", 0}};
}

inline Bytes Pattern(size_t n, uint8_t seed = 1) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    return b;
}

// Registered memory for the Placement interface.
struct Region {
    uint64_t base = 0;
    Bytes memory;
    bool remote_write = false, remote_read = false, local_write = true;
    bool associated = true;
    bool valid = true;
};

class FakePlacement : public iwarp::Placement {
public:
    struct Call {
        char what;  // 'C' check, 'P' place, 'F' fetch, 'I' invalidate, 'R' receive usable?, 'D' destination
        uint32_t stag;
        uint64_t to;
        uint32_t len;
    };

    Region &Add(uint32_t stag, uint64_t base, size_t size, bool remote_write, bool remote_read) {
        Region &r = regions[stag];
        r.base = base;
        r.memory.assign(size, 0);
        r.remote_write = remote_write;
        r.remote_read = remote_read;
        return r;
    }

    iwarp::TaggedCheck CheckTagged(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access access) override {
        calls.push_back({'C', stag, to, len});
        auto it = regions.find(stag);
        if (it == regions.end() || !it->second.valid) return iwarp::TaggedCheck::InvalidStag;
        const Region &r = it->second;
        if (!r.associated) return iwarp::TaggedCheck::StagNotAssociated;
        if (to < r.base || to - r.base > r.memory.size() || len > r.memory.size() - (to - r.base))
            return iwarp::TaggedCheck::BaseBounds;
        const bool ok = access == iwarp::Access::RemoteWrite  ? r.remote_write
                        : access == iwarp::Access::RemoteRead ? r.remote_read
                                                              : r.local_write;
        return ok ? iwarp::TaggedCheck::Ok : iwarp::TaggedCheck::AccessRights;
    }
    void PlaceTagged(uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len, iwarp::Access) override {
        calls.push_back({'P', stag, to, len});
        Region &r = regions.at(stag);
        ASSERT_TRUE(Checked(stag, to, len)) << "placement without a covering check";
        std::copy(data, data + len, r.memory.begin() + static_cast<ptrdiff_t>(to - r.base));
    }
    size_t TaggedDestination(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access, iwarp::MutableBuffer *out,
                             size_t max) override {
        calls.push_back({'D', stag, to, len});
        if (!direct || max == 0) return 0;
        EXPECT_TRUE(Checked(stag, to, len)) << "destination without a covering check";
        Region &r = regions.at(stag);
        out[0] = {r.memory.data() + (to - r.base), len};
        return 1;
    }
    bool FetchTagged(uint32_t stag, uint64_t to, uint8_t *out, uint32_t len) override {
        calls.push_back({'F', stag, to, len});
        auto it = regions.find(stag);
        if (it == regions.end() || !it->second.valid || to < it->second.base ||
            to - it->second.base + len > it->second.memory.size())
            return false;
        std::copy_n(it->second.memory.begin() + static_cast<ptrdiff_t>(to - it->second.base), len, out);
        return true;
    }
    bool InvalidateStag(uint32_t stag) override {
        calls.push_back({'I', stag, 0, 0});
        auto it = regions.find(stag);
        if (it == regions.end() || !it->second.valid) return false;
        it->second.valid = false;
        return true;
    }
    bool ReceiveUsable(uint64_t id) override {
        calls.push_back({'R', 0, id, 0});
        if (receive_checks_left == 0) return false;
        --receive_checks_left;
        return true;
    }
    // Some earlier check covered [to, to + len) of stag.
    bool Checked(uint32_t stag, uint64_t to, uint32_t len) const {
        for (const Call &c : calls)
            if (c.what == 'C' && c.stag == stag && c.to <= to && to + len <= c.to + c.len) return true;
        return false;
    }
    size_t Count(char what) const {
        size_t n = 0;
        for (const Call &c : calls) n += c.what == what;
        return n;
    }

    std::map<uint32_t, Region> regions;
    std::vector<Call> calls;
    size_t receive_checks_left = SIZE_MAX;  // ReceiveUsable answers yes this often, then no
    bool direct = true;                     // TaggedDestination names region memory
};

inline iwarp::Negotiated Plain(iwarp::Role role, bool crc = false, uint32_t ird = 8, uint32_t ord = 8) {
    iwarp::Negotiated n;
    n.role = role;
    n.crc = crc;
    n.ird = ird;
    n.ord = ord;
    return n;
}

// Two engines joined back to back in memory. Pump moves bytes both ways
// (optionally in chunks) until nothing moves.
struct Pair {
    Pair(const iwarp::Negotiated &a_neg, const iwarp::Negotiated &b_neg, iwarp::EngineOptions opt = {})
        : a(a_neg, pa, opt), b(b_neg, pb, opt) {}

    // Moves one direction; returns bytes moved. `chunk` 0 = random sizes.
    size_t Move(iwarp::Engine &from, iwarp::Engine &to, size_t chunk, Bytes *wire_log) {
        Bytes out;
        from.Pull(&out, 1 << 20);
        if (wire_log) wire_log->insert(wire_log->end(), out.begin(), out.end());
        size_t pos = 0;
        for (size_t k : Chunks(out.size(), chunk == SIZE_MAX ? out.size() : chunk, seed++)) {
            auto r = to.Receive(std::span<const uint8_t>(out).subspan(pos, k));
            EXPECT_EQ(r.consumed, k) << "receiver left bytes (stalled?)";
            pos += k;
        }
        return out.size();
    }
    void Pump(size_t chunk = SIZE_MAX) {
        for (int i = 0; i < 100000; ++i)
            if (Move(a, b, chunk, &a_wire) + Move(b, a, chunk, &b_wire) == 0) return;
        ADD_FAILURE() << "pump did not settle";
    }
    std::vector<iwarp::Completion> Drain(iwarp::Engine &e) {
        std::vector<iwarp::Completion> v;
        for (iwarp::Completion c; e.PollCompletion(&c);) v.push_back(c);
        return v;
    }

    FakePlacement pa, pb;
    iwarp::Engine a, b;
    Bytes a_wire, b_wire;  // everything each side sent
    uint32_t seed = 1;
};

// Splits a wire capture into FPDUs (valid framing assumed) and decodes them;
// the segments' spans point into *storage.
inline std::vector<iwarp::Segment> Segments(const Bytes &wire, bool crc, std::vector<Bytes> *storage) {
    std::vector<iwarp::Segment> out;
    storage->clear();
    size_t pos = 0;
    while (pos + 2 <= wire.size()) {
        const size_t n = iwarp::FpduSize(static_cast<size_t>(wire[pos] << 8 | wire[pos + 1]));
        storage->emplace_back(wire.begin() + static_cast<ptrdiff_t>(pos), wire.begin() + static_cast<ptrdiff_t>(pos + n));
        pos += n;
    }
    for (const Bytes &f : *storage) {
        iwarp::FpduDecoder d(iwarp::FpduOptions{crc});
        size_t used = 0;
        EXPECT_EQ(d.Feed(f, &used), iwarp::FpduDecoder::Status::Segment);
        out.push_back(d.segment());  // parsed in place: spans point into *storage
    }
    return out;
}

}  // namespace iwarp_test
