// ndperf: latency, bandwidth and message rate between two ND endpoints
// (perftest-style server and client in one binary).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndsupport.h"
#include "opennd/kit/address.h"

namespace ndperf {

enum class Test { SendLat, WriteLat, ReadLat, SendBw, WriteBw, ReadBw };

struct Options {
    bool server = false;
    bool local = false;  // run the server as a child process on this host
    std::string address = "127.0.0.1";
    uint16_t port = 0;
    std::vector<Test> tests{Test::SendLat};
    std::vector<uint32_t> sizes{8};
    uint32_t iters = 0;  // 0: by size
    uint32_t warmup = 0;
    uint32_t window = 32;
    bool blocking = false;
    bool json = false;
    int port_fd = -1;  // --local child: where to report the port
};

struct Result {
    Test test;
    uint32_t size;
    uint32_t iters;
    bool blocking;
    // Latency tests: per-iteration half round trip (send/write) or round
    // trip (read), microseconds. Bandwidth tests: one sample per window round.
    std::vector<double> samples_us;
    double seconds = 0;  // bandwidth tests: elapsed
    uint64_t bytes = 0;
    uint64_t messages = 0;
};

const char *TestName(Test t);
bool ParseTest(const std::string &s, Test *t);
bool IsLatency(Test t);

// The control message the client sends before each test.
struct Control {
    uint32_t magic;  // kControlMagic
    uint32_t test;   // Test, or kDone
    uint32_t size;
    uint32_t iters;
    uint32_t window;
    uint32_t blocking;
};
constexpr uint32_t kControlMagic = 0x4E445046;  // "NDPF"
constexpr uint32_t kDone = 0xFFFFFFFF;

// Server and client (session.cpp).
int RunServer(const Options &o);
int RunClient(const Options &o, std::vector<Result> *results);
// Output (report.cpp).
void PrintTable(const std::vector<Result> &results);
void PrintJson(const std::vector<Result> &results);

}  // namespace ndperf
