// ndrping command line: rping's options (-s/-c, -a, -I, -p, -C, -S, -v, -V,
// -d) plus a timeout that bounds every wait.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bulk_protocol.h"
#include "endpoint.h"
#include "ndrping.h"

using namespace ndrping;

namespace {

void Usage(FILE *f) {
    std::fprintf(f,
                 "usage: ndrping -s [-vVd] [-S size] [-C count] -a addr [-p port] [-T sec]\n"
                 "       ndrping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port] [-T sec]\n"
                 "rdma-core's rping over NetworkDirect: the same protocol, so it pairs with rping\n"
                 "(e.g. on Linux siw or rxe) or with itself.\n"
                 "  -c             client side\n"
                 "  -s             server side (one connection, then exit)\n"
                 "  -a addr        server: address to listen on; client: the server's address\n"
                 "  -I addr        client: local address (default: the one routing to the server)\n"
                 "  -p port        port (default %u; server: 0 picks a free one)\n"
                 "  -C count       pings (default 0: client forever; server: until the client leaves)\n"
                 "  -S size        ping data size, %u..%u (default %u; server: expect this size)\n"
                 "  -v             print the ping data, as rping does\n"
                 "  -V             validate the ping data (ndrping always does: accepted for rping's sake)\n"
                 "  -d             debug messages on stderr\n"
                 "  -T, --timeout sec  bound on every wait, connection included (default 30)\n"
                 "  --connect-pause ms  client: wait this long between Connect and CompleteConnect\n"
                 "                 (diagnosis: a peer that must not get data at once after it accepts)\n"
                 "  --bulk         not rping's protocol: OpenND's bulk exchange (tools/ndrping/bulk_protocol.h),\n"
                 "                 which tests/interop/verbs_bulk speaks over verbs. Both sides Send -C messages\n"
                 "                 (default %u, at most %u) and RDMA Write and Read -S bytes (default %u, at\n"
                 "                 most %u) at once, many in flight, and verify every byte\n"
                 "  -h, --help     this text\n"
                 "Exit status 0 only if every ping's data verified; 1 on any failure; 2 on bad usage.\n",
                 kDefaultPort, kMinSize, kMaxSize, kDefaultSize, BULK_DEFAULT_MESSAGES, BULK_MAX_MESSAGES,
                 BULK_DEFAULT_SIZE, BULK_MAX_SIZE);
}

bool ParseUnsigned(const char *text, unsigned long max, unsigned long *out) {
    char *end = nullptr;
    if (!text || !*text || *text == '-') return false;
    unsigned long v = std::strtoul(text, &end, 10);
    if (*end || v > max) return false;
    *out = v;
    return true;
}

// Throws std::invalid_argument with the message for the user.
Options Parse(int argc, char **argv) {
    static const option longopts[] = {{"timeout", required_argument, nullptr, 'T'},
                                      {"connect-pause", required_argument, nullptr, 'P'},
                                      {"bulk", no_argument, nullptr, 'B'},
                                      {"help", no_argument, nullptr, 'h'},
                                      {nullptr, 0, nullptr, 0}};
    Options o;
    unsigned long v = 0;
    bool count_given = false;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":a:I:p:C:S:T:scvVdh", longopts, nullptr)) != -1) {
        switch (c) {
        case 'a': o.address = optarg; break;
        case 'I': o.source = optarg; break;
        case 'p':
            if (!ParseUnsigned(optarg, 65535, &v)) throw std::invalid_argument(std::string("bad port: ") + optarg);
            o.port = static_cast<uint16_t>(v);
            break;
        case 'C':
            if (!ParseUnsigned(optarg, 0x7fffffff, &v)) throw std::invalid_argument(std::string("bad count: ") + optarg);
            o.count = static_cast<uint32_t>(v);
            count_given = true;
            break;
        case 'S':
            if (!ParseUnsigned(optarg, 0xffffffff, &v)) throw std::invalid_argument(std::string("bad size: ") + optarg);
            o.size = static_cast<uint32_t>(v);
            o.size_given = true;
            break;
        case 'T': {
            char *end = nullptr;
            double s = std::strtod(optarg, &end);
            if (*end || !(s > 0) || s > 86400) throw std::invalid_argument(std::string("bad timeout: ") + optarg);
            o.timeout_ms = static_cast<uint64_t>(s * 1000);
            break;
        }
        case 'P':
            if (!ParseUnsigned(optarg, 60000, &v)) throw std::invalid_argument(std::string("bad pause: ") + optarg);
            o.connect_pause_ms = static_cast<uint32_t>(v);
            break;
        case 's': o.server = true; break;
        case 'c': o.client = true; break;
        case 'v': ++o.verbose; break;
        case 'V': break;  // always on
        case 'd': o.debug = true; break;
        case 'B': o.bulk = true; break;
        case 'h':
            Usage(stdout);
            std::exit(0);
        case ':': throw std::invalid_argument(std::string("option -") + char(optopt) + " needs a value");
        default: throw std::invalid_argument(std::string("unknown option ") + argv[optind - 1]);
        }
    }
    if (optind < argc) throw std::invalid_argument(std::string("unexpected argument: ") + argv[optind]);
    if (o.server == o.client) throw std::invalid_argument("give exactly one of -s and -c");
    if (o.address.empty())
        throw std::invalid_argument(o.server ? "-a: the address to listen on is required (an ND adapter's address)"
                                             : "-a: the server's address is required");
    if (o.server && !o.source.empty()) throw std::invalid_argument("-I is for the client");
    uint32_t min = o.bulk ? 1 : kMinSize, max = o.bulk ? BULK_MAX_SIZE : kMaxSize;
    if (!o.size_given) o.size = o.bulk ? BULK_DEFAULT_SIZE : kDefaultSize;
    if (o.size < min || o.size > max)
        throw std::invalid_argument("invalid size " + std::to_string(o.size) + " (valid range is " +
                                    std::to_string(min) + " to " + std::to_string(max) + ")");
    if (o.bulk && !count_given) o.count = BULK_DEFAULT_MESSAGES;
    if (o.bulk && o.count > BULK_MAX_MESSAGES)
        throw std::invalid_argument("--bulk: at most " + std::to_string(BULK_MAX_MESSAGES) + " messages (-C)");
    return o;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    try {
        o = Parse(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ndrping: %s\n", e.what());
        Usage(stderr);
        return 2;
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);  // -v lines reach a log file as they happen
    if (FAILED(NdStartup())) {
        std::fprintf(stderr, "ndrping: NdStartup failed\n");
        return 1;
    }
    int rc = 1;
    try {
        rc = o.bulk ? RunBulk(o) : o.server ? RunServer(o) : RunClient(o);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ndrping %s: error: %s\n", o.server ? "server" : "client", e.what());
        rc = 1;
    }
    NdCleanup();
    return rc;
}
