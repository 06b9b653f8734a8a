// ndconformance: the NetworkDirect conformance suite. Tells a provider
// author whether a provider behaves as ND applications expect (ND2-SPEC §7
// and COMPAT-NOTES), and lets users evaluate a provider. See --help and
// docs/conformance.md.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ndsupport.h"
#include "options.h"
#include "support/objects.h"
#include "support/peer.h"
#include "support/remote_peer.h"

namespace ndconf {

void PrintHelp() {
    std::printf(
        "Usage: ndconformance [--provider NAME | --library PATH --guid GUID] [options]\n"
        "\n"
        "Runs the NetworkDirect conformance suite against one provider and prints a\n"
        "summary per group (pass/fail/skip, and the failed cases). Two-sided cases\n"
        "start their peer as a separate process (this program in peer mode).\n"
        "\n"
        "Provider under test:\n"
        "  --provider NAME     the catalog entry with this name (see ndinfo / ndinstall -l).\n"
        "                      Without --provider or --library, the only usable catalog\n"
        "                      entry is used (an error if there are several).\n"
        "  --library PATH      load this provider library directly (not from the catalog)\n"
        "  --guid GUID         its provider GUID, e.g. {4F70656E-4E44-536F-6674-000000000001}\n"
        "                      (with --library, the Registration and Helper groups do not\n"
        "                      apply and are not run)\n"
        "\n"
        "Where to run:\n"
        "  --address IP        a local address the provider serves; repeat for several.\n"
        "                      Connection cases run once per address. Default: 127.0.0.1\n"
        "                      and ::1 (those the provider serves)\n"
        "  --peer-netns NAME   run the peer process in network namespace NAME (ip netns;\n"
        "                      needs root), as if on another host\n"
        "  --peer-host H:PORT  run each peer on another machine, started there by\n"
        "                      `ndconformance --provider NAME --serve-peers PORT` (the\n"
        "                      other machine's provider: ND to ND across providers)\n"
        "  --peer-address IP   the peer's address there, one per family of --address;\n"
        "                      the cases connect to it instead of to their own address\n"
        "  --serve-peers PORT  be the peer server for --peer-host on this machine: one\n"
        "                      peer process per connection, until killed (test networks\n"
        "                      only: whoever reaches PORT can start peers)\n"
        "  --fault-link IFACE  the fault cases may take this interface down and bring it\n"
        "                      back up (needs root; a throw-away machine or VM: every\n"
        "                      connection over it breaks). Without it they are skipped\n"
        "\n"
        "What to run and report:\n"
        "  --filter PATTERN    GoogleTest filter over case names (Group.Case[/param]),\n"
        "                      e.g. 'Connection.*' or 'RemoteAccess.*-*BadToken*'\n"
        "  --list              list the cases (with the filter applied) and exit\n"
        "  --junit FILE        also write the results as JUnit XML\n"
        "  --timeout SEC       bound for any single wait (completion, reply); a case\n"
        "                      that hangs fails after it. Default 10\n"
        "  --case-timeout SEC  watchdog for a whole case; the case fails and the run\n"
        "                      continues with the next one. Default 300\n"
        "  --verbose           show GoogleTest's own output and every case as it runs\n"
        "  --help              this text\n"
        "\n"
        "Exit status: 0 if every case passed or was skipped, 1 if any failed, 2 for a\n"
        "usage error, 3 if the provider could not be loaded.\n"
        "\n"
        "A case is skipped only when the provider reports the feature as unsupported\n"
        "(ND_NOT_SUPPORTED, or MaxSharedReceiveQueueDepth 0 for shared receive queues).\n");
}

namespace {

bool ParseUnsigned(const char *s, unsigned *out) {
    char *end = nullptr;
    unsigned long v = std::strtoul(s, &end, 10);
    if (!*s || *end || v == 0 || v > 100000) return false;
    *out = static_cast<unsigned>(v);
    return true;
}

}  // namespace

std::string ParseOptions(int argc, char **argv, Options *o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](std::string *out) -> bool {
            size_t eq = a.find('=');
            if (eq != std::string::npos) {
                *out = a.substr(eq + 1);
                a = a.substr(0, eq);
                return true;
            }
            if (i + 1 >= argc) return false;
            *out = argv[++i];
            return true;
        };
        std::string v;
        if (a.rfind("--gtest_", 0) == 0) {
            o->gtest_args.push_back(a);
            continue;
        }
        std::string name = a.substr(0, a.find('='));
        if (name == "--help" || name == "-h") {
            o->help = true;
        } else if (name == "--list") {
            o->list = true;
        } else if (name == "--verbose" || name == "-v") {
            o->verbose = true;
        } else if (name == "--worker") {
            o->worker = true;
        } else if (name == "--peer") {
            o->peer = true;
        } else if (name == "--provider" || name == "--library" || name == "--guid" || name == "--address" ||
                   name == "--peer-netns" || name == "--peer-address" || name == "--peer-host" ||
                   name == "--serve-peers" || name == "--fault-link" ||
                   name == "--filter" || name == "--junit" || name == "--timeout" || name == "--case-timeout" ||
                   name == "--progress-fd" || name == "--control-fd") {
            if (!value(&v) || v.empty()) return name + " needs a value";
            if (name == "--provider") o->provider = v;
            if (name == "--library") o->library = v;
            if (name == "--guid") o->guid = v;
            if (name == "--address") o->addresses.push_back(v);
            if (name == "--peer-netns") o->peer_netns = v;
            if (name == "--peer-host") o->peer_host = v;
            if (name == "--serve-peers" && (!ParseUnsigned(v.c_str(), &o->serve_peers) || o->serve_peers > 65535))
                return "bad --serve-peers: " + v;
            if (name == "--peer-address") o->peer_addresses.push_back(v);
            if (name == "--fault-link") o->fault_link = v;
            if (name == "--filter") o->filter = v;
            if (name == "--junit") o->junit = v;
            if (name == "--timeout" && !ParseUnsigned(v.c_str(), &o->timeout_s)) return "bad --timeout: " + v;
            if (name == "--case-timeout" && !ParseUnsigned(v.c_str(), &o->case_timeout_s))
                return "bad --case-timeout: " + v;
            if (name == "--progress-fd") o->progress_fd = std::atoi(v.c_str());
            if (name == "--control-fd") o->control_fd = std::atoi(v.c_str());
        } else {
            return "unknown option " + a + " (see --help)";
        }
    }
    if (!o->provider.empty() && !o->library.empty()) return "--provider and --library are exclusive";
    if (!o->library.empty() && o->guid.empty()) return "--library needs --guid";
    if (o->library.empty() && !o->guid.empty()) return "--guid goes with --library";
    for (const auto &list : {o->addresses, o->peer_addresses})
        for (const auto &a : list) {
            opennd::net::IpAddress ip;
            if (!opennd::net::ParseAddress(a, &ip)) return "not an IP address: " + a;
        }
    if (!o->peer_netns.empty() && !o->peer_host.empty()) return "--peer-netns and --peer-host are exclusive";
    if ((o->peer_netns.empty() && o->peer_host.empty()) != o->peer_addresses.empty())
        return "--peer-address goes with --peer-netns or --peer-host";
    return "";
}

