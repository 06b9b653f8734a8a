// The clock latency samples are taken with. perftest reads the CPU's
// time-stamp counter once per iteration; clock_gettime costs 23 ns on this
// kind of virtual machine against 10 ns for the counter, and an 8 B
// shared-memory half round trip is about 150 ns, so the clock alone was
// several percent of every sample. The counter is used only where the
// kernel keeps time with it itself (its clocksource is "tsc": invariant and
// in step across CPUs) and the CPU says it is constant and non-stop; its
// rate is measured against CLOCK_MONOTONIC once. Anywhere else, or on
// another architecture, samples use CLOCK_MONOTONIC.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "perf.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define NDPERF_HAVE_TSC 1
#endif

namespace ndperf {
namespace {

struct State {
    bool tsc = false;
    double ns_per_tick = 1.0;
};

uint64_t MonotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

bool KernelTrustsTsc() {
    std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    if (!(source >> name) || name != "tsc") return false;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("flags", 0) == 0)
            return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
    return false;
}

State Calibrate() {
    State s;
#ifdef NDPERF_HAVE_TSC
    if (!KernelTrustsTsc()) return s;
    uint64_t t0 = MonotonicNs(), c0 = __rdtsc();
    usleep(20000);
    uint64_t t1 = MonotonicNs(), c1 = __rdtsc();
    if (c1 <= c0 || t1 <= t0) return s;
    s.ns_per_tick = double(t1 - t0) / double(c1 - c0);
    s.tsc = true;
#endif
    return s;
}

const State &Get() {
    static const State s = Calibrate();
    return s;
}

}  // namespace

void StartSampleClock() { (void)Get(); }

uint64_t SampleTicks() {
#ifdef NDPERF_HAVE_TSC
    if (Get().tsc) return __rdtsc();
#endif
    return MonotonicNs();
}

double TicksToUs(uint64_t ticks) { return ticks * Get().ns_per_tick / 1000.0; }

const char *SampleClockName() { return Get().tsc ? "tsc" : "clock_gettime"; }

}  // namespace ndperf
