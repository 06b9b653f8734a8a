// The worker role: loads the provider, runs the GoogleTest cases and
// reports each case's start, end and messages on the progress pipe.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "ndsupport.h"
#include "opennd/providers.h"
#include "options.h"
#include "suite.h"

namespace ndconf {
namespace {

std::string EscapeLine(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            continue;
        else
            out += c;
    }
    return out;
}

class ProgressReporter : public ::testing::EmptyTestEventListener {
public:
    explicit ProgressReporter(int fd) : fd_(fd) {}

    void OnTestStart(const ::testing::TestInfo &t) override {
        messages_.clear();
        Line("S " + Name(t));
    }
    void OnTestPartResult(const ::testing::TestPartResult &r) override {
        if (r.type() == ::testing::TestPartResult::kSuccess) return;
        std::string where = r.file_name() ? std::string(r.file_name()) + ":" + std::to_string(r.line_number()) + ": "
                                          : std::string();
        // Keep the file's base name only.
        size_t slash = where.rfind('/', where.find(':'));
        if (slash != std::string::npos) where = where.substr(slash + 1);
        std::string text = r.type() == ::testing::TestPartResult::kSkip ? std::string(r.message())
                                                                        : where + r.message();
        if (messages_.size() < 16384) messages_ += (messages_.empty() ? "" : "\n") + text;
    }
    void OnTestEnd(const ::testing::TestInfo &t) override {
        const ::testing::TestResult *r = t.result();
        char status = r->Skipped() ? 'S' : r->Failed() ? 'F' : 'P';
        if (!messages_.empty()) Line("M " + Name(t) + " " + EscapeLine(messages_));
        Line(std::string("E ") + Name(t) + " " + status + " " + std::to_string(r->elapsed_time()));
    }

private:
    static std::string Name(const ::testing::TestInfo &t) {
        return std::string(t.test_suite_name()) + "." + t.name();
    }
    void Line(const std::string &s) {
        std::string l = s + "\n";
        size_t done = 0;
        while (done < l.size()) {
            ssize_t n = write(fd_, l.data() + done, l.size() - done);
            if (n <= 0) return;
            done += static_cast<size_t>(n);
        }
    }
    int fd_;
    std::string messages_;
};

// The provider to test when none was named: the only usable catalog entry.
std::string DefaultProvider(std::string *name) {
    opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
    std::vector<std::string> usable;
    for (auto &p : snap.providers) {
        if (p.provider) {
            usable.push_back(p.entry.name);
            p.provider->Release();
        }
    }
    if (usable.size() == 1) {
        *name = usable[0];
        return "";
    }
    if (usable.empty()) return "no usable provider in the catalog (" + snap.directory + "); use --provider or --library";
    std::string list;
    for (auto &u : usable) list += " " + u;
    return "several providers in the catalog, choose one with --provider:" + list;
}

}  // namespace

int RunWorker(const Options &given, int argc, char **argv) {
    (void)argc;
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the driver watches us; never outlive it
    Options o = given;
    NdStartup();
    if (o.provider.empty() && o.library.empty()) {
        std::string err = DefaultProvider(&o.provider);
        if (!err.empty()) {
            std::fprintf(stderr, "ndconformance: %s\n", err.c_str());
            return 3;
        }
    }
    std::string why = ndc::LoadProvider(ndc::ProviderChoice{o.provider, o.library, o.guid});
    if (!why.empty()) {
        std::fprintf(stderr, "ndconformance: %s\n", why.c_str());
        return 3;
    }
    // The addresses: those given (each must be served), else the defaults
    // the provider serves.
    std::vector<std::string> addresses;
    bool explicit_addresses = !o.addresses.empty();
    std::vector<std::string> candidates = explicit_addresses ? o.addresses
                                                             : std::vector<std::string>{"127.0.0.1", "::1"};
    for (const auto &a : candidates) {
        ndc::Ref<IND2Adapter> adapter;
        HRESULT hr = ndc::OpenAdapterFor(ndc::ParseIp(a), adapter.put());
        if (SUCCEEDED(hr)) {
            addresses.push_back(a);
        } else if (explicit_addresses) {
            std::fprintf(stderr, "ndconformance: the provider does not serve %s (%s)\n", a.c_str(),
                         ndc::StatusName(hr).c_str());
            return 3;
        }
    }
    if (addresses.empty()) {
        std::fprintf(stderr, "ndconformance: the provider serves neither 127.0.0.1 nor ::1; use --address\n");
        return 3;
    }
    ndc::SetTestAddresses(addresses);
    if (!o.peer_netns.empty() || !o.peer_host.empty()) {
        std::string why = o.peer_host.empty() ? ndc::SetPeerNamespace(o.peer_netns, o.peer_addresses)
                                              : ndc::SetRemotePeers(o.peer_host, o.peer_addresses);
        if (!why.empty()) {
            std::fprintf(stderr, "ndconformance: %s\n", why.c_str());
            return 3;
        }
    }
    Options peer = o;
    peer.addresses.clear();
    peer.peer_netns.clear();
    peer.peer_host.clear();
    peer.peer_addresses.clear();
    peer.fault_link.clear();
    ndc::SetFaultLink(o.fault_link);
    std::vector<std::string> peer_args{"ndconformance", "--peer"};
    for (auto &a : ProviderArguments(peer)) peer_args.push_back(a);
    ndc::SetPeerArguments(peer_args);
    ndc::SetReporter([](const std::string &what) { ADD_FAILURE() << what; });

    std::vector<std::string> gargs{argv[0]};
    for (auto &g : o.gtest_args) gargs.push_back(g);
    std::vector<char *> gargv;
    for (auto &g : gargs) gargv.push_back(g.data());
    gargv.push_back(nullptr);
    int gargc = static_cast<int>(gargs.size());
    ::testing::InitGoogleTest(&gargc, gargv.data());
    ::testing::TestEventListeners &listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (!o.verbose) delete listeners.Release(listeners.default_result_printer());
    if (o.progress_fd >= 0) listeners.Append(new ProgressReporter(o.progress_fd));
    int rc = RUN_ALL_TESTS();
    std::fflush(stdout);
    std::fflush(stderr);
    // Skip static destruction: a provider may still have threads winding down.
    _exit(rc);
}

}  // namespace ndconf
