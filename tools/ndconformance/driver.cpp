// The driver role: lists the cases, runs them in a worker process, restarts
// the worker after a crash or a hang (the case fails, the others still run),
// prints per-case lines and the per-group summary, writes JUnit XML.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "options.h"
#include "support/util.h"

namespace ndconf {
namespace {

struct Case {
    std::string name;  // Suite.Test as GoogleTest names it
    std::string group;
    char status = 0;   // 'P', 'F', 'S'; 0 = not run
    uint64_t ms = 0;
    std::string message;
};

std::string GroupOf(const std::string &name) {
    std::string suite = name.substr(0, name.find('.'));
    size_t slash = suite.find('/');
    return slash == std::string::npos ? suite : suite.substr(slash + 1);
}

std::string Unescape(const std::string &s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            out += s[i + 1] == 'n' ? '\n' : s[i + 1];
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string SelfPath() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "/proc/self/exe";
    buf[n] = 0;
    return buf;
}

// The filter the user asked for, minus the groups that need a catalog
// entry when the provider is loaded with --library.
std::string EffectiveFilter(const Options &o) {
    std::string f = o.filter.empty() ? "*" : o.filter;
    if (o.library.empty()) return f;
    const char *exclude = "Registration.*:Helper.*:*/Registration.*:*/Helper.*";
    return f.find('-') == std::string::npos ? f + "-" + exclude : f + ":" + exclude;
}

struct Child {
    pid_t pid = -1;
    int out_fd = -1;  // stdout (list) or progress pipe
};

Child Spawn(const Options &o, const std::vector<std::string> &extra, bool capture_stdout) {
    int p[2];
    Child c;
    if (pipe2(p, O_CLOEXEC) != 0) return c;
    std::vector<std::string> args{"ndconformance", "--worker"};
    for (auto &a : ProviderArguments(o)) args.push_back(a);
    if (o.verbose) args.push_back("--verbose");
    if (!capture_stdout) {
        args.push_back("--progress-fd");
        args.push_back(std::to_string(p[1]));
    }
    for (auto &e : extra) args.push_back(e);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string exe = SelfPath();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);  // the worker and its peers: killed together on a hang
        if (capture_stdout)
            dup2(p[1], 1);
        else
            fcntl(p[1], F_SETFD, 0);
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return c;
    }
    c.pid = pid;
    c.out_fd = p[0];
    return c;
}

