// ndbaseline end to end: every test runs in quick mode (the built binary,
// $OPENND_TEST_BUILD_DIR/bin/ndbaseline) and its JSON must be sane:
// positive finite numbers, every requested size, ordered percentiles. No
// timing assertions: machines are noisy.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "json_reader.h"
#include "run_tool.h"

using bench_test::Json;
using bench_test::JsonReader;
using bench_test::Outcome;
using bench_test::RunTool;

namespace {

Outcome RunNdbaseline(const std::vector<std::string> &args, int seconds = 60) {
    return RunTool("ndbaseline", args, seconds);
}

bool Finite(double v) { return std::isfinite(v); }

// Checks one result's fields and statistics.
void CheckResult(const Json &r, const std::string &unit) {
    SCOPED_TRACE(r["name"].string + " size " + std::to_string(r["size"].number));
    EXPECT_EQ(r["unit"].string, unit);
    EXPECT_FALSE(r["transport"].string.empty());
    EXPECT_FALSE(r["operation"].string.empty());
    EXPECT_EQ(r["higher_is_better"].boolean, unit == "GB/s");
    const Json &s = r["stats"];
    double count = s["count"].number, median = s["median"].number, p99 = s["p99"].number;
    double p90 = s["p90"].number, p10 = s["p10"].number, mn = s["min"].number, mx = s["max"].number;
    for (const char *k : {"count", "median", "p99", "p90", "p10", "min", "max", "mean"}) {
        ASSERT_EQ(s[k].type, Json::kNumber) << k;
        EXPECT_TRUE(Finite(s[k].number)) << k;
        EXPECT_GT(s[k].number, 0) << k;
    }
    EXPECT_TRUE(Finite(s["spread"].number));
    EXPECT_GE(s["spread"].number, 0);
    EXPECT_LE(mn, p10);
    EXPECT_LE(p10, median);
    EXPECT_LE(median, p90);
    EXPECT_LE(median, p99);
    EXPECT_LE(p99, mx);
    EXPECT_GE(r["batch"].number, 1);
    EXPECT_GE(r["iterations"].number, count);
    EXPECT_LE(r["iterations"].number, count * r["batch"].number);
}

struct Case {
    const char *test;
    std::vector<std::string> extra;   // more arguments
    std::vector<double> sizes;        // expected in the output
    const char *unit;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.test; }

class NdbaselineTest : public testing::TestWithParam<Case> {};

TEST_P(NdbaselineTest, QuickRunGivesSaneJson) {
    const Case &c = GetParam();
    std::vector<std::string> args = {"--json", "--quick", "--max-seconds", "10", c.test};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    Outcome run = RunNdbaseline(args);
    ASSERT_EQ(run.status, 0) << "stderr: " << run.err;
    Json doc = JsonReader::Parse(run.out);
    EXPECT_EQ(doc["tool"].string, "ndbaseline");
    EXPECT_EQ(doc["failures"].array.size(), 0u);
    std::multiset<double> seen;
    for (const Json &r : doc["results"].array) {
        EXPECT_EQ(r["name"].string, c.test);
        seen.insert(r["size"].number);
        CheckResult(r, c.unit);
    }
    EXPECT_EQ(seen, std::multiset<double>(c.sizes.begin(), c.sizes.end()));
}

// Few iterations and small sizes: the whole suite stays well under 20 s.
const std::vector<std::string> kLat = {"--sizes", "8,4096", "--iters", "300"};
const std::vector<std::string> kBw = {"--sizes", "64k,1M", "--iters", "16"};

INSTANTIATE_TEST_SUITE_P(
    Quick, NdbaselineTest,
    testing::Values(Case{"cacheline-pingpong", {"--iters", "2000"}, {8}, "us"},
                    Case{"shm-pingpong", kLat, {8, 4096}, "us"},
                    Case{"shm-copy-bw", kBw, {65536, 1 << 20}, "GB/s"},
                    Case{"cma-write-bw", kBw, {65536, 1 << 20}, "GB/s"},
                    Case{"cma-read-bw", kBw, {65536, 1 << 20}, "GB/s"},
                    Case{"cma-write-pingpong", kLat, {8, 4096}, "us"},
                    Case{"cma-read-lat", kLat, {8, 4096}, "us"},
                    Case{"tcp-pingpong", kLat, {8, 4096}, "us"},
                    Case{"tcp-stream", kBw, {65536, 1 << 20}, "GB/s"}),
    [](const testing::TestParamInfo<Case> &info) {
        std::string n = info.param.test;
        for (auto &ch : n)
            if (ch == '-') ch = '_';
        return n;
    });

TEST(Ndbaseline, TcpBlockingAndIpv6) {
    Outcome run = RunNdbaseline({"--json", "--blocking", "--sizes", "8,4k", "--iters", "300", "tcp-pingpong"});
    ASSERT_EQ(run.status, 0) << run.err;
    Json doc = JsonReader::Parse(run.out);
    ASSERT_EQ(doc["results"].array.size(), 2u);
    EXPECT_EQ(doc["results"].array[0]["transport"].string, "tcp4-blocking");
    CheckResult(doc["results"].array[0], "us");

    run = RunNdbaseline({"--json", "--ipv6", "--sizes", "8", "--iters", "300", "tcp-pingpong"});
    if (run.status != 0 && run.err.find("[::1]") != std::string::npos) GTEST_SKIP() << "no IPv6 loopback: " << run.err;
    ASSERT_EQ(run.status, 0) << run.err;
    doc = JsonReader::Parse(run.out);
    ASSERT_EQ(doc["results"].array.size(), 1u);
    EXPECT_EQ(doc["results"].array[0]["transport"].string, "tcp6-busypoll");
}

TEST(Ndbaseline, TextTableAndList) {
    Outcome run = RunNdbaseline({"--list"});
    ASSERT_EQ(run.status, 0);
    for (const char *t : {"cacheline-pingpong", "shm-pingpong", "shm-copy-bw", "cma-write-bw", "cma-read-bw",
                          "cma-write-pingpong", "cma-read-lat", "tcp-pingpong", "tcp-stream"})
        EXPECT_NE(run.out.find(t), std::string::npos) << t;
    run = RunNdbaseline({"--iters", "200", "--sizes", "64", "shm-pingpong"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("median"), std::string::npos);
    EXPECT_NE(run.out.find("64 B"), std::string::npos);
}

TEST(Ndbaseline, FailureIsReportedWithNonZeroExit) {
    // A guard too short for even the warm-up: the measurement fails cleanly,
    // the child is reaped, and the JSON says why.
    Outcome run = RunNdbaseline({"--json", "--max-seconds", "0.000001", "--sizes", "32M", "--iters", "5", "shm-copy-bw"});
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_NE(run.err.find("shm-copy-bw"), std::string::npos);
    Json doc = JsonReader::Parse(run.out);
    ASSERT_EQ(doc["failures"].array.size(), 1u);
    EXPECT_FALSE(doc["failures"].array[0]["error"].string.empty());
}

TEST(Ndbaseline, BadUsageExitsTwo) {
    EXPECT_EQ(RunNdbaseline({"no-such-test"}).status, 2);
    EXPECT_EQ(RunNdbaseline({"--sizes", "0"}).status, 2);
    EXPECT_EQ(RunNdbaseline({"--iters"}).status, 2);
    EXPECT_EQ(RunNdbaseline({"--max-seconds", "-1"}).status, 2);
}

}  // namespace
