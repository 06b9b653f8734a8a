// ndperf output: a table for people, JSON for machines, a progress line.
// Latency: median, p99, min and spread ((p90-p10)/median) of the samples;
// bandwidth and rates: operations (bytes) over the elapsed time.
#include <unistd.h>

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

std::string JsonEscape(const std::string &in) {
    std::string out;
    for (char ch : in) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) continue;
        out += ch;
    }
    return out;
}

double Rate(const Result &r) { return r.seconds > 0 ? r.messages / r.seconds : 0; }
const char *ModeName(const Result &r) { return r.loop ? "loop" : r.blocking ? "blocking" : "polling"; }

void PerfTable(const std::vector<Result> &results) {
    std::printf("%-10s %-8s %10s %9s %4s %3s | %10s %10s %10s %8s | %10s %10s\n", "test", "mode", "bytes", "iters",
                "qps", "thr", "median_us", "p99_us", "min_us", "spread", "GB/s", "Mmsg/s");
    for (const Result &r : results) {
        Stats s = Summarise(r.samples_us);
        std::printf("%-10s %-8s %10u %9u %4u %3u | ", r.test.c_str(), ModeName(r), r.size, r.iters, r.qps,
                    r.threads);
        if (r.latency)
            std::printf("%10.3f %10.3f %10.3f %8.2f | %10s %10s\n", s.median, s.p99, s.min, s.spread, "-", "-");
        else
            std::printf("%10s %10s %10s %8.2f | %10.3f %10.3f\n", "-", "-", "-", s.spread,
                        r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0, Rate(r) / 1e6);
    }
}

void MrTable(const std::vector<Result> &results) {
    std::printf("%-10s %-8s %10s %3s %7s | %10s %10s %10s | %10s %10s %10s | %12s\n", "test", "mode", "bytes", "thr",
                "iters", "reg_us", "reg_p99", "reg_min", "dereg_us", "dereg_p99", "dereg_min", "reg+dereg/s");
    for (const Result &r : results) {
        Stats a = Summarise(r.samples_us), b = Summarise(r.samples2_us);
        std::printf("%-10s %-8s %10u %3u %7u | %10.3f %10.3f %10.3f | %10.3f %10.3f %10.3f | %12.0f%s\n",
                    r.test.c_str(), ModeName(r), r.size, r.threads, r.iters, a.median, a.p99, a.min, b.median, b.p99,
                    b.min, Rate(r), r.truncated ? " (truncated)" : "");
    }
}

void ConnectTable(const std::vector<Result> &results) {
    std::printf("%-8s %11s %8s | %10s %10s %10s %8s | %10s\n", "test", "connections", "inflight", "median_us",
                "p99_us", "min_us", "spread", "conn/s");
    for (const Result &r : results) {
        Stats s = Summarise(r.samples_us);
        std::printf("%-8s %11u %8u | %10.1f %10.1f %10.1f %8.2f | %10.0f%s\n", r.test.c_str(), r.iters, r.inflight,
                    s.median, s.p99, s.min, s.spread, Rate(r), r.truncated ? " (truncated)" : "");
    }
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

std::string SizeText(uint64_t n) {
    if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + " MiB";
    if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + " KiB";
    return std::to_string(n) + " B";
}

void Progress(const Options &o, const std::string &what) {
    static bool shown = false;
    if (o.progress <= 0) return;
    bool tty = isatty(2);
    if (what.empty()) {
        if (shown && tty) std::fprintf(stderr, "\r\033[K");
        shown = false;
        return;
    }
    std::fprintf(stderr, tty ? "\r\033[Kndperf: %s" : "ndperf: %s\n", what.c_str());
    std::fflush(stderr);
    shown = true;
}

void PrintTable(const Options &o, const std::vector<Result> &results) {
    if (!results.empty())
        std::printf("transport: %s; the provider says: %s\n", results[0].transport.c_str(),
                    results[0].data_path.empty() ? "(the provider does not say)" : results[0].data_path.c_str());
    if (o.mode == Mode::Mr)
        MrTable(results);
    else if (o.mode == Mode::ConnectRate)
        ConnectTable(results);
    else
        PerfTable(results);
}

void PrintJson(const std::vector<Result> &results) {
    std::printf("[");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        Stats s = Summarise(r.samples_us);
        double gbs = !r.latency && r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0;
        std::printf("%s\n {\"tool\":\"ndperf\",\"test\":\"%s\",\"mode\":\"%s\",\"size\":%u,\"iters\":%u,"
                    "\"qps\":%u,\"threads\":%u,",
                    i ? "," : "", r.test.c_str(), ModeName(r), r.size, r.iters, r.qps, r.threads);
        if (r.latency)
            std::printf("\"median_us\":%.4f,\"p99_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,", s.median, s.p99, s.min,
                        s.max);
        else
            std::printf("\"median_us\":0,\"p99_us\":0,\"min_us\":0,\"max_us\":0,");
        if (!r.samples2_us.empty()) {
            Stats d = Summarise(r.samples2_us);
            std::printf("\"dereg_median_us\":%.4f,\"dereg_p99_us\":%.4f,\"dereg_min_us\":%.4f,\"dereg_spread\":%.4f,",
                        d.median, d.p99, d.min, d.spread);
        }
        if (r.inflight) std::printf("\"inflight\":%u,", r.inflight);
        if (r.test == "send_lat" && !r.loop) std::printf("\"recv_first\":%s,", r.recv_first ? "true" : "false");
        if (r.test == "write_lat") std::printf("\"signaled\":%s,", r.signaled ? "true" : "false");
        if (!r.latency && r.window) std::printf("\"cq_mod\":%u,", r.cq_mod);
        if (!r.latency && r.window && r.qps == 1 && r.threads == 1 && s.median > 0) {
            // Median of the window rounds' rates, the statistic ndbaseline reports.
            double bytes = double(r.window) * std::max<uint32_t>(r.size, 1);
            std::printf("\"gbps_median\":%.6g,\"mmsgps_median\":%.6g,", bytes / s.median / 1e3,
                        r.window / s.median);
        }
        if (r.working_set) std::printf("\"working_set\":%llu,", static_cast<unsigned long long>(r.working_set));
        if (!r.clock.empty()) std::printf("\"clock\":\"%s\",", r.clock.c_str());
        if (r.spin_us >= 0) std::printf("\"spin_us\":%d,", r.spin_us);
        std::printf("\"transport\":\"%s\",\"data_path\":\"%s\",", JsonEscape(r.transport).c_str(),
                    JsonEscape(r.data_path).c_str());
        std::printf("\"spread\":%.4f,\"gbps\":%.6g,\"mmsgps\":%.6g,\"rate_per_s\":%.6g,\"seconds\":%.6g,"
                    "\"truncated\":%s}",
                    s.spread, gbs, Rate(r) / 1e6, Rate(r), r.seconds, r.truncated ? "true" : "false");
    }
    std::printf("\n]\n");
}

}  // namespace ndperf
