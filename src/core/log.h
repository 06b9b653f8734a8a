// Internal logging for libopennd. Every decision that skips or refuses
// something (a provider that fails to load, a bad catalog file) is logged
// with its reason. OPENND_LOG selects the level: 0 silent, 1 errors,
// 2 warnings (default), 3 info, 4 debug. Messages go to stderr, one line each,
// prefixed "opennd: ".
#pragma once

#include <cstdarg>

namespace opennd {

enum class LogLevel : int { Error = 1, Warn = 2, Info = 3, Debug = 4 };

bool LogEnabled(LogLevel level);
void Log(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace opennd

#define OPENND_LOG(level, ...)                                                   \
    do {                                                                         \
        if (::opennd::LogEnabled(::opennd::LogLevel::level))                     \
            ::opennd::Log(::opennd::LogLevel::level, __VA_ARGS__);               \
    } while (0)