int WaitChild(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

std::string DescribeExit(int status) {
    if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

// Lists the cases. Empty with *error set if the worker could not start.
std::vector<std::string> ListCases(const Options &o, int *exit_code) {
    Child c = Spawn(o, {"--gtest_list_tests", "--gtest_filter=" + EffectiveFilter(o)}, true);
    std::vector<std::string> names;
    if (c.pid < 0) {
        *exit_code = 3;
        return names;
    }
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = read(c.out_fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) text.append(buf, static_cast<size_t>(n));
    close(c.out_fd);
    int status = WaitChild(c.pid);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    std::string suite;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? text.size() : end + 1;
        if (line.empty()) continue;
        if (line[0] != ' ') {
            suite = line;
            if (!suite.empty() && suite.back() == '.') suite.pop_back();
        } else {
            size_t b = line.find_first_not_of(' ');
            size_t e = line.find_first_of(" \t", b);
            names.push_back(suite + "." + line.substr(b, e == std::string::npos ? std::string::npos : e - b));
        }
    }
    return names;
}

void PrintCase(const Case &c) {
    const char *label = c.status == 'P' ? "PASS" : c.status == 'S' ? "SKIP" : "FAIL";
    std::printf("[ %s ] %s (%llu ms)\n", label, c.name.c_str(), static_cast<unsigned long long>(c.ms));
    if (c.status != 'P' && !c.message.empty()) {
        size_t pos = 0;
        int lines = 0;
        while (pos < c.message.size() && lines < 12) {
            size_t end = c.message.find('\n', pos);
            std::printf("         %s\n", c.message.substr(pos, end == std::string::npos ? std::string::npos : end - pos).c_str());
            pos = end == std::string::npos ? c.message.size() : end + 1;
            ++lines;
        }
        if (pos < c.message.size()) std::printf("         ...\n");
    }
    std::fflush(stdout);
}

// Runs the listed cases (in order) in one worker; marks what it reports.
// Returns false if the worker made no progress at all.
bool RunOnce(const Options &o, std::vector<Case> &cases, std::map<std::string, size_t> &index) {
    std::string filter;
    for (const Case &c : cases)
        if (!c.status) filter += (filter.empty() ? "" : ":") + c.name;
    Child child = Spawn(o, {"--gtest_filter=" + filter}, false);
    if (child.pid < 0) return false;
    std::string buffer, current;
    uint64_t started_ms = ndc::NowMs();
    bool progressed = false, killed = false;
    std::map<std::string, std::string> messages;
    for (;;) {
        pollfd p{child.out_fd, POLLIN, 0};
        int r = poll(&p, 1, 1000);
        if (r > 0) {
            char buf[65536];
            ssize_t n = read(child.out_fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            buffer.append(buf, static_cast<size_t>(n));
            size_t nl;
            while ((nl = buffer.find('\n')) != std::string::npos) {
                std::string line = buffer.substr(0, nl);
                buffer.erase(0, nl + 1);
                if (line.size() < 3) continue;
                std::string rest = line.substr(2);
                if (line[0] == 'S') {
                    current = rest;
                    started_ms = ndc::NowMs();
                    progressed = true;
                    if (o.verbose) std::printf("[ RUN  ] %s\n", current.c_str());
                } else if (line[0] == 'M') {
                    size_t sp = rest.find(' ');
                    messages[rest.substr(0, sp)] = Unescape(sp == std::string::npos ? "" : rest.substr(sp + 1));
                } else if (line[0] == 'E') {
                    // "E name status ms"
                    size_t s2 = rest.rfind(' '), s1 = rest.rfind(' ', s2 - 1);
                    std::string name = rest.substr(0, s1);
                    auto it = index.find(name);
                    if (it != index.end()) {
                        Case &c = cases[it->second];
                        c.status = rest[s1 + 1];
                        c.ms = std::strtoull(rest.c_str() + s2 + 1, nullptr, 10);
                        c.message = messages[name];
                        PrintCase(c);
                    }
                    current.clear();
                    progressed = true;
                }
            }
        } else if (!current.empty() && ndc::NowMs() - started_ms > uint64_t(o.case_timeout_s) * 1000) {
            kill(-child.pid, SIGKILL);
            kill(child.pid, SIGKILL);
            killed = true;
            break;
        }
    }
    close(child.out_fd);
    int status = WaitChild(child.pid);
    kill(-child.pid, SIGKILL);  // any peer left behind
    if (!current.empty()) {
        auto it = index.find(current);
        if (it != index.end()) {
            Case &c = cases[it->second];
            c.status = 'F';
            c.ms = ndc::NowMs() - started_ms;
            c.message = killed ? "the case did not finish within the case watchdog (--case-timeout " +
                                     std::to_string(o.case_timeout_s) + " s); its process was killed"
                               : "the case crashed its process (" + DescribeExit(status) + ")";
            if (!messages[current].empty()) c.message += "\n" + messages[current];
            PrintCase(c);
        }
    }
    return progressed;
}

std::string XmlEscape(const std::string &s) {
    std::string out;
    for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '"')
            out += "&quot;";
        else if (c < 0x20 && c != '\n' && c != '\t')
            out += ' ';
        else
            out += ch;
    }
    return out;
}

bool WriteJunit(const std::string &path, const std::vector<Case> &cases, const std::string &title) {
    std::map<std::string, std::vector<const Case *>> groups;
    size_t failures = 0, skipped = 0;
    uint64_t total_ms = 0;
    for (const Case &c : cases) {
        groups[c.group].push_back(&c);
        failures += c.status == 'F' || c.status == 0;
        skipped += c.status == 'S';
        total_ms += c.ms;
    }
    std::ofstream f(path);
    if (!f) return false;
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", total_ms / 1000.0);
    f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    f << "<testsuites name=\"" << XmlEscape(title) << "\" tests=\"" << cases.size() << "\" failures=\"" << failures
      << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"" << t << "\">\n";
    for (const auto &[group, list] : groups) {
        size_t gf = 0, gs = 0;
        uint64_t gms = 0;
        for (const Case *c : list) {
            gf += c->status == 'F' || c->status == 0;
            gs += c->status == 'S';
            gms += c->ms;
        }
        std::snprintf(t, sizeof t, "%.3f", gms / 1000.0);
        f << "  <testsuite name=\"" << XmlEscape(group) << "\" tests=\"" << list.size() << "\" failures=\"" << gf
          << "\" errors=\"0\" skipped=\"" << gs << "\" time=\"" << t << "\">\n";
        for (const Case *c : list) {
            std::snprintf(t, sizeof t, "%.3f", c->ms / 1000.0);
            std::string test = c->name.substr(c->name.find('.') + 1);
            f << "    <testcase classname=\"" << XmlEscape(c->name.substr(0, c->name.find('.'))) << "\" name=\""
              << XmlEscape(test) << "\" time=\"" << t << "\"";
            std::string first = c->message.substr(0, c->message.find('\n'));
            if (c->status == 'F' || c->status == 0) {
                std::string msg = c->status ? c->message : "not run: the worker process could not run it";
                f << ">\n      <failure message=\"" << XmlEscape(msg.substr(0, msg.find('\n'))) << "\">"
                  << XmlEscape(msg) << "</failure>\n    </testcase>\n";
            } else if (c->status == 'S') {
                f << ">\n      <skipped message=\"" << XmlEscape(first) << "\"/>\n    </testcase>\n";
            } else {
                f << "/>\n";
            }
        }
        f << "  </testsuite>\n";
    }
    f << "</testsuites>\n";
    return static_cast<bool>(f);
}

}  // namespace

