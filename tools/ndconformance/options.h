// ndconformance command line. One binary, three roles:
//   driver (default)  runs the cases in a worker process, watches it (a
//                     crash or hang fails the case and the rest still run),
//                     prints the summary and writes JUnit XML;
//   --worker          runs GoogleTest and reports progress on a pipe;
//   --peer            the other end of two-sided cases (support/peer.h).
#pragma once

#include <string>
#include <vector>

namespace ndconf {

struct Options {
    // provider under test
    std::string provider;  // catalog entry name
    std::string library;
    std::string guid;
    std::vector<std::string> addresses;
    // where the peer runs: another network namespace, on its own addresses
    std::string peer_netns;
    std::string peer_host;  // or on another machine: its peer server (remote_peer.h)
    std::vector<std::string> peer_addresses;
    unsigned serve_peers = 0;  // this process is a peer server on this port
    std::string fault_link;    // a network interface the fault cases may take down (and bring back)
    // run
    std::string filter;
    std::string junit;
    unsigned timeout_s = 10;        // one wait
    unsigned case_timeout_s = 300;  // one case (watchdog)
    bool list = false;
    bool verbose = false;
    bool help = false;
    // internal roles
    bool worker = false;
    int progress_fd = -1;
    bool peer = false;
    int control_fd = -1;
    std::vector<std::string> gtest_args;  // --gtest_* passed through to the worker
};

// Parses argv; "" or the error.
std::string ParseOptions(int argc, char **argv, Options *o);
void PrintHelp();
// The arguments that select the provider, addresses and timeout, for a
// worker or peer started from this process.
std::vector<std::string> ProviderArguments(const Options &o);

int RunDriver(const Options &o);
int RunWorker(const Options &o, int argc, char **argv);

}  // namespace ndconf
