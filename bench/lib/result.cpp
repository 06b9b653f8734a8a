#include "opennd/bench/result.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "opennd/bench/json.h"

namespace opennd::bench {

void SetLatencySamples(Result &r, const Measurement &m, double scale) {
    r.samples.clear();
    for (double ns : m.ns_per_op) r.samples.push_back(ns * scale / 1000.0);
    r.unit = kUnitMicroseconds;
    r.iterations = m.operations;
    r.batch = m.batch;
    r.truncated = m.truncated;
}

void SetBandwidthSamples(Result &r, const Measurement &m, double bytes_per_op) {
    r.samples.clear();
    for (double ns : m.ns_per_op) r.samples.push_back(ns > 0 ? bytes_per_op / ns : 0.0);
    r.unit = kUnitGBps;
    r.iterations = m.operations;
    r.batch = m.batch;
    r.truncated = m.truncated;
}

std::string FormatSize(uint64_t bytes) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (v == std::floor(v))
        std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

bool ParseSize(const std::string &text, uint64_t *bytes) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    std::string suffix(end);
    for (auto &c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    uint64_t mul = 1;
    if (suffix.empty() || suffix == "b")
        mul = 1;
    else if (suffix == "k" || suffix == "kib" || suffix == "kb")
        mul = 1024;
    else if (suffix == "m" || suffix == "mib" || suffix == "mb")
        mul = 1024 * 1024;
    else if (suffix == "g" || suffix == "gib" || suffix == "gb")
        mul = 1024ull * 1024 * 1024;
    else
        return false;
    if (v == 0 || v > (1ull << 40) / mul) return false;
    *bytes = v * mul;
    return true;
}

void PrintTableHeader(std::FILE *out) {
    std::fprintf(out, "%-20s %-16s %9s %11s %11s %11s %7s %-5s %7s\n", "test", "transport", "size", "median", "p99",
                 "min", "spread", "unit", "samples");
}

std::string FormatValue(double v) {
    char buf[32];
    double a = std::fabs(v);
    const char *fmt = a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : a >= 1 ? "%.3f" : a >= 0.001 ? "%.4f" : "%.3g";
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

void PrintTableRow(std::FILE *out, const Result &r) {
    // min is the lowest sample: the best latency, the worst bandwidth.
    Stats s = r.Summary();
    std::fprintf(out, "%-20s %-16s %9s %11s %11s %11s %6.1f%% %-5s %7zu%s\n", r.name.c_str(), r.transport.c_str(),
                 FormatSize(r.size).c_str(), FormatValue(s.median).c_str(), FormatValue(s.p99).c_str(),
                 FormatValue(s.min).c_str(), s.spread * 100, r.unit.c_str(), s.count,
                 r.truncated ? "  (cut by --max-seconds)" : "");
}

void PrintTable(std::FILE *out, const std::vector<Result> &results) {
    PrintTableHeader(out);
    for (const auto &r : results) PrintTableRow(out, r);
}

namespace {

void WriteHost(JsonWriter &w) {
    w.Key("host");
    w.BeginObject();
    struct utsname u {};
    if (uname(&u) == 0) {
        w.Field("hostname", u.nodename);
        w.Field("kernel", std::string(u.sysname) + " " + u.release);
        w.Field("machine", u.machine);
    }
    w.Field("cpus_online", static_cast<long>(sysconf(_SC_NPROCESSORS_ONLN)));
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3) w.Field("loadavg_1min", load[0]);
    w.EndObject();
}

void WriteResult(JsonWriter &w, const Result &r, bool with_samples) {
    Stats s = r.Summary();
    w.BeginObject();
    w.Field("name", r.name);
    w.Field("transport", r.transport);
    w.Field("operation", r.operation);
    w.Field("size", r.size);
    w.Field("unit", r.unit);
    w.Field("higher_is_better", r.HigherIsBetter());
    w.Field("iterations", r.iterations);
    w.Field("batch", r.batch);
    w.Field("truncated", r.truncated);
    if (!r.note.empty()) w.Field("note", r.note);
    w.Key("stats");
    w.BeginObject();
    w.Field("count", s.count);
    w.Field("median", s.median);
    w.Field("p99", s.p99);
    w.Field("p90", s.p90);
    w.Field("p10", s.p10);
    w.Field("min", s.min);
    w.Field("max", s.max);
    w.Field("mean", s.mean);
    w.Field("spread", s.spread);
    w.EndObject();
    if (with_samples) {
        w.Key("samples");
        w.BeginArray();
        for (double v : r.samples) w.Number(v);
        w.EndArray();
    }
    w.EndObject();
}

}  // namespace

void WriteJson(std::FILE *out, const Document &doc) {
    JsonWriter w(out);
    w.BeginObject();
    w.Field("tool", doc.tool);
    w.Field("schema", 1);
    WriteHost(w);
    w.Key("options");
    w.BeginObject();
    for (const auto &[k, v] : doc.options) w.Field(k, v);
    w.EndObject();
    w.Key("results");
    w.BeginArray();
    for (const auto &r : doc.results) WriteResult(w, r, doc.with_samples);
    w.EndArray();
    w.Key("failures");
    w.BeginArray();
    for (const auto &f : doc.failures) {
        w.BeginObject();
        w.Field("name", f.name);
        w.Field("size", f.size);
        w.Field("error", f.error);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.Finish();
}

}  // namespace opennd::bench
