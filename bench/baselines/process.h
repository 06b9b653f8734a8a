// Two-process plumbing for the baselines: memory mappings, and a forked
// child with a ready/error channel (child -> parent) and a stop channel
// (parent -> child). Every child is reaped: Finish() waits a bounded time,
// then kills; the destructor kills and reaps whatever is left.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>

#include "opennd/bench/timing.h"

namespace opennd::bench {

// Anonymous, page-aligned, zero-filled mapping. shared: MAP_SHARED, so a
// child forked after it sees the same pages; else MAP_PRIVATE.
class Mapping {
public:
    Mapping(std::size_t bytes, bool shared);
    ~Mapping();
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;

    char *data() const { return data_; }
    std::size_t size() const { return size_; }
    template <class T>
    T *As() const { return reinterpret_cast<T *>(data_); }

private:
    char *data_ = nullptr;
    std::size_t size_ = 0;
};

// The child's view of the channels.
class ChildSide {
public:
    ChildSide(int status_fd, int stop_fd, double guard_seconds)
        : status_fd_(status_fd), stop_fd_(stop_fd), deadline_(guard_seconds) {}
    void Ready();                 // setup done; the parent may start
    bool StopRequested() const;   // parent asked us to stop (or died); never blocks
    void WaitStop() const;        // blocks until StopRequested() or the deadline
    // The child's own guard: every loop in the child gives up after it.
    const Deadline &deadline() const { return deadline_; }

private:
    int status_fd_, stop_fd_;
    Deadline deadline_;
};

class Child {
public:
    // Forks. The child runs body(side) and exits 0, or exits 1 after sending
    // the exception text to the parent. It dies with the parent
    // (PR_SET_PDEATHSIG). guard_seconds bounds the child's loops.
    Child(const std::function<void(ChildSide &)> &body, double guard_seconds);
    ~Child();
    Child(const Child &) = delete;
    Child &operator=(const Child &) = delete;

    pid_t pid() const { return pid_; }
    // Waits until the child called Ready(). Throws the child's error if it
    // failed first, or a timeout error.
    void WaitReady(double seconds);
    void RequestStop();
    // Readable once the child failed or exited (it never is otherwise, for
    // a child that does not call Ready()).
    int status_fd() const { return status_fd_; }
    // RequestStop, wait up to `seconds` for the exit, kill if needed, reap.
    // Throws if the child failed.
    void Finish(double seconds);

private:
    void Reap(double seconds);
    std::string ReadStatus();

    pid_t pid_ = -1;
    int status_fd_ = -1, stop_fd_ = -1;
    bool reaped_ = false;
    int wait_status_ = 0;
};

// --pin: this process on the first CPU it may use, children on the second.
void EnablePinning();

}  // namespace opennd::bench
