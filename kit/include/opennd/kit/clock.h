// The kit's two clocks: NowMs for timeouts (coarse: a few milliseconds of
// resolution, and cheap), NowNs for short waits and poll stamps.
#pragma once

#include <time.h>

#include <cstdint>

namespace opennd::kit {

inline uint64_t NowMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

inline uint64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace opennd::kit
