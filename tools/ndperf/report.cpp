// ndperf output: a table for people, JSON for machines. Latency: median,
// p99, min and spread ((p90-p10)/median) of the per-iteration samples.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "perf.h"

namespace ndperf {
namespace {

struct Stats {
    double median = 0, p99 = 0, min = 0, max = 0, spread = 0;
};

Stats Summarise(std::vector<double> v) {
    Stats s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
    s.median = at(0.5);
    s.p99 = at(0.99);
    s.min = v.front();
    s.max = v.back();
    s.spread = s.median > 0 ? (at(0.9) - at(0.1)) / s.median : 0;
    return s;
}

}  // namespace

const char *TestName(Test t) {
    switch (t) {
    case Test::SendLat: return "send_lat";
    case Test::WriteLat: return "write_lat";
    case Test::ReadLat: return "read_lat";
    case Test::SendBw: return "send_bw";
    case Test::WriteBw: return "write_bw";
    case Test::ReadBw: return "read_bw";
    }
    return "?";
}

bool ParseTest(const std::string &s, Test *t) {
    for (Test c : {Test::SendLat, Test::WriteLat, Test::ReadLat, Test::SendBw, Test::WriteBw, Test::ReadBw})
        if (s == TestName(c)) {
            *t = c;
            return true;
        }
    return false;
}

bool IsLatency(Test t) { return t == Test::SendLat || t == Test::WriteLat || t == Test::ReadLat; }

void PrintTable(const std::vector<Result> &results) {
    std::printf("%-10s %-8s %10s %9s | %10s %10s %10s %8s | %10s %12s\n", "test", "mode", "bytes", "iters",
                "median_us", "p99_us", "min_us", "spread", "GB/s", "Mmsg/s");
    for (const Result &r : results) {
        Stats s = Summarise(r.samples_us);
        const char *mode = r.blocking ? "blocking" : "polling";
        if (IsLatency(r.test)) {
            std::printf("%-10s %-8s %10u %9u | %10.3f %10.3f %10.3f %8.2f | %10s %12s\n", TestName(r.test), mode,
                        r.size, r.iters, s.median, s.p99, s.min, s.spread, "-", "-");
        } else {
            double gbs = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0;
            double mps = r.seconds > 0 ? r.messages / r.seconds / 1e6 : 0;
            std::printf("%-10s %-8s %10u %9u | %10s %10s %10s %8.2f | %10.3f %12.3f\n", TestName(r.test), mode, r.size,
                        r.iters, "-", "-", "-", s.spread, gbs, mps);
        }
    }
}

void PrintJson(const std::vector<Result> &results) {
    std::printf("[");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        Stats s = Summarise(r.samples_us);
        double gbs = !IsLatency(r.test) && r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0;
        double mps = !IsLatency(r.test) && r.seconds > 0 ? r.messages / r.seconds / 1e6 : 0;
        std::printf("%s\n {\"tool\":\"ndperf\",\"test\":\"%s\",\"mode\":\"%s\",\"size\":%u,\"iters\":%u,"
                    "\"median_us\":%.4f,\"p99_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,\"spread\":%.4f,"
                    "\"gbps\":%.4f,\"mmsgps\":%.4f,\"seconds\":%.4f}",
                    i ? "," : "", TestName(r.test), r.blocking ? "blocking" : "polling", r.size, r.iters,
                    IsLatency(r.test) ? s.median : 0, IsLatency(r.test) ? s.p99 : 0, IsLatency(r.test) ? s.min : 0,
                    IsLatency(r.test) ? s.max : 0, s.spread, gbs, mps, r.seconds);
    }
    std::printf("\n]\n");
}

}  // namespace ndperf
