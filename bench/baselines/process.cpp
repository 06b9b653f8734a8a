#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace opennd::bench {

namespace {

int g_child_cpu = -1;

std::string Errno(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

void PinTo(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

void SleepMs(int ms) {
    timespec ts{0, ms * 1000000L};
    nanosleep(&ts, nullptr);
}

}  // namespace

void EnablePinning() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE && second < 0; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        (first < 0 ? first : second) = c;
    }
    if (first < 0) return;
    if (second < 0) {
        std::fprintf(stderr, "ndbaseline: --pin: only one CPU available, both processes share it\n");
        second = first;
    }
    PinTo(first);
    g_child_cpu = second;
}

Mapping::Mapping(std::size_t bytes, bool shared) : size_(bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error(Errno("mmap") + " (" + std::to_string(bytes) + " bytes)");
    data_ = static_cast<char *>(p);
}

Mapping::~Mapping() { munmap(data_, size_); }

void ChildSide::Ready() {
    char c = 'R';
    if (write(status_fd_, &c, 1) != 1) throw std::runtime_error(Errno("child: write ready"));
}

bool ChildSide::StopRequested() const {
    pollfd p{stop_fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;  // EOF (POLLHUP/POLLIN) once the parent closed its end or died
}

void ChildSide::WaitStop() const {
    while (!deadline_.Expired()) {
        pollfd p{stop_fd_, POLLIN, 0};
        int ms = static_cast<int>(deadline_.RemainingSeconds() * 1000) + 1;
        if (poll(&p, 1, ms) > 0) return;
    }
}

Child::Child(const std::function<void(ChildSide &)> &body, double guard_seconds) {
    int status[2], stop[2];
    if (pipe2(status, O_CLOEXEC) != 0) throw std::runtime_error(Errno("pipe2"));
    if (pipe2(stop, O_CLOEXEC) != 0) {
        close(status[0]);
        close(status[1]);
        throw std::runtime_error(Errno("pipe2"));
    }
    pid_t parent = getpid();
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
        int e = errno;
        for (int fd : {status[0], status[1], stop[0], stop[1]}) close(fd);
        errno = e;
        throw std::runtime_error(Errno("fork"));
    }
    if (pid_ == 0) {
        close(status[0]);
        close(stop[1]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        if (g_child_cpu >= 0) PinTo(g_child_cpu);
        std::string error;
        try {
            ChildSide side(status[1], stop[0], guard_seconds);
            body(side);
            _exit(0);
        } catch (const std::exception &e) {
            error = e.what();
        } catch (...) {
            error = "unknown exception";
        }
        std::string msg = "E" + error;
        ssize_t ignored = write(status[1], msg.data(), msg.size());
        (void)ignored;
        _exit(1);
    }
    close(status[1]);
    close(stop[0]);
    status_fd_ = status[0];
    stop_fd_ = stop[1];
}

Child::~Child() {
    if (pid_ > 0 && !reaped_) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    if (status_fd_ >= 0) close(status_fd_);
    if (stop_fd_ >= 0) close(stop_fd_);
}

void Child::WaitReady(double seconds) {
    pollfd p{status_fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(seconds * 1000));
    char c = 0;
    if (r > 0 && read(status_fd_, &c, 1) == 1 && c == 'R') return;
    if (r == 0) {
        Reap(0);
        throw std::runtime_error("child process did not get ready within " + std::to_string(seconds) + " s");
    }
    // It failed (sent 'E...' or closed the channel): collect why.
    std::string rest = c == 'E' ? ReadStatus() : std::string();
    Reap(2);
    if (c == 'E') throw std::runtime_error("child process: " + rest);
    Finish(0);
    throw std::runtime_error("child process ended before it was ready");
}

void Child::RequestStop() {
    if (stop_fd_ >= 0) {
        close(stop_fd_);
        stop_fd_ = -1;
    }
}

void Child::Reap(double seconds) {
    if (reaped_) return;
    RequestStop();
    Deadline d(seconds);
    for (;;) {
        pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
        if (r == pid_ || (r < 0 && errno != EINTR)) break;
        if (d.Expired()) {
            kill(pid_, SIGKILL);
            while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        SleepMs(1);
    }
    reaped_ = true;
}

std::string Child::ReadStatus() {
    // Only called once the child is gone or has written 'E': read to EOF.
    std::string s;
    char buf[512];
    for (;;) {
        pollfd p{status_fd_, POLLIN, 0};
        if (poll(&p, 1, 2000) <= 0) break;
        ssize_t n = read(status_fd_, buf, sizeof buf);
        if (n <= 0) break;
        s.append(buf, static_cast<std::size_t>(n));
    }
    return s;
}

void Child::Finish(double seconds) {
    Reap(seconds);
    if (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0) return;
    std::string text = ReadStatus();
    if (!text.empty() && text[0] == 'R') text.erase(0, 1);
    if (!text.empty() && text[0] == 'E') text.erase(0, 1);
    if (text.empty()) {
        if (WIFSIGNALED(wait_status_))
            text = std::string("killed by signal ") + strsignal(WTERMSIG(wait_status_)) +
                   (WTERMSIG(wait_status_) == SIGKILL ? " (it did not stop in time)" : "");
        else
            text = "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
    }
    throw std::runtime_error("child process: " + text);
}

}  // namespace opennd::bench
