// Helpers shared by the Win32 layer tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "opennd/overlapped_file.h"
#include "opennd/win32.h"

namespace win32_test {

using Clock = std::chrono::steady_clock;

inline int64_t MsSince(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Closes a handle at scope exit unless released.
class Handle {
public:
    explicit Handle(HANDLE h = nullptr) : h_(h) {}
    ~Handle() { reset(); }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    Handle(Handle &&other) noexcept : h_(other.release()) {}
    HANDLE get() const { return h_; }
    operator HANDLE() const { return h_; }
    HANDLE release() {
        HANDLE h = h_;
        h_ = nullptr;
        return h;
    }
    void reset(HANDLE h = nullptr) {
        if (h_) CloseHandle(h_);
        h_ = h;
    }

private:
    HANDLE h_;
};

inline HANDLE Tag(HANDLE h) { return reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(h) | 1); }

inline OVERLAPPED PendingOverlapped(HANDLE event = nullptr) {
    OVERLAPPED ov{};
    ov.Internal = STATUS_PENDING;
    ov.hEvent = event;
    return ov;
}

inline pid_t ThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Waits (bounded) until the kernel reports thread tid as sleeping ('S'),
// i.e. blocked in a wait. Used to close a port under blocked waiters without
// timing assumptions. True if it was seen sleeping.
inline bool WaitUntilThreadSleeps(pid_t tid, int timeout_ms = 10000) {
    auto start = Clock::now();
    std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
    while (MsSince(start) < timeout_ms) {
        std::ifstream f(path);
        std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        auto paren = stat.rfind(')');
        if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S') return true;
        Sleep(0);  // yield; this is a poll of observable state, not a timing guess
    }
    return false;
}

}  // namespace win32_test
