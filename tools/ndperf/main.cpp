// ndperf command line. `ndperf --local` runs a server in a child process on
// this host and the client here: the quickest way to see an ND ping-pong.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "perf.h"

using namespace ndperf;

namespace {

// --transport: the ndsoft data path, chosen through its environment variables
// before NdStartup, so the --local server (a fork) inherits it.
void SelectTransport(const std::string &t) {
    if (t.empty()) return;
    unsetenv("OPENND_SOFT_CMA");
    unsetenv("OPENND_SOFT_TRANSPORT");
    if (t == "copy") setenv("OPENND_SOFT_CMA", "0", 1);
    if (t == "tcp") setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);
}

// Forks the --local server; returns its pid and sets o->port to its port.
// The server writes its port to the pipe, or port 0 and why it failed.
pid_t StartLocalServer(Options *o) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
        close(p[0]);
        Options so = *o;
        so.server = true;
        so.port_fd = p[1];
        alarm(900);  // never outlive a run that went wrong
        int r = 1;
        try {
            r = RunServer(so);
        } catch (const std::exception &e) {
            if (so.port_fd >= 0) {  // not started: the client says why
                uint16_t zero = 0;
                std::string why = e.what();
                if (write(so.port_fd, &zero, sizeof zero) == sizeof zero)
                    (void)!write(so.port_fd, why.data(), why.size());
            } else {
                std::fprintf(stderr, "ndperf server: %s\n", e.what());
            }
        }
        NdCleanup();
        _exit(r);
    }
    close(p[1]);
    uint16_t port = 0;
    ssize_t n = read(p[0], &port, sizeof port);
    std::string why;
    char buf[512];
    for (ssize_t got; n == sizeof port && port == 0 && (got = read(p[0], buf, sizeof buf)) > 0;) why.append(buf, got);
    close(p[0]);
    if (n != sizeof port || port == 0)
        throw std::runtime_error("the server did not start" + (why.empty() ? std::string() : ": " + why));
    o->port = port;
    return child;
}

}  // namespace

int main(int argc, char **argv) {
    std::string connect_to;
    Options o;
    try {
        o = ParseOptions(argc, argv, &connect_to);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "ndperf: %s\n", e.what());
        Usage(stderr);
        return 2;
    }
    bool needs_peer = o.mode != Mode::Mr && o.mode != Mode::Loop;
    if (needs_peer && !o.server && !o.local && connect_to.empty()) {
        Usage(stderr);
        return 2;
    }
    if (o.progress < 0) o.progress = isatty(2) && !o.server ? 1 : 0;
    SelectTransport(o.transport);
    if (o.spin_us >= 0) setenv("OPENND_SOFT_SPIN_US", std::to_string(o.spin_us).c_str(), 1);
    if (FAILED(NdStartup())) {
        std::fprintf(stderr, "ndperf: NdStartup failed\n");
        return 1;
    }
    int rc = 0;
    pid_t child = -1;
    try {
        std::vector<Result> results;
        if (o.server) {
            rc = RunServer(o);
        } else {
            if (needs_peer && o.local) child = StartLocalServer(&o);
            if (!connect_to.empty()) o.address = connect_to;
            StartSampleClock();  // calibrated before anything is measured
            if (o.mode == Mode::Mr) rc = RunMr(o, &results);
            else if (o.mode == Mode::ConnectRate) rc = RunConnectRateClient(o, &results);
            else if (o.mode == Mode::Loop) rc = RunLoop(o, &results);
            else rc = RunClient(o, &results);
            Progress(o, "");
            if (o.json)
                PrintJson(results);
            else
                PrintTable(o, results);
        }
    } catch (const std::exception &e) {
        Progress(o, "");
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
