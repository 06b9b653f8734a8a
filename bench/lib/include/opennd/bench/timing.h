// Timing for the benchmarks: a steady clock in ns, deadlines that bound every
// loop, a polite spin-wait, Measure(), which runs warm-up then N timed
// operations in batches and returns one sample (ns per operation) per batch,
// and the summary of samples (median, p99, min, max, spread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace opennd::bench {

// Nanoseconds on the steady (monotonic) clock.
uint64_t NowNs();

// A point in time after which a loop must give up. Cheap to copy.
class Deadline {
public:
    explicit Deadline(double seconds);
    bool Expired() const { return NowNs() >= end_ns_; }
    double RemainingSeconds() const;

private:
    friend class Spinner;
    uint64_t end_ns_;
};

// One CPU hint for spin loops (PAUSE on x86, YIELD on arm64).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

// Spin-wait step: PAUSE for up to kSpinNs, then sched_yield() between checks
// so a partner that shares our core (the other one busy) can run. Pause()
// returns false once the deadline has passed. The clock is read every 256
// steps only, so spinning costs nothing extra.
class Spinner {
public:
    static constexpr uint64_t kSpinNs = 50000;
    explicit Spinner(const Deadline &deadline) : deadline_(deadline) {}
    bool Pause();

private:
    const Deadline &deadline_;
    uint64_t start_ns_ = 0;
    uint32_t steps_ = 0;
    bool yielding_ = false;
};

// Keeps the compiler from dropping stores to memory nobody reads.
inline void Touch(void *p) { asm volatile("" : : "r"(p) : "memory"); }

struct MeasureConfig {
    uint64_t iterations = 1000;   // timed operations
    uint64_t warmup = 100;        // untimed operations first (at least 1)
    double max_seconds = 5;       // guard for warm-up + timed part
    uint64_t min_batch_ns = 0;    // batch so that one sample lasts this long
    uint64_t max_batch = 1;       // ... but no more operations than this
};

struct Measurement {
    std::vector<double> ns_per_op;  // one per batch
    uint64_t operations = 0;        // timed operations done
    uint64_t batch = 1;             // operations per sample
    bool truncated = false;         // stopped by max_seconds before iterations
};

// op(n) performs n operations and throws std::exception on failure. The
// batch size is calibrated from the warm-up. Throws if the guard expires
// before a single sample was taken.
Measurement Measure(const MeasureConfig &config, const std::function<void(uint64_t)> &op);

// Summary statistics of samples.
struct Stats {
    std::size_t count = 0;
    double median = 0, p99 = 0, p90 = 0, p10 = 0, min = 0, max = 0, mean = 0;
    double spread = 0;  // (p90 - p10) / median: 0.05 means the middle 80% lie within 5%
};

// Percentile p in [0, 100] of sorted samples, linear between neighbours.
// Empty input gives 0.
double Percentile(const std::vector<double> &sorted, double p);

// Summary of samples (any order). Empty input gives all zeros.
Stats Summarize(std::vector<double> samples);

}  // namespace opennd::bench
