// ndperf command line. `ndperf --local` runs a server in a child process on
// this host and the client here: the quickest way to see an ND ping-pong.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "perf.h"

using namespace ndperf;

namespace {

void Usage(FILE *f) {
    std::fprintf(f,
                 "usage: ndperf -s [options]          server\n"
                 "       ndperf -c ADDRESS [options]  client (connects to the server's address)\n"
                 "       ndperf --local [options]     both, as two processes on this host\n"
                 "Measures NetworkDirect latency, bandwidth and message rate between two endpoints.\n"
                 "  -a, --address IP     local address (server: where to listen; default 127.0.0.1; IPv6 ok)\n"
                 "  -p, --port N         port (server: 0 picks one and prints it)\n"
                 "  -t, --test LIST      comma list of send_lat, write_lat, read_lat (latency: half round\n"
                 "                       trip for send/write, full for read) and send_bw, write_bw,\n"
                 "                       read_bw (bandwidth and message rate); default send_lat\n"
                 "  -S, --sizes LIST     message sizes in bytes, e.g. 8,4096,1048576 (K/M suffixes ok)\n"
                 "      --sweep          sizes 1 B to 32 MiB in powers of 4\n"
                 "  -n, --iters N        measured iterations (default: by size)\n"
                 "  -w, --warmup N       warm-up iterations (default: iters/10)\n"
                 "  -W, --window N       requests in flight for bandwidth tests (default 32)\n"
                 "  -b, --blocking       wait with CQ Notify + completion port instead of polling\n"
                 "      --json           JSON output\n"
                 "  -h, --help           this text\n");
}

uint32_t ParseSize(const std::string &s) {
    char *end = nullptr;
    unsigned long v = std::strtoul(s.c_str(), &end, 10);
    if (end && (*end == 'K' || *end == 'k')) v <<= 10;
    if (end && (*end == 'M' || *end == 'm')) v <<= 20;
    if (v > (1ul << 30)) throw std::runtime_error("size too large: " + s);
    return static_cast<uint32_t>(v);
}

std::vector<std::string> Split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

Options Parse(int argc, char **argv, std::string *connect_to) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value for " + a);
            return argv[++i];
        };
        if (a == "-s" || a == "--server") o.server = true;
        else if (a == "-c" || a == "--client") *connect_to = value();
        else if (a == "--local") o.local = true;
        else if (a == "-a" || a == "--address") o.address = value();
        else if (a == "-p" || a == "--port") o.port = static_cast<uint16_t>(std::stoi(value()));
        else if (a == "--port-fd") o.port_fd = std::stoi(value());
        else if (a == "-t" || a == "--test") {
            o.tests.clear();
            for (const auto &t : Split(value())) {
                Test parsed;
                if (!ParseTest(t, &parsed)) throw std::runtime_error("unknown test: " + t);
                o.tests.push_back(parsed);
            }
        } else if (a == "-S" || a == "--sizes") {
            o.sizes.clear();
            for (const auto &s : Split(value())) o.sizes.push_back(ParseSize(s));
        } else if (a == "--sweep") {
            o.sizes.clear();
            for (uint32_t s = 1; s <= (32u << 20); s *= 4) o.sizes.push_back(s);
            o.sizes.push_back(32u << 20);
        } else if (a == "-n" || a == "--iters") o.iters = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "-w" || a == "--warmup") o.warmup = static_cast<uint32_t>(std::stoul(value()));
        else if (a == "-W" || a == "--window") o.window = std::max(1u, static_cast<uint32_t>(std::stoul(value())));
        else if (a == "-b" || a == "--blocking") o.blocking = true;
        else if (a == "--json") o.json = true;
        else if (a == "-h" || a == "--help") {
            Usage(stdout);
            std::exit(0);
        } else throw std::runtime_error("unknown option: " + a);
    }
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    std::string connect_to;
    Options o;
    try {
        o = Parse(argc, argv, &connect_to);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ndperf: %s\n", e.what());
        Usage(stderr);
        return 2;
    }
    if (!o.server && !o.local && connect_to.empty()) {
        Usage(stderr);
        return 2;
    }
    if (FAILED(NdStartup())) {
        std::fprintf(stderr, "ndperf: NdStartup failed\n");
        return 1;
    }
    int rc = 0;
    pid_t child = -1;
    try {
        if (o.server) {
            rc = RunServer(o);
        } else {
            if (o.local) {
                int p[2];
                if (pipe(p) != 0) throw std::runtime_error("pipe failed");
                child = fork();
                if (child == 0) {
                    close(p[0]);
                    Options so = o;
                    so.server = true;
                    so.port_fd = p[1];
                    alarm(600);
                    int r = 1;
                    try {
                        r = RunServer(so);
                    } catch (const std::exception &e) {
                        std::fprintf(stderr, "ndperf server: %s\n", e.what());
                    }
                    NdCleanup();
                    _exit(r);
                }
                close(p[1]);
                uint16_t port = 0;
                if (read(p[0], &port, sizeof port) != sizeof port) throw std::runtime_error("the server did not start");
                close(p[0]);
                o.port = port;
            } else {
                o.address = connect_to;
            }
            std::vector<Result> results;
            rc = RunClient(o, &results);
            if (o.json)
                PrintJson(results);
            else
                PrintTable(results);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ndperf: %s\n", e.what());
        rc = 1;
    }
    if (child > 0) {
        int status = 0;
        if (rc != 0) kill(child, SIGTERM);
        waitpid(child, &status, 0);
        if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) rc = 1;
    }
    NdCleanup();
    return rc;
}
