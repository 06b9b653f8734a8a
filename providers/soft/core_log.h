// Logging for the software provider, in the same form as libopennd's
// ("opennd: ..." on stderr), honouring OPENND_LOG (0 silent ... 4 debug).
#pragma once

#include <cstdio>

#include "opennd/params.h"

namespace soft {
inline int LogLevel() {
    static const int level = [] {
        return static_cast<int>(opennd::ParamLong("OPENND_LOG", 2));
    }();
    return level;
}
}  // namespace soft

#define OPENND_SOFT_LOG(...)                                         \
    do {                                                             \
        if (::soft::LogLevel() >= 2) {                               \
            std::fprintf(stderr, "opennd: ndsoft: " __VA_ARGS__);    \
            std::fputc('\n', stderr);                                \
        }                                                            \
    } while (0)

// Debug detail (OPENND_LOG=4): why a connection ended, and the like.
#define OPENND_SOFT_DEBUG(...)                                       \
    do {                                                             \
        if (::soft::LogLevel() >= 4) {                               \
            std::fprintf(stderr, "opennd: ndsoft: " __VA_ARGS__);    \
            std::fputc('\n', stderr);                                \
        }                                                            \
    } while (0)
