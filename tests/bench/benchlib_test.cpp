// The benchmark library on its own: statistics, sizes, JSON writing, and
// Measure()'s bookkeeping (no timing assertions: machines are noisy).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "json_reader.h"
#include "opennd/bench/json.h"
#include "opennd/bench/result.h"
#include "opennd/bench/timing.h"

using namespace opennd::bench;
using bench_test::Json;
using bench_test::JsonReader;

namespace {

template <class F>
std::string Capture(F &&write) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    write(f);
    std::fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

}  // namespace

TEST(BenchStats, PercentilesOfOneToHundred) {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
    Stats s = Summarize(v);
    EXPECT_EQ(s.count, 100u);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 100);
    EXPECT_DOUBLE_EQ(s.median, 50.5);
    EXPECT_NEAR(s.p99, 99.01, 1e-9);
    EXPECT_NEAR(s.p10, 10.9, 1e-9);
    EXPECT_NEAR(s.p90, 90.1, 1e-9);
    EXPECT_DOUBLE_EQ(s.mean, 50.5);
    EXPECT_NEAR(s.spread, (90.1 - 10.9) / 50.5, 1e-12);
}

TEST(BenchStats, EmptyAndSingle) {
    EXPECT_EQ(Summarize({}).count, 0u);
    Stats one = Summarize({7});
    EXPECT_DOUBLE_EQ(one.median, 7);
    EXPECT_DOUBLE_EQ(one.p99, 7);
    EXPECT_DOUBLE_EQ(one.spread, 0);
}

TEST(BenchSizes, ParseAndFormat) {
    uint64_t v = 0;
    EXPECT_TRUE(ParseSize("4096", &v));
    EXPECT_EQ(v, 4096u);
    EXPECT_TRUE(ParseSize("64k", &v));
    EXPECT_EQ(v, 65536u);
    EXPECT_TRUE(ParseSize("32MiB", &v));
    EXPECT_EQ(v, 32u << 20);
    EXPECT_FALSE(ParseSize("0", &v));
    EXPECT_FALSE(ParseSize("12q", &v));
    EXPECT_FALSE(ParseSize("", &v));
    EXPECT_EQ(FormatSize(8), "8 B");
    EXPECT_EQ(FormatSize(4096), "4 KiB");
    EXPECT_EQ(FormatSize(3 << 19), "1.5 MiB");
}

TEST(BenchJson, WriterOutputParsesBack) {
    std::string text = Capture([](FILE *f) {
        JsonWriter w(f);
        w.BeginObject();
        w.Field("s", std::string("quote\" backslash\\ newline\n tab\t ctl\x01"));
        w.Field("n", 1.5e-7);
        w.Field("big", static_cast<uint64_t>(1) << 60);
        w.Field("neg", -3);
        w.Field("t", true);
        w.Field("inf", std::numeric_limits<double>::infinity());
        w.Key("a");
        w.BeginArray();
        w.Number(1);
        w.BeginObject();
        w.EndObject();
        w.BeginArray();
        w.EndArray();
        w.Null();
        w.EndArray();
        w.EndObject();
        w.Finish();
    });
    Json j = JsonReader::Parse(text);
    EXPECT_EQ(j["s"].string, "quote\" backslash\\ newline\n tab\t ctl\x01");
    EXPECT_DOUBLE_EQ(j["n"].number, 1.5e-7);
    EXPECT_DOUBLE_EQ(j["big"].number, std::ldexp(1.0, 60));
    EXPECT_DOUBLE_EQ(j["neg"].number, -3);
    EXPECT_TRUE(j["t"].boolean);
    EXPECT_EQ(j["inf"].type, Json::kNull);  // not finite: null, never "inf"
    ASSERT_EQ(j["a"].array.size(), 4u);
    EXPECT_EQ(j["a"].array[1].type, Json::kObject);
    EXPECT_EQ(j["a"].array[2].type, Json::kArray);
}

TEST(BenchJson, MisuseThrows) {
    FILE *f = std::fopen("/dev/null", "w");
    ASSERT_NE(f, nullptr);
    JsonWriter w(f);
    w.BeginObject();
    EXPECT_THROW(w.Number(1), std::logic_error);  // value without key
    EXPECT_THROW(w.EndArray(), std::logic_error);
    EXPECT_THROW(w.Finish(), std::logic_error);
    std::fclose(f);
}

TEST(BenchMeasure, CountsOperationsAndBatches) {
    MeasureConfig c;
    c.iterations = 1000;
    c.warmup = 50;
    c.max_seconds = 10;
    c.min_batch_ns = 0;
    uint64_t ops = 0;
    Measurement m = Measure(c, [&](uint64_t n) { ops += n; });
    EXPECT_EQ(m.operations, 1000u);
    EXPECT_EQ(ops, 1050u);
    EXPECT_EQ(m.batch, 1u);
    EXPECT_EQ(m.ns_per_op.size(), 1000u);
    EXPECT_FALSE(m.truncated);

    c.min_batch_ns = 1000000;  // 1 ms per sample: batches of many cheap ops
    c.max_batch = 100;
    m = Measure(c, [](uint64_t) {});
    EXPECT_EQ(m.batch, 100u);
    EXPECT_EQ(m.ns_per_op.size(), 10u);
}

TEST(BenchMeasure, GuardStopsEarlyAndFailsWithoutSamples) {
    MeasureConfig c;
    c.iterations = 1000000000;
    c.warmup = 1;
    c.max_seconds = 0.05;
    Measurement m = Measure(c, [](uint64_t) {});
    EXPECT_TRUE(m.truncated);
    EXPECT_GT(m.ns_per_op.size(), 0u);

    c.max_seconds = 0.001;
    auto slow = [](uint64_t) {
        Deadline d(0.01);
        while (!d.Expired()) {
        }
    };
    EXPECT_THROW(Measure(c, slow), std::runtime_error);
}

TEST(BenchResult, TableAndDocument) {
    Result r("x-pingpong", "shm", "half round trip", 64);
    Measurement m;
    m.ns_per_op = {100, 200, 300};
    m.operations = 3;
    SetLatencySamples(r, m, 0.5);
    EXPECT_EQ(r.unit, kUnitMicroseconds);
    EXPECT_DOUBLE_EQ(r.Summary().median, 0.1);
    Result b("x-bw", "shm", "copy", 1000);
    SetBandwidthSamples(b, m, 1000);
    EXPECT_TRUE(b.HigherIsBetter());
    EXPECT_DOUBLE_EQ(b.Summary().max, 10);  // 1000 B in 100 ns = 10 GB/s

    std::string table = Capture([&](FILE *f) { PrintTable(f, {r, b}); });
    EXPECT_NE(table.find("x-pingpong"), std::string::npos);
    EXPECT_NE(table.find("64 B"), std::string::npos);

    Document doc;
    doc.tool = "unit";
    doc.results = {r, b};
    doc.failures.push_back({"x-broken", 8, "it broke"});
    doc.with_samples = true;
    Json j = JsonReader::Parse(Capture([&](FILE *f) { WriteJson(f, doc); }));
    EXPECT_EQ(j["tool"].string, "unit");
    ASSERT_EQ(j["results"].array.size(), 2u);
    EXPECT_EQ(j["results"].array[0]["samples"].array.size(), 3u);
    EXPECT_DOUBLE_EQ(j["results"].array[1]["stats"]["median"].number, 5);
    EXPECT_EQ(j["failures"].array[0]["error"].string, "it broke");
    EXPECT_TRUE(j["host"].Has("cpus_online"));
}
