#include "opennd/log.h"
#include "opennd/params.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace opennd {
namespace {

int ConfiguredLevel() {
    static const int level = [] {
        return static_cast<int>(ParamLong("OPENND_LOG", static_cast<long>(LogLevel::Warn)));
    }();
    return level;
}

const char *LevelName(LogLevel l) {
    switch (l) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warning";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    }
    return "";
}

}  // namespace

bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= ConfiguredLevel(); }

void Log(LogLevel level, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    std::fprintf(stderr, "opennd: %s: %s\n", LevelName(level), line);
}

}  // namespace opennd
