// fi_rma_bw: libfabric's one-sided (RMA Write / RMA Read) bandwidth between
// two processes on this host, the figure OpenND's write_bw / read_bw are set
// against, and with --op send its message rate (fi_send into posted
// fi_recv), set against send_bw's (Debian 12 ships no fabtests, only
// fi_pingpong). See bench/README.md.
//
// The process forks: the parent is the initiator, the child the target. Each
// opens its own fabric (RDM endpoint, AV, CQ, one registered buffer of --size
// bytes) after the fork, and they swap endpoint names, MR keys and buffer
// addresses over a socketpair. The initiator keeps --window fi_write (fi_read)
// operations in flight; the target only polls its CQ, which is what makes a
// manual-progress provider (tcp;ofi_rxm) move the data (with --op send it
// also keeps 2 x --window receives posted and counts what arrives), until
// the initiator says over the socketpair that it is done and how many Sends
// to expect. Every wait is bounded (--timeout, alarm() in both processes);
// the child dies with the parent and is reaped. What both processes share
// (errors, the socketpair, one side's fabric): fi_fabric.h.
#include "fi_fabric.h"

namespace fi_bench {
namespace {

// --op send: the receives the target keeps posted (all into the one buffer:
// every Send carries the same bytes).
struct Receives {
    std::vector<fi_context2> ctx;
    std::vector<fi_context2 *> to_post;
    long received = 0;

    Receives(int n) : ctx(static_cast<size_t>(n)) {
        for (auto &c : ctx) to_post.push_back(&c);
    }
    void Post(Fabric &f, const Options &o) {
        while (!to_post.empty()) {
            ssize_t r = fi_recv(f.ep, f.buf, o.size, f.desc, FI_ADDR_UNSPEC, to_post.back());
            if (r == -FI_EAGAIN) return;  // after the next progress
            CheckFi(static_cast<int>(r), "fi_recv");
            to_post.pop_back();
        }
    }
};

int Target(int sock, const Options &o) {
    g_role = "target";
    Fabric f;
    Meet(f, sock, o, kTargetFill);

    // Progress until told to stop (and, for Sends, until every one has
    // arrived). RMA targets see no completions: polling the CQ drives the
    // provider's data progress.
    const bool sends = o.op == Op::Send;
    Receives rx(sends ? 2 * o.window : 0);
    rx.Post(f, o);
    long expected = -1;  // Sends the initiator made, once it says
    fi_cq_entry entries[16];
    Spinner spinner;
    for (unsigned long spins = 0; expected < 0 || rx.received < expected; ++spins) {
        ssize_t r = fi_cq_read(f.cq, entries, 16);
        if (r == -FI_EAVAIL) CqError(f);
        if (r < 0 && r != -FI_EAGAIN) CheckFi(static_cast<int>(r), "fi_cq_read");
        for (ssize_t k = 0; k < r; ++k) {
            if (!sends) Die("a completion at an RMA target");
            rx.to_post.push_back(static_cast<fi_context2 *>(entries[k].op_context));
            ++rx.received;
        }
        if (r > 0 || !rx.to_post.empty()) rx.Post(f, o);
        if (r > 0)
            spinner.Progressed();
        else
            spinner.Idle();
        if ((spins & 63) != 0 || expected >= 0) continue;
        char c;
        ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);
        if (n == 1 && c == kDone) {
            ReadAll(sock, &expected, sizeof expected, "the number of Sends");
            continue;
        }
        if (n == 1) Die("unexpected byte %d from the initiator", c);
        if (n == 0) Die("the initiator closed the socketpair (it failed)");
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) Die("recv: %s", std::strerror(errno));
    }
    if (sends && rx.received > 0)
        for (size_t k = 0; k < o.size; ++k)
            if (f.buf[k] != kInitiatorFill) Die("a Send brought byte %zu = 0x%02x, not 0x%02x", k, f.buf[k], kInitiatorFill);
    f.Close();
    WriteAll(sock, &kBye, 1);
    WriteAll(sock, &rx.received, sizeof rx.received);
    return 0;
}

// --- initiator -------------------------------------------------------------

struct Run {
    double seconds = 0;
    std::vector<double> window_seconds;  // time per `window` completions
};