int RunDriver(const Options &o) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphaned peers come back to us to be reaped
    int list_rc = 0;
    std::vector<std::string> names = ListCases(o, &list_rc);
    if (list_rc != 0) {
        std::fprintf(stderr, "ndconformance: could not list the cases (worker exit status %d)\n", list_rc);
        return list_rc == 2 ? 2 : 3;
    }
    if (o.list) {
        for (const auto &n : names) std::printf("%s\n", n.c_str());
        return 0;
    }
    std::string title = "ndconformance " +
                        (!o.provider.empty() ? "--provider " + o.provider
                         : !o.library.empty() ? "--library " + o.library
                                              : std::string("(default provider)"));
    std::printf("%s: %zu cases%s\n", title.c_str(), names.size(),
                o.library.empty() ? "" : " (Registration and Helper groups need a catalog entry: not run)");
    std::fflush(stdout);
    std::vector<Case> cases;
    std::map<std::string, size_t> index;
    for (const auto &n : names) {
        index[n] = cases.size();
        Case c;
        c.name = n;
        c.group = GroupOf(n);
        cases.push_back(c);
    }
    uint64_t t0 = ndc::NowMs();
    for (;;) {
        bool left = false;
        for (const Case &c : cases) left |= !c.status;
        if (!left) break;
        if (!RunOnce(o, cases, index)) {
            std::fprintf(stderr, "ndconformance: the worker process stopped without running a case\n");
            break;
        }
    }
    uint64_t elapsed = ndc::NowMs() - t0;

    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    // Summary per group.
    std::map<std::string, std::array<size_t, 3>> groups;
    size_t pass = 0, fail = 0, skip = 0;
    for (const Case &c : cases) {
        auto &g = groups[c.group];
        if (c.status == 'P') ++g[0], ++pass;
        else if (c.status == 'S') ++g[2], ++skip;
        else ++g[1], ++fail;
    }
    std::printf("\n== Summary: %s ==\n", title.c_str());
    std::printf("%-22s %6s %6s %6s\n", "group", "pass", "fail", "skip");
    for (const auto &[name, g] : groups) std::printf("%-22s %6zu %6zu %6zu\n", name.c_str(), g[0], g[1], g[2]);
    std::printf("%-22s %6zu %6zu %6zu   (%.1f s)\n", "total", pass, fail, skip, elapsed / 1000.0);
    if (fail) {
        std::printf("\nFailed cases:\n");
        for (const Case &c : cases)
            if (c.status != 'P' && c.status != 'S')
                std::printf("  %s: %s\n", c.name.c_str(),
                            c.status ? c.message.substr(0, c.message.find('\n')).c_str() : "not run");
    }
    if (skip) {
        std::printf("\nSkipped cases:\n");
        for (const Case &c : cases)
            if (c.status == 'S') std::printf("  %s: %s\n", c.name.c_str(), c.message.substr(0, c.message.find('\n')).c_str());
    }
    if (!o.junit.empty() && !WriteJunit(o.junit, cases, title)) {
        std::fprintf(stderr, "ndconformance: cannot write %s\n", o.junit.c_str());
        return 2;
    }
    std::fflush(stdout);
    return fail ? 1 : 0;
}

}  // namespace ndconf
