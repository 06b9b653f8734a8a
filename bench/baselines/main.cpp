// ndbaseline: raw limits between two processes on this machine (shared
// memory, cross-memory attach, loopback TCP), the floor that any transport,
// OpenND's included, is measured against. See bench/README.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "baselines.h"
#include "process.h"

namespace opennd::bench {

const std::vector<TestDef> &AllTests() {
    static const std::vector<TestDef> tests = {
        {"cacheline-pingpong", Kind::kLatency, false, "8 B flag bounced between two processes: the polling floor",
         CachelinePingPong},
        {"shm-pingpong", Kind::kLatency, true, "message ping-pong through a shared mapping (copy in, flag, copy out)",
         ShmPingPong},
        {"shm-copy-bw", Kind::kBandwidth, true, "memcpy into a ring of shared slots, the other process copies out",
         ShmCopyBandwidth},
        {"cma-write-bw", Kind::kBandwidth, true, "process_vm_writev into the other process", CmaWriteBandwidth},
        {"cma-read-bw", Kind::kBandwidth, true, "process_vm_readv from the other process", CmaReadBandwidth},
        {"cma-write-pingpong", Kind::kLatency, true,
         "ping-pong by process_vm_writev each way, spinning on the last 8 B: a one-call Write's floor",
         CmaWritePingPong},
        {"cma-read-lat", Kind::kLatency, true, "one process_vm_readv from the other process: a one-call Read's floor",
         CmaReadLatency},
        {"tcp-pingpong", Kind::kLatency, true, "TCP loopback ping-pong, TCP_NODELAY, busy-polling recv (--blocking)",
         TcpPingPong},
        {"tcp-stream", Kind::kBandwidth, true, "TCP loopback streaming send/recv", TcpStream},
    };
    return tests;
}

std::vector<uint64_t> DefaultSizes(const TestDef &t, bool quick) {
    if (!t.sized) return {8};
    if (t.kind == Kind::kLatency)
        return quick ? std::vector<uint64_t>{8, 4096, 65536} : std::vector<uint64_t>{8, 64, 512, 4096, 65536, 1 << 20};
    return quick ? std::vector<uint64_t>{65536, 1 << 20, 4 << 20, 32 << 20}
                 : std::vector<uint64_t>{4096, 65536, 1 << 20, 4 << 20, 32 << 20};
}

MeasureConfig LatencyConfig(const Options &o) {
    MeasureConfig c;
    c.iterations = o.iters ? o.iters : (o.quick ? 2000 : 20000);
    c.warmup = std::clamp<uint64_t>(c.iterations / 10, 10, 2000);
    c.max_seconds = o.max_seconds;
    c.min_batch_ns = 2000;  // a sample spans >= 2 us, so reading the clock costs < 3%
    c.max_batch = 1000;
    return c;
}

MeasureConfig BandwidthConfig(const Options &o, uint64_t size) {
    MeasureConfig c;
    uint64_t budget = o.quick ? (256ull << 20) : (2ull << 30);  // bytes per size
    c.iterations = o.iters ? o.iters : std::clamp<uint64_t>(budget / size, o.quick ? 8 : 20, o.quick ? 20000 : 200000);
    c.warmup = std::max<uint64_t>(c.iterations / 10, 2);
    c.max_seconds = o.max_seconds;
    c.min_batch_ns = 20000;
    c.max_batch = 4096;
    return c;
}

}  // namespace opennd::bench

