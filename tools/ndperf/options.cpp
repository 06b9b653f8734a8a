// ndperf's command line: every option and its help text.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "perf.h"

namespace ndperf {
namespace {

uint32_t ParseSize(const std::string &s) {
    char *end = nullptr;
    unsigned long v = std::strtoul(s.c_str(), &end, 10);
    if (end == s.c_str()) throw std::runtime_error("not a size: " + s);
    if (*end == 'K' || *end == 'k') v <<= 10;
    if (*end == 'M' || *end == 'm') v <<= 20;
    if (v > (1ul << 30)) throw std::runtime_error("size too large: " + s);
    return static_cast<uint32_t>(v);
}

uint32_t ParseCount(const std::string &s, uint32_t min) {
    char *end = nullptr;
    unsigned long v = std::strtoul(s.c_str(), &end, 10);
    if (end == s.c_str() || *end || v < min || v > 1000000000ul) throw std::runtime_error("bad number: " + s);
    return static_cast<uint32_t>(v);
}

std::vector<std::string> Split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

}  // namespace

void Usage(FILE *f) {
    std::fprintf(f,
        "usage: ndperf [MODE] -s [options]          server (serves every mode, one client run, then exits)\n"
        "       ndperf [MODE] -c ADDRESS [options]  client (connects to the server's address)\n"
        "       ndperf [MODE] --local [options]     both, as two processes on this host\n"
        "MODE (anywhere on the line) is one of:\n"
        "  perf          (default) latency, bandwidth and message rate between two endpoints\n"
        "  mr            memory registration: Register and Deregister latency and rate by size and\n"
        "                threads; local only, needs no server (ndmrlat / ndmrrate)\n"
        "  connect-rate  connections established and torn down per second, --inflight at once, and\n"
        "                the setup latency (Connect to CompleteConnect done)\n"
        "  loop          send_lat with both endpoints in this process, driven by one thread: the\n"
        "                provider's software cost per message, with no cross-core traffic; needs\n"
        "                no server (ndperf loop [-S sizes] [--transport T])\n"
        "Where and how:\n"
        "  -a, --address IP     server and --local: where to listen (default 127.0.0.1; IPv6 works);\n"
        "                       a -c client opens the adapter that owns the server's address\n"
        "  -6, --ipv6           use ::1 instead of 127.0.0.1\n"
        "  -p, --port N         port (server: 0 picks one and prints it)\n"
        "      --provider NAME  open the adapter through this catalog entry (see ndinstall -l);\n"
        "                       default: the first provider that has the address\n"
        "      --transport T    ndsoft data path, for this process and the --local server:\n"
        "                       shm (cross-memory attach, the default), copy (through the shared rings,\n"
        "                       OPENND_SOFT_CMA=0) or tcp (OPENND_SOFT_TRANSPORT=tcp)\n"
        "What (perf):\n"
        "  -t, --test LIST      comma list of send_lat, write_lat, read_lat (latency: half round\n"
        "                       trip for send/write, full for read) and send_bw, write_bw,\n"
        "                       read_bw (bandwidth GB/s and message rate Mmsg/s); default send_lat\n"
        "  -S, --sizes LIST     message sizes in bytes, e.g. 8,4096,1048576 (K/M suffixes ok);\n"
        "                       default 8 (mr: 4K to 64M in powers of 4)\n"
        "      --sweep          sizes 1 B to 32 MiB in powers of 4\n"
        "  -n, --iters N        measured iterations (per connection and thread; default: by size)\n"
        "  -w, --warmup N       warm-up iterations (default: iters/10)\n"
        "  -W, --window N       requests in flight per connection for bandwidth tests (default 32)\n"
        "      --cq-mod N       bandwidth: only every Nth request (and the last) asks for a completion,\n"
        "                       the others are SILENT_SUCCESS, as perftest's --cq-mod (default 1: all;\n"
        "                       at most --window)\n"
        "      --working-set B  bandwidth: bytes of buffer each side cycles through, at least one\n"
        "                       message (default 1M, as the raw baselines reuse one buffer; e.g.\n"
        "                       64M measures memory rather than cache bandwidth)\n"
        "  -q, --qps N          connections; bandwidth tests drive all of them and report the\n"
        "                       aggregate (latency tests use the first); default 1\n"
        "  -T, --threads LIST   threads sharing the connections (bandwidth, mr), one run per value,\n"
        "                       e.g. 1,2; at most --qps for bandwidth; default 1\n"
        "  -b, --blocking       wait with CQ Notify + completion port instead of polling (latency\n"
        "                       tests; mr: GetOverlappedResult waits instead of polling)\n"
        "      --recv-first     send_lat: post the receive for the next message before answering, as\n"
        "                       perftest does (default: just after sending the answer, as ucx_perftest's\n"
        "                       tag_lat does; either way one is posted before its message is sent)\n"
        "      --spin-us N      ndsoft: while a Notify waits, its progress thread polls N us before it\n"
        "                       sleeps (OPENND_SOFT_SPIN_US, here and in the --local server; default 0)\n"
        "What (connect-rate):\n"
        "      --connections N  connections to make (default 2000)\n"
        "      --inflight N     connections being set up or torn down at once (default 16)\n"
        "      --max-seconds S  mr and connect-rate: stop a row after S seconds (default 10); the\n"
        "                       row is marked truncated\n"
        "Output:\n"
        "      --json           JSON (a list of rows) instead of the table\n"
        "      --progress       a progress line on stderr (default: when stderr is a terminal)\n"
        "      --no-progress    no progress line\n"
        "  -h, --help           this text\n"
        "The server needs no options but where to listen: the client tells it each test.\n");
}

Options ParseOptions(int argc, char **argv, std::string *connect_to) {
    Options o;
    bool mode_given = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a[0] != '-') {  // the mode, anywhere among the options
            if (mode_given) throw std::runtime_error("unexpected argument: " + a);
            mode_given = true;
            if (a == "perf") o.mode = Mode::Perf;
            else if (a == "mr") o.mode = Mode::Mr;
            else if (a == "connect-rate") o.mode = Mode::ConnectRate;
            else if (a == "loop") o.mode = Mode::Loop;
            else throw std::runtime_error("unknown mode: " + a);
            continue;
        }
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
            return argv[++i];
        };
        if (a == "-s" || a == "--server") o.server = true;
        else if (a == "-c" || a == "--client") *connect_to = value();
        else if (a == "--local") o.local = true;
        else if (a == "-a" || a == "--address") o.address = value();
        else if (a == "-6" || a == "--ipv6") o.address = "::1";
        else if (a == "-p" || a == "--port") o.port = static_cast<uint16_t>(ParseCount(value(), 0));
        else if (a == "--port-fd") o.port_fd = static_cast<int>(ParseCount(value(), 0));
        else if (a == "--provider") o.provider = value();
        else if (a == "--transport") {
            o.transport = value();
            if (o.transport != "shm" && o.transport != "copy" && o.transport != "tcp")
                throw std::runtime_error("unknown transport: " + o.transport + " (shm, copy or tcp)");
        } else if (a == "-t" || a == "--test") {
            o.tests.clear();
            for (const auto &t : Split(value())) {
                Test parsed;
                if (!ParseTest(t, &parsed)) throw std::runtime_error("unknown test: " + t);
                o.tests.push_back(parsed);
            }
        } else if (a == "-S" || a == "--sizes") {
            o.sizes.clear();
            for (const auto &s : Split(value())) o.sizes.push_back(ParseSize(s));
            o.sizes_given = true;
        } else if (a == "--sweep") {
            o.sizes.clear();
            for (uint32_t s = 1; s <= (32u << 20); s *= 4) o.sizes.push_back(s);
            o.sizes.push_back(32u << 20);
            o.sizes_given = true;
        } else if (a == "-n" || a == "--iters") o.iters = ParseCount(value(), 1);
        else if (a == "-w" || a == "--warmup") o.warmup = ParseCount(value(), 0);
        else if (a == "-W" || a == "--window") o.window = ParseCount(value(), 1);
        else if (a == "--cq-mod") o.cq_mod = ParseCount(value(), 1);
        else if (a == "--working-set") o.working_set = ParseSize(value());
        else if (a == "-q" || a == "--qps") o.qps = ParseCount(value(), 1);
        else if (a == "-T" || a == "--threads") {
            o.threads.clear();
            for (const auto &t : Split(value())) o.threads.push_back(ParseCount(t, 1));
        } else if (a == "--connections") o.connections = ParseCount(value(), 1);
        else if (a == "--inflight") o.inflight = ParseCount(value(), 1);
        else if (a == "--max-seconds") o.max_seconds = std::max(0.1, std::strtod(value().c_str(), nullptr));
        else if (a == "-b" || a == "--blocking") o.blocking = true;
        else if (a == "--recv-first") o.recv_first = true;
        else if (a == "--signaled") o.signaled = true;
        else if (a == "--spin-us") o.spin_us = static_cast<int>(ParseCount(value(), 0));
        else if (a == "--json") o.json = true;
        else if (a == "--progress") o.progress = 1;
        else if (a == "--no-progress") o.progress = 0;
        else if (a == "-h" || a == "--help") {
            Usage(stdout);
            std::exit(0);
        } else throw std::runtime_error("unknown option: " + a);
    }
    if (o.threads.empty()) throw std::runtime_error("--threads needs a value");
    if (o.cq_mod > o.window) throw std::runtime_error("--cq-mod: at most --window (no completion would come)");
    if (o.qps > 256) throw std::runtime_error("--qps: at most 256");
    if (o.mode == Mode::Loop) {
        for (Test t : o.tests)
            if (t != Test::SendLat) throw std::runtime_error(std::string("loop measures send_lat only, not ") + TestName(t));
        if (o.blocking) throw std::runtime_error("loop: one thread cannot block waiting for itself (--blocking)");
    }
    if (o.mode == Mode::Mr && !o.sizes_given) {
        o.sizes.clear();
        for (uint32_t s = 4096; s <= (64u << 20); s *= 4) o.sizes.push_back(s);
    }
    return o;
}

}  // namespace ndperf
