// The ndbaseline tests: raw limits between two processes on one machine.
// Each test measures one message size and returns a Result; the table in
// main.cpp maps names to tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "opennd/bench/result.h"
#include "opennd/bench/timing.h"

namespace opennd::bench {

struct Options {
    std::vector<uint64_t> sizes;  // empty: each test's defaults
    uint64_t iters = 0;           // timed operations per size; 0: defaults
    bool quick = false;
    double max_seconds = 5;       // guard for each measurement (one size)
    bool ipv6 = false;            // tcp tests: [::1] instead of 127.0.0.1
    bool blocking = false;        // tcp-pingpong: blocking recv instead of busy polling
};

enum class Kind { kLatency, kBandwidth };

struct TestDef {
    const char *name;
    Kind kind;
    bool sized;  // false: always one fixed size
    const char *summary;
    Result (*run)(const Options &, uint64_t size);
};

const std::vector<TestDef> &AllTests();
std::vector<uint64_t> DefaultSizes(const TestDef &t, bool quick);

// Iteration counts, warm-up and batching for the two kinds.
MeasureConfig LatencyConfig(const Options &o);
MeasureConfig BandwidthConfig(const Options &o, uint64_t size);
// How long a child may live: the measurement guard plus slack.
inline double ChildGuardSeconds(const Options &o) { return o.max_seconds * 2 + 10; }
// Waits for the partner's reply take at most this long.
inline double ReplyGuardSeconds(const Options &o) { return o.max_seconds + 5; }

// A 64-byte line written by one process and read by the other.
struct alignas(64) Line {
    std::atomic<uint64_t> v{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory flags need lock-free atomics");

// Spins until line == want (acquire) or the deadline; false on timeout.
bool WaitEqual(const Line &line, uint64_t want, const Deadline &d);

// Stamps seq into the first bytes of a message / checks it (sizes < 8 use
// fewer bytes). Check throws on mismatch.
void Stamp(char *msg, uint64_t size, uint64_t seq);
void CheckStamp(const char *msg, uint64_t size, uint64_t seq, const char *where);

Result CachelinePingPong(const Options &o, uint64_t size);
Result ShmPingPong(const Options &o, uint64_t size);
Result ShmCopyBandwidth(const Options &o, uint64_t size);
Result CmaWriteBandwidth(const Options &o, uint64_t size);
Result CmaReadBandwidth(const Options &o, uint64_t size);
Result CmaWritePingPong(const Options &o, uint64_t size);
Result CmaReadLatency(const Options &o, uint64_t size);
Result TcpPingPong(const Options &o, uint64_t size);
Result TcpStream(const Options &o, uint64_t size);

}  // namespace opennd::bench