namespace {

using namespace opennd::bench;

void Usage(FILE *out) {
    std::fprintf(out,
                 "usage: ndbaseline [options] [TEST...]\n"
                 "Measures raw limits between two processes (forked) on this machine. With no\n"
                 "TEST, runs them all. Tests (--list for details):\n");
    for (const auto &t : AllTests()) std::fprintf(out, "  %-20s %s\n", t.name, t.summary);
    std::fprintf(out,
                 "options:\n"
                 "  --list             the tests, their kind and default sizes\n"
                 "  --json             JSON on stdout instead of the table\n"
                 "  --samples          with --json: every sample too\n"
                 "  --sizes LIST       message sizes, e.g. 8,64,4k,1M (default: per test)\n"
                 "  --iters N          timed operations per size (default: 20000 latency,\n"
                 "                     2 GiB worth for bandwidth; quick: 2000 / 256 MiB)\n"
                 "  --quick            fewer sizes and iterations\n"
                 "  --max-seconds S    stop each size's measurement after S s (default 5, quick 2)\n"
                 "  --ipv6             tcp tests over [::1] instead of 127.0.0.1\n"
                 "  --blocking         tcp-pingpong with blocking recv instead of busy polling\n"
                 "  --pin              pin the two processes to the first two allowed CPUs\n"
                 "  -h, --help         this text\n"
                 "Exit status: 0 all passed, 1 a test failed (reason on stderr and in the\n"
                 "JSON \"failures\"), 2 bad usage.\n");
}

void List() {
    for (const auto &t : AllTests()) {
        std::string sizes;
        for (uint64_t s : DefaultSizes(t, false)) {
            if (!sizes.empty()) sizes += ',';
            sizes += FormatSize(s);  // not `"," + ...`: GCC 12 -O3's false -Wrestrict
        }
        std::printf("%-20s %-9s sizes %-40s %s\n", t.name, t.kind == Kind::kLatency ? "latency" : "bandwidth",
                    sizes.c_str(), t.summary);
    }
}

bool ParseSizes(const std::string &text, std::vector<uint64_t> *out) {
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        uint64_t v = 0;
        if (!ParseSize(item, &v)) return false;
        out->push_back(v);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return !out->empty();
}

int BadUsage(const std::string &msg) {
    std::fprintf(stderr, "ndbaseline: %s (see --help)\n", msg.c_str());
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    bool json = false, samples = false, max_given = false;
    std::vector<const TestDef *> selected;
    Document doc;
    doc.tool = "ndbaseline";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "-h" || a == "--help") {
            Usage(stdout);
            return 0;
        } else if (a == "--list") {
            List();
            return 0;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--samples") {
            samples = true;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--ipv6") {
            o.ipv6 = true;
        } else if (a == "--blocking") {
            o.blocking = true;
        } else if (a == "--pin") {
            EnablePinning();
        } else if (a == "--sizes") {
            const char *v = value();
            if (!v || !ParseSizes(v, &o.sizes)) return BadUsage("--sizes wants sizes like 8,64,4k,1M");
        } else if (a == "--iters") {
            const char *v = value();
            char *end = nullptr;
            o.iters = v ? std::strtoull(v, &end, 10) : 0;
            if (!v || *end || o.iters == 0) return BadUsage("--iters wants a positive count");
        } else if (a == "--max-seconds") {
            const char *v = value();
            char *end = nullptr;
            o.max_seconds = v ? std::strtod(v, &end) : 0;
            if (!v || *end || !(o.max_seconds > 0) || o.max_seconds > 3600)
                return BadUsage("--max-seconds wants a number of seconds in (0, 3600]");
            max_given = true;
        } else if (a == "all") {
            for (const auto &t : AllTests()) selected.push_back(&t);
        } else if (!a.empty() && a[0] != '-') {
            const TestDef *found = nullptr;
            for (const auto &t : AllTests())
                if (a == t.name) found = &t;
            if (!found) return BadUsage("unknown test '" + a + "'");
            selected.push_back(found);
        } else {
            return BadUsage("unknown option '" + a + "'");
        }
    }
    if (!max_given && o.quick) o.max_seconds = 2;
    if (selected.empty())
        for (const auto &t : AllTests()) selected.push_back(&t);
    doc.options = {{"quick", o.quick ? "true" : "false"},
                   {"max_seconds", std::to_string(o.max_seconds)},
                   {"iters", o.iters ? std::to_string(o.iters) : "default"},
                   {"ipv6", o.ipv6 ? "true" : "false"},
                   {"blocking", o.blocking ? "true" : "false"}};

    if (!json) {
        PrintTableHeader(stdout);
        std::fflush(stdout);
    }
    for (const TestDef *t : selected) {
        std::vector<uint64_t> sizes = t->sized && !o.sizes.empty() ? o.sizes : DefaultSizes(*t, o.quick);
        for (uint64_t size : sizes) {
            try {
                Result r = t->run(o, size);
                if (!json) {
                    PrintTableRow(stdout, r);
                    std::fflush(stdout);
                }
                doc.results.push_back(std::move(r));
            } catch (const std::exception &e) {
                std::fprintf(stderr, "ndbaseline: %s at %s failed: %s\n", t->name, FormatSize(size).c_str(), e.what());
                doc.failures.push_back({t->name, size, e.what()});
                break;  // the larger sizes would fail the same way
            }
        }
    }
    if (json) {
        doc.with_samples = samples;
        WriteJson(stdout, doc);
    }
    return doc.failures.empty() ? 0 : 1;
}
