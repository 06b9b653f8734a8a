// OpenND's one logger: libopennd, the provider kit and the providers. Every
// decision that skips or refuses something (a provider that fails to load,
// a bad catalog file, a peer's connection ended) is logged with its reason.
// The OPENND_LOG variable selects the level: 0 silent, 1 errors, 2 warnings
// (default), 3 info, 4 debug. Messages go to stderr, one line each,
// prefixed "opennd: <level>: " (a provider starts its own with its name).
#pragma once

#include <cstdarg>

#include "opennd/win32.h"

namespace opennd {

enum class LogLevel : int { Error = 1, Warn = 2, Info = 3, Debug = 4 };

OPENND_API bool LogEnabled(LogLevel level);
OPENND_API void Log(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace opennd

#define OPENND_LOG(level, ...)                                                   \
    do {                                                                         \
        if (::opennd::LogEnabled(::opennd::LogLevel::level))                     \
            ::opennd::Log(::opennd::LogLevel::level, __VA_ARGS__);               \
    } while (0)
