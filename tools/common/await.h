// Bounded waits for the overlapped ND calls of setup and teardown
// (Register, Connect, Accept, GetConnectionRequest, Disconnect...).
//
// Await never returns while the provider may still complete into the
// caller's OVERLAPPED (usually on the stack): a request that outlives its
// deadline is cancelled and its completion collected before Await returns.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "ndspi.h"

namespace opennd::client {

uint64_t NowMs();  // CLOCK_MONOTONIC

class Deadline {
public:
    static Deadline After(uint64_t ms) { return Deadline(NowMs() + ms); }
    bool Expired() const { return NowMs() >= end_; }
    uint64_t RemainingMs() const;
    uint64_t end_ms() const { return end_; }

private:
    explicit Deadline(uint64_t end) : end_(end) {}
    uint64_t end_;
};

// How long a cancelled request is given to report its completion. The SPI
// says a cancel completes every pending request at once; only a broken
// provider needs more than a moment.
constexpr uint64_t kCancelGraceMs = 5000;

// An OVERLAPPED with its own manual-reset event, so a wait sleeps on the
// event instead of polling. The event goes in with bit 0 set: a completion
// port the object's file is bound to gets no packet for it (the Win32
// convention), so a tool waiting on that port for its CQ never sees ours.
class Overlapped : public OVERLAPPED {
public:
    Overlapped();
    ~Overlapped();
    Overlapped(const Overlapped &) = delete;
    Overlapped &operator=(const Overlapped &) = delete;
    HANDLE event() const { return event_; }

private:
    HANDLE event_ = nullptr;
};

// The final status of `call`, which returned `hr` for the request `ov` of
// `obj`: hr itself unless ND_PENDING, else what GetOverlappedResult says
// once the request finishes. Sleeps on ov's event if it has one (bit 0 of
// hEvent ignored), else polls with a backoff. Past the deadline it
// cancels the object's requests (all of them: the SPI has no per-request
// cancel) and waits for this one's completion; a request that finished
// anyway keeps its own status, one the cancel ended is Status::TimedOut.
Status Await(IND2Overlapped *obj, OVERLAPPED &ov, HRESULT hr, Deadline deadline, const char *call);

}  // namespace opennd::client
