// Runs one of the built benchmark tools ($OPENND_TEST_BUILD_DIR/bin/NAME)
// with a time bound, capturing stdout and stderr; the child is killed and
// reaped if it overruns.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace bench_test {

inline std::string ToolPath(const std::string &name) {
    const char *d = getenv("OPENND_TEST_BUILD_DIR");
    return std::string(d ? d : OPENND_TEST_BUILD_DIR_DEFAULT) + "/bin/" + name;
}

struct Outcome {
    int status = -1;  // exit code, or -1 if killed
    std::string out, err;
};

// `env`: "NAME=value" entries added to the child's environment;
// `before_exec`, if set, runs in the child just before exec.
inline Outcome RunTool(const std::string &name, const std::vector<std::string> &args, int seconds = 60,
                       const std::vector<std::string> &env = {}, void (*before_exec)() = nullptr) {
    Outcome r;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return r;
    std::string bin = ToolPath(name);
    std::vector<char *> argv{const_cast<char *>(bin.c_str())};
    for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (const auto &e : env) putenv(const_cast<char *>(e.c_str()));
        if (before_exec) before_exec();
        execv(bin.c_str(), argv.data());
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    auto deadline = time(nullptr) + seconds;
    while (open_fds > 0 && time(nullptr) < deadline) {
        if (poll(fds, 2, 1000) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !fds[i].revents) continue;
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            } else {
                (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
            }
        }
    }
    if (open_fds > 0) kill(pid, SIGKILL);
    for (auto &f : fds)
        if (f.fd >= 0) close(f.fd);
    int st = 0;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

}  // namespace bench_test
