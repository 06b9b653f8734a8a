#include "common/await.h"

#include <sched.h>
#include <time.h>

#include <cstdint>

#include "ndsupport.h"

namespace opennd::client {
namespace {

HANDLE EventOf(const OVERLAPPED &ov) {
    return reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(ov.hEvent) & ~uintptr_t{1});
}

// Without an event: spin briefly (most setup calls finish within
// microseconds), then yield, then sleep in short steps so a peer process
// on the same core gets to run.
class Backoff {
public:
    void Pause() {
        if (++n_ < 64) return;
        if (n_ < 256) {
            sched_yield();
            return;
        }
        timespec ts{0, 200'000};
        nanosleep(&ts, nullptr);
    }

private:
    unsigned n_ = 0;
};

// Until the request is no longer pending or `d` passes; the last
// GetOverlappedResult.
HRESULT WaitUntil(IND2Overlapped *obj, OVERLAPPED &ov, Deadline d) {
    const HANDLE event = EventOf(ov);
    Backoff backoff;
    for (;;) {
        HRESULT hr = obj->GetOverlappedResult(&ov, FALSE);
        if (hr != ND_PENDING || d.Expired()) return hr;
        if (event) {
            // A multi-phase request (SPI §4, R029) starts its next phase
            // with the event reset, so a wake-up that finds it pending
            // sleeps again; a signal it missed costs a bounded wait.
            WaitForSingleObject(event, static_cast<DWORD>(d.RemainingMs()));
        } else {
            backoff.Pause();
        }
    }
}

}  // namespace

uint64_t NowMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

uint64_t Deadline::RemainingMs() const {
    uint64_t now = NowMs();
    return now >= end_ ? 0 : end_ - now;
}

Overlapped::Overlapped() : OVERLAPPED{} {
    event_ = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    if (event_) hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(event_) | 1);
}

Overlapped::~Overlapped() {
    if (event_) CloseHandle(event_);
}

Status Await(IND2Overlapped *obj, OVERLAPPED &ov, HRESULT hr, Deadline deadline, const char *call) {
    if (hr != ND_PENDING) return Status(hr, call);
    hr = WaitUntil(obj, ov, deadline);
    if (hr != ND_PENDING) return Status(hr, call);
    obj->CancelOverlappedRequests();
    hr = WaitUntil(obj, ov, Deadline::After(kCancelGraceMs));
    if (hr == ND_PENDING) return Status::TimedOut(call, true);
    if (hr == ND_CANCELED) return Status::TimedOut(call);
    return Status(hr, call);  // it finished on its own just as the deadline passed
}

}  // namespace opennd::client
