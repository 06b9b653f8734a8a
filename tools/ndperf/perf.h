// ndperf: latency, bandwidth and message rate between two ND endpoints
// (perftest-style server and client in one binary), memory registration
// cost (local) and connection setup rate.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ndsupport.h"
#include "opennd/ip_address.h"

namespace ndperf {

enum class Test { SendLat, WriteLat, ReadLat, SendBw, WriteBw, ReadBw };
enum class Mode { Perf, Mr, ConnectRate, Loop };

struct Options {
    Mode mode = Mode::Perf;
    bool server = false;
    bool local = false;  // run the server as a child process on this host
    std::string address = "127.0.0.1";
    uint16_t port = 0;
    std::string provider;   // catalog name; empty: the one NdOpenAdapter picks for the address
    std::string transport;  // ndsoft data path: shm, copy or tcp (empty: the provider's default)
    int spin_us = -1;       // ndsoft: OPENND_SOFT_SPIN_US for this process and the --local server (-1: as set)
    std::vector<Test> tests{Test::SendLat};
    std::vector<uint32_t> sizes{8};
    bool sizes_given = false;
    uint32_t iters = 0;  // 0: by size
    uint32_t warmup = 0;
    uint32_t window = 32;
    uint32_t cq_mod = 1;  // bandwidth: a completion for every cq_mod-th request (perftest's --cq-mod)
    // Bandwidth: bytes of buffer each side cycles through (at least one
    // message). 1 MiB by default, like the raw baselines, perftest and
    // ucx_perftest, which reuse one buffer: larger sets measure the memory.
    uint32_t working_set = 1u << 20;
    uint32_t qps = 1;                    // connections (bandwidth tests use them all)
    std::vector<uint32_t> threads{1};    // each value is one run
    uint32_t connections = 0;            // connect-rate: how many (0: default)
    uint32_t inflight = 16;              // connect-rate: how many at once
    double max_seconds = 10;             // mr, connect-rate: time guard per row
    bool blocking = false;
    // send_lat: post the receive for the next message before answering (as
    // perftest does) instead of after (as ucx_perftest's tag_lat does).
    bool recv_first = false;
    // write_lat: every Write is signaled and its completion reaped before
    // waiting for the peer's Write (perftest's ib_write_lat order), so the
    // program polls its CQ between Writes. Default: silent Writes, no poll.
    bool signaled = false;
    bool json = false;
    int progress = -1;  // -1: when stderr is a terminal
    int port_fd = -1;   // --local child: where to report the port
};

// One row of output. Latency rows: samples are per-operation latencies (µs);
// bandwidth rows: one sample per window round of one connection.
struct Result {
    std::string test;  // "send_lat", ..., "mr", "connect"
    bool latency = true;
    uint32_t size = 0;
    uint32_t iters = 0;
    bool blocking = false;
    bool recv_first = false;  // send_lat: Options::recv_first
    bool signaled = false;    // write_lat: Options::signaled
    bool loop = false;  // both endpoints in one process, one thread (ndperf loop)
    uint32_t qps = 1, threads = 1;
    uint32_t inflight = 0;  // connect: connections at once
    uint64_t working_set = 0;  // bandwidth: buffer bytes each side cycles through
    uint32_t window = 0;       // bandwidth: requests per sample (one window round)
    uint32_t cq_mod = 1;       // bandwidth: requests per completion
    std::vector<double> samples_us;
    std::vector<double> samples2_us;  // mr: Deregister latencies
    double seconds = 0;               // elapsed for the measured operations (all threads)
    uint64_t bytes = 0;
    uint64_t messages = 0;            // operations (messages, registrations, connections)
    bool truncated = false;           // stopped by the time guard
    std::string clock;                // latency samples: "tsc" or "clock_gettime" (sample_clock.cpp)
    std::string transport;            // --transport, or "default"
    int spin_us = -1;                 // --spin-us, -1 if not given
    std::string data_path;            // the provider's own words (adapter notes)
};

const char *TestName(Test t);
bool ParseTest(const std::string &s, Test *t);
bool IsLatency(Test t);

// The control message the client sends before each test (connection 0).
struct Control {
    uint32_t magic;  // kControlMagic
    uint32_t test;   // Test, or kDone
    uint32_t size;
    uint32_t iters;  // per connection, warm-up included
    uint32_t window;
    uint32_t blocking;
    uint32_t qps;      // connections in the data phase
    uint32_t threads;  // server threads for the data phase
    uint32_t working_set;
    uint32_t order;  // kOrder* bits: Options::recv_first, Options::signaled
};
constexpr uint32_t kOrderRecvFirst = 1;
constexpr uint32_t kOrderSignaled = 2;
static_assert(sizeof(Control) == 40, "Control travels between ndperf client and server");
constexpr uint32_t kControlMagic = 0x4E445046;  // "NDPF"
constexpr uint32_t kDone = 0xFFFFFFFF;

// Connection private data: what the client wants from the server.
struct Hello {
    uint32_t magic;  // kHelloMagic
    uint32_t mode;   // Mode
    uint32_t index;  // this connection's number
    uint32_t count;  // connections the client will make
};
constexpr uint32_t kHelloMagic = 0x4E445048;  // "NDPH"
// Requests a perf connection's queues hold (each way).
constexpr uint32_t kQueueDepth = 512;

// Server and client (session.cpp); both may throw std::runtime_error.
int RunServer(Options &o);  // resets o.port_fd once the port is reported
int RunClient(const Options &o, std::vector<Result> *results);
// Registration benchmark, local only (mr.cpp).
int RunMr(const Options &o, std::vector<Result> *results);
// Connection setup rate (connect_rate.cpp). The server side takes over after
// the first request has been read (its connector and listener are passed on).
int RunConnectRateClient(const Options &o, std::vector<Result> *results);
// Both endpoints in this process, one thread (loop.cpp).
int RunLoop(const Options &o, std::vector<Result> *results);
// Options parsing and help (options.cpp); throws std::runtime_error.
Options ParseOptions(int argc, char **argv, std::string *connect_to);
void Usage(FILE *f);
// The clock of latency samples (sample_clock.cpp): ticks, cheap to read;
// StartSampleClock calibrates it (20 ms) before anything is measured.
void StartSampleClock();
uint64_t SampleTicks();
double TicksToUs(uint64_t ticks);
const char *SampleClockName();
// Output (report.cpp).
void PrintTable(const Options &o, const std::vector<Result> &results);
void PrintJson(const std::vector<Result> &results);
// "[3/12] send_bw 64 KiB" on stderr when the progress line is on; Progress("")
// clears it.
void Progress(const Options &o, const std::string &what);
std::string SizeText(uint64_t bytes);

}  // namespace ndperf