std::vector<std::string> ProviderArguments(const Options &o) {
    std::vector<std::string> args;
    if (!o.provider.empty()) args.insert(args.end(), {"--provider", o.provider});
    if (!o.library.empty()) args.insert(args.end(), {"--library", o.library, "--guid", o.guid});
    for (const auto &a : o.addresses) args.insert(args.end(), {"--address", a});
    if (!o.peer_netns.empty()) args.insert(args.end(), {"--peer-netns", o.peer_netns});
    if (!o.peer_host.empty()) args.insert(args.end(), {"--peer-host", o.peer_host});
    for (const auto &a : o.peer_addresses) args.insert(args.end(), {"--peer-address", a});
    if (!o.fault_link.empty()) args.insert(args.end(), {"--fault-link", o.fault_link});
    args.insert(args.end(), {"--timeout", std::to_string(o.timeout_s)});
    return args;
}

}  // namespace ndconf

int main(int argc, char **argv) {
    ndconf::Options o;
    std::string err = ndconf::ParseOptions(argc, argv, &o);
    if (!err.empty()) {
        std::fprintf(stderr, "ndconformance: %s\n", err.c_str());
        return 2;
    }
    if (o.help) {
        ndconf::PrintHelp();
        return 0;
    }
    // Many connections need many descriptors (in this process and the peer).
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    ndc::SetWaitMs(uint64_t(o.timeout_s) * 1000);
    if (o.serve_peers) {
        ndconf::Options peer = o;
        peer.addresses.clear();
        peer.serve_peers = 0;
        std::vector<std::string> args{"ndconformance", "--peer"};
        for (auto &a : ndconf::ProviderArguments(peer)) args.push_back(a);
        return ndc::ServePeers(static_cast<uint16_t>(o.serve_peers), args);
    }
    if (o.peer) {
        if (o.control_fd < 0) return 2;
        NdStartup();
        ndc::ProviderChoice c{o.provider, o.library, o.guid};
        std::string why = ndc::LoadProvider(c);
        if (!why.empty()) {
            std::fprintf(stderr, "ndconformance peer: %s\n", why.c_str());
            return 3;
        }
        int rc = ndc::RunPeer(o.control_fd);
        std::fflush(stdout);
        _exit(rc);  // skip static destructors while provider threads may run
    }
    if (o.worker) return ndconf::RunWorker(o, argc, argv);
    return ndconf::RunDriver(o);
}
