#include "opennd/bench/timing.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace opennd::bench {

uint64_t NowNs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

Deadline::Deadline(double seconds) {
    double ns = std::clamp(seconds, 0.0, 1e7) * 1e9;
    end_ns_ = NowNs() + static_cast<uint64_t>(ns);
}

double Deadline::RemainingSeconds() const {
    uint64_t now = NowNs();
    return now >= end_ns_ ? 0.0 : static_cast<double>(end_ns_ - now) / 1e9;
}

bool Spinner::Pause() {
    ++steps_;
    if (yielding_) {
        sched_yield();
        return (steps_ & 63) != 0 || !deadline_.Expired();
    }
    CpuRelax();
    if ((steps_ & 255) != 0) return true;
    uint64_t now = NowNs();
    if (start_ns_ == 0) start_ns_ = now;
    if (now - start_ns_ > kSpinNs) yielding_ = true;
    return now < deadline_.end_ns_;
}

Measurement Measure(const MeasureConfig &config, const std::function<void(uint64_t)> &op) {
    Measurement m;
    Deadline guard(config.max_seconds);

    // Warm-up in chunks so the guard can stop it. The fastest chunk sets the
    // batch (the first ones include the partner starting up, page faults).
    uint64_t warm = std::max<uint64_t>(config.warmup, 1), done = 0;
    uint64_t chunk = std::max<uint64_t>(1, warm / 8);
    double warm_ns = 0;
    while (done < warm && (done == 0 || !guard.Expired())) {
        uint64_t n = std::min(chunk, warm - done);
        uint64_t t0 = NowNs();
        op(n);
        double per_op = static_cast<double>(NowNs() - t0) / static_cast<double>(n);
        warm_ns = done == 0 ? per_op : std::min(warm_ns, per_op);
        done += n;
    }

    m.batch = 1;
    if (config.min_batch_ns > 0) {
        double b = warm_ns > 0 ? std::ceil(static_cast<double>(config.min_batch_ns) / warm_ns)
                               : static_cast<double>(config.max_batch);
        m.batch = static_cast<uint64_t>(std::clamp(b, 1.0, static_cast<double>(std::max<uint64_t>(config.max_batch, 1))));
    }
    m.batch = std::min(m.batch, std::max<uint64_t>(config.iterations, 1));

    m.ns_per_op.reserve(config.iterations / m.batch + 1);
    while (m.operations < config.iterations) {
        if (guard.Expired()) {
            m.truncated = true;
            break;
        }
        uint64_t n = std::min(m.batch, config.iterations - m.operations);
        uint64_t start = NowNs();
        op(n);
        uint64_t end = NowNs();
        m.ns_per_op.push_back(static_cast<double>(end - start) / static_cast<double>(n));
        m.operations += n;
    }
    if (m.ns_per_op.empty())
        throw std::runtime_error("no sample completed within --max-seconds (" + std::to_string(config.max_seconds) +
                                 " s); the warm-up alone took longer");
    return m;
}

double Percentile(const std::vector<double> &sorted, double p) {
    if (sorted.empty()) return 0;
    if (sorted.size() == 1) return sorted[0];
    double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(rank));
    std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    double frac = rank - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Stats Summarize(std::vector<double> samples) {
    Stats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.count = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = Percentile(samples, 50);
    s.p99 = Percentile(samples, 99);
    s.p90 = Percentile(samples, 90);
    s.p10 = Percentile(samples, 10);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    s.spread = s.median != 0 ? (s.p90 - s.p10) / s.median : 0;
    return s;
}

}  // namespace opennd::bench