// Posts n operations, `window` at a time, and waits for them all.
Run Pump(Fabric &f, const Options &o, long n, bool timed) {
    struct Slot {
        fi_context2 ctx;
    };
    std::vector<Slot> slots(static_cast<size_t>(o.window));
    std::vector<Slot *> free_slots;
    for (auto &s : slots) free_slots.push_back(&s);
    Run run;
    if (timed) run.window_seconds.reserve(static_cast<size_t>(n / o.window + 1));
    long posted = 0, completed = 0;
    const auto t0 = Clock::now();
    auto last = t0;
    fi_cq_entry entries[16];
    Spinner spinner;
    while (completed < n) {
        while (posted < n && !free_slots.empty()) {
            Slot *s = free_slots.back();
            ssize_t r = o.op == Op::Read    ? fi_read(f.ep, f.buf, o.size, f.desc, f.peer, f.peer_addr, f.peer_key, &s->ctx)
                        : o.op == Op::Write ? fi_write(f.ep, f.buf, o.size, f.desc, f.peer, f.peer_addr, f.peer_key, &s->ctx)
                                            : fi_send(f.ep, f.buf, o.size, f.desc, f.peer, &s->ctx);
            if (r == -FI_EAGAIN) break;  // the provider needs progress first
            CheckFi(static_cast<int>(r), o.op == Op::Read ? "fi_read" : o.op == Op::Write ? "fi_write" : "fi_send");
            free_slots.pop_back();
            ++posted;
        }
        ssize_t r = fi_cq_read(f.cq, entries, 16);
        if (r == -FI_EAGAIN) {
            spinner.Idle();
            continue;
        }
        if (r == -FI_EAVAIL) CqError(f);
        CheckFi(static_cast<int>(r), "fi_cq_read");
        spinner.Progressed();
        for (ssize_t k = 0; k < r; ++k) {
            if (!entries[k].op_context) Die("fi_cq_read: a completion without its operation's context");
            free_slots.push_back(static_cast<Slot *>(entries[k].op_context));
        }
        const long before = completed;
        completed += r;
        const long windows = completed / o.window - before / o.window;  // boundaries this batch crossed
        if (timed && windows > 0) {
            const auto now = Clock::now();
            const double each = std::chrono::duration<double>(now - last).count() / static_cast<double>(windows);
            run.window_seconds.insert(run.window_seconds.end(), static_cast<size_t>(windows), each);
            last = now;
        }
    }
    run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return run;
}

double Median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string JsonString(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
    return out + "\"";
}

int Initiator(int sock, const Options &o) {
    g_role = "initiator";
    Fabric f;
    Meet(f, sock, o, kInitiatorFill);

    const long warmup = std::max(o.iters / 10, 1L);
    Pump(f, o, warmup, false);  // warm-up: connection set-up, first touches
    Run run = Pump(f, o, o.iters, true);
    if (o.op == Op::Read) {  // a completed read has the target's bytes here
        for (size_t k = 0; k < o.size; ++k)
            if (f.buf[k] != kTargetFill) Die("fi_read brought byte %zu = 0x%02x, not 0x%02x", k, f.buf[k], kTargetFill);
    }
    WriteAll(sock, &kDone, 1);
    const long sent = o.op == Op::Send ? warmup + o.iters : 0;
    WriteAll(sock, &sent, sizeof sent);
    char bye = 0;
    ReadAll(sock, &bye, 1, "its goodbye");
    if (bye != kBye) Die("unexpected byte %d from the target", bye);
    long received = -1;
    ReadAll(sock, &received, sizeof received, "its count of Sends");
    if (received != sent) Die("the target received %ld Sends of %ld", received, sent);

    const std::string provider = f.info->fabric_attr->prov_name ? f.info->fabric_attr->prov_name : "?";
    const std::string mr_mode = MrModeText(f.MrMode());
    f.Close();

    const double bytes = static_cast<double>(o.size);
    const double gbps = bytes * static_cast<double>(o.iters) / run.seconds / 1e9;
    std::vector<double> rates;
    for (double s : run.window_seconds) rates.push_back(bytes * o.window / s / 1e9);
    // Fewer than `window` operations: the run is its only sample.
    const double median = rates.empty() ? gbps : Median(rates);
    const double mmsgps = static_cast<double>(o.iters) / run.seconds / 1e6;
    const char *op = OpName(o.op);
    if (o.json) {
        std::printf("{\"tool\":\"fi_rma_bw\",\"provider\":%s,\"op\":\"%s\",\"size\":%zu,\"iters\":%ld,\"window\":%d,"
                    "\"gbps\":%.6g,\"gbps_median\":%.6g,\"mmsgps\":%.6g,\"windows\":%zu,\"seconds\":%.6g,"
                    "\"mr_mode\":%s}\n",
                    JsonString(provider).c_str(), op, o.size, o.iters, o.window, gbps, median, mmsgps, rates.size(),
                    run.seconds, JsonString(mr_mode).c_str());
    } else {
        std::printf("%-14s %-6s %10s %8s %6s %12s %12s %10s\n", "provider", "op", "bytes", "iters", "window",
                    "GB/s overall", "GB/s median", "Mmsg/s");
        std::printf("%-14s %-6s %10zu %8ld %6d %12.3f %12.3f %10.3f\n", provider.c_str(), op, o.size, o.iters, o.window,
                    gbps, median, mmsgps);
    }
    std::fflush(stdout);
    return 0;
}

