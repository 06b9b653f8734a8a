// One benchmark result (a test at one message size) and the two ways results
// are printed: a text table for people and a JSON document for machines.
// ndbaseline and the OpenND ndperf tool write the same JSON shape, so
// bench/compare reads both with one parser.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "opennd/bench/timing.h"

namespace opennd::bench {

inline constexpr const char *kUnitMicroseconds = "us";
inline constexpr const char *kUnitGBps = "GB/s";  // 10^9 bytes per second

struct Result {
    Result() = default;
    Result(std::string name_, std::string transport_, std::string operation_, uint64_t size_)
        : name(std::move(name_)), transport(std::move(transport_)), operation(std::move(operation_)), size(size_) {}

    std::string name;       // test name, e.g. "shm-pingpong"
    std::string transport;  // e.g. "shm", "tcp4-busypoll", "cma"
    std::string operation;  // what one operation is, e.g. "half round trip"
    uint64_t size = 0;      // message size in bytes
    std::string unit;       // kUnitMicroseconds or kUnitGBps
    std::vector<double> samples;  // in `unit`, one per batch
    uint64_t iterations = 0;      // timed operations behind the samples
    uint64_t batch = 1;           // operations per sample
    bool truncated = false;       // --max-seconds stopped it early
    std::string note;             // anything a reader should know

    bool HigherIsBetter() const { return unit == kUnitGBps; }
    Stats Summary() const { return Summarize(samples); }
};

// Turns a Measurement into a result: latency as ns_per_op * scale / 1000 us
// (scale 0.5 for a round trip reported as half), bandwidth as
// bytes_per_op / ns_per_op GB/s.
void SetLatencySamples(Result &r, const Measurement &m, double scale);
void SetBandwidthSamples(Result &r, const Measurement &m, double bytes_per_op);

struct Failure {
    std::string name;
    uint64_t size = 0;  // 0: the whole test
    std::string error;
};

// "8 B", "4 KiB", "1 MiB", "1.5 MiB".
std::string FormatSize(uint64_t bytes);

// About four significant digits, no exponent for usual values: "0.0451", "9.743", "618.6".
std::string FormatValue(double v);

// Parses "4096", "4k", "64KiB", "1M", "32MiB". Returns false on junk or 0.
bool ParseSize(const std::string &text, uint64_t *bytes);

// Table: test, transport, size, median, p99, min, spread, unit, samples.
// Rows can be printed one by one as results arrive.
void PrintTableHeader(std::FILE *out);
void PrintTableRow(std::FILE *out, const Result &r);
void PrintTable(std::FILE *out, const std::vector<Result> &results);

struct Document {
    std::string tool;                    // "ndbaseline", "ndperf"
    std::vector<Result> results;
    std::vector<Failure> failures;
    std::vector<std::pair<std::string, std::string>> options;  // as given
    bool with_samples = false;           // include every sample
};

// {"tool", "schema": 1, "host": {...}, "options": {...},
//  "results": [{name, transport, operation, size, unit, higher_is_better,
//               iterations, batch, truncated, note,
//               stats: {count, median, p99, p90, p10, min, max, mean, spread},
//               samples?: [...]}],
//  "failures": [{name, size, error}]}
void WriteJson(std::FILE *out, const Document &doc);

}  // namespace opennd::bench
