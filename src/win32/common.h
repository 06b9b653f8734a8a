// Shared internals of the Win32 layer: the per-thread last error, the
// NTSTATUS -> Win32 error mapping and the deadline arithmetic every wait uses.
// Nothing here is exported; the public surface is include/opennd/win32.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

#include "opennd/win32.h"

namespace opennd::win32 {

// The calling thread's last error (GetLastError/WSAGetLastError share it).
// Internal code uses these rather than the exported names so an application
// that interposes SetLastError cannot redirect our bookkeeping.
DWORD GetError();
void SetError(DWORD error);

// Win32 error for a failed NTSTATUS/ND status (one with (int32_t)status < 0).
DWORD Win32ErrorFromStatus(uint32_t status);

// Waits on up to MAXIMUM_WAIT_OBJECTS handles; the body of the four exported
// WaitFor* calls (the alertable flag has no meaning here: there are no APCs).
DWORD WaitHandles(DWORD count, const HANDLE *handles, bool wait_all, DWORD milliseconds);

// An absolute point on the monotonic clock (CLOCK_MONOTONIC, which is what
// std::chrono::steady_clock reads on Linux), or "never" for INFINITE.
class Deadline {
public:
    using Clock = std::chrono::steady_clock;

    explicit Deadline(DWORD milliseconds)
        : infinite_(milliseconds == INFINITE),
          at_(infinite_ ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(milliseconds)) {}

    bool infinite() const { return infinite_; }
    Clock::time_point at() const { return at_; }

    // Time left as a relative timespec for ppoll; false once the deadline has
    // passed. Not to be called for an infinite deadline.
    bool Remaining(timespec *ts) const {
        auto left = at_ - Clock::now();
        if (left <= Clock::duration::zero()) return false;
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        ts->tv_sec = static_cast<time_t>(ns / 1000000000);
        ts->tv_nsec = static_cast<long>(ns % 1000000000);
        return true;
    }

private:
    bool infinite_;
    Clock::time_point at_;
};

}  // namespace opennd::win32