// --- command line ----------------------------------------------------------

[[noreturn]] void Usage(int status) {
    std::fprintf(status ? stderr : stdout,
                 "usage: fi_rma_bw [--provider tcp;ofi_rxm] [--op write|read|send] [--size BYTES] [--iters N]\n"
                 "                 [--window 32] [--timeout 30] [--json]\n"
                 "libfabric RMA Write/Read bandwidth, or Send message rate, between two forked processes\n"
                 "on this host.\n"
                 "  --provider P   libfabric provider (default \"tcp;ofi_rxm\", falling back to \"tcp\")\n"
                 "  --op OP        write (fi_write), read (fi_read) or send (fi_send into posted\n"
                 "                 fi_recv; also reports messages per second); default write\n"
                 "  --size BYTES   bytes per operation (K, M suffixes); default 1M\n"
                 "  --iters N      timed operations, after N/10 warm-up ones; default 1000\n"
                 "  --window W     operations in flight; default 32\n"
                 "  --timeout S    whole run bound in seconds; default 30\n"
                 "  --json         one JSON object instead of the table\n"
                 "Exit status 0, 1 on a failure (the libfabric call and its error on stderr), 2 for bad usage.\n");
    std::exit(status);
}

long long ParseNumber(const char *s, const char *opt) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || end == s) {
        std::fprintf(stderr, "fi_rma_bw: %s: not a number: %s\n", opt, s);
        Usage(2);
    }
    if (*end == 'k' || *end == 'K') v <<= 10, ++end;
    else if (*end == 'm' || *end == 'M') v <<= 20, ++end;
    else if (*end == 'g' || *end == 'G') v <<= 30, ++end;
    if (*end || v <= 0) {
        std::fprintf(stderr, "fi_rma_bw: %s: want a positive number: %s\n", opt, s);
        Usage(2);
    }
    return v;
}

Options Parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "fi_rma_bw: %s needs a value\n", a.c_str());
                Usage(2);
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") Usage(0);
        else if (a == "--json") o.json = true;
        else if (a == "--provider" || a == "-p") o.provider = value(), o.provider_given = true;
        else if (a == "--op") {
            std::string op = value();
            if (op != "write" && op != "read" && op != "send") {
                std::fprintf(stderr, "fi_rma_bw: --op: write, read or send, not %s\n", op.c_str());
                Usage(2);
            }
            o.op = op == "read" ? Op::Read : op == "write" ? Op::Write : Op::Send;
        } else if (a == "--size") o.size = static_cast<size_t>(ParseNumber(value(), "--size"));
        else if (a == "--iters") o.iters = static_cast<long>(ParseNumber(value(), "--iters"));
        else if (a == "--window") o.window = static_cast<int>(std::min(ParseNumber(value(), "--window"), 4096LL));
        else if (a == "--timeout") o.timeout = static_cast<int>(std::min(ParseNumber(value(), "--timeout"), 86400LL));
        else {
            std::fprintf(stderr, "fi_rma_bw: unknown option %s\n", a.c_str());
            Usage(2);
        }
    }
    return o;
}

}  // namespace
}  // namespace fi_bench

using namespace fi_bench;

int main(int argc, char **argv) {
    const Options o = Parse(argc, argv);
    g_timeout = o.timeout;
    struct sigaction sa{};
    sa.sa_handler = OnAlarm;
    sigaction(SIGALRM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Die("socketpair: %s", std::strerror(errno));
    std::fflush(nullptr);
    const pid_t parent = getpid();
    // libfabric is opened only after the fork, separately in each process.
    const pid_t child = fork();
    if (child < 0) Die("fork: %s", std::strerror(errno));
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        close(sv[0]);
        alarm(static_cast<unsigned>(o.timeout) + 2);  // the initiator's alarm goes first and says why
        int rc = Target(sv[1], o);
        std::fflush(nullptr);
        _exit(rc);
    }
    g_child = child;
    close(sv[1]);
    alarm(static_cast<unsigned>(o.timeout));
    const int rc = Initiator(sv[0], o);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = -1;
    alarm(0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "fi_rma_bw: the target process %s %d\n",
                     WIFEXITED(status) ? "exited with" : "died of signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return 1;
    }
    return rc;
}
