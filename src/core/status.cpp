// Status names and meanings, generated from the one status table.
#include <cstdio>

#include "ndstatus.h"

namespace {

struct StatusInfo {
    HRESULT value;
    const char *name;
    const char *meaning;
};

#define OPENND_STATUS_ROW(name, value, meaning) {name, #name, meaning},
constexpr StatusInfo kStatuses[] = {OPENND_STATUS_LIST(OPENND_STATUS_ROW)};
#undef OPENND_STATUS_ROW

const StatusInfo *Find(HRESULT hr) {
    for (const auto &s : kStatuses)
        if (s.value == hr) return &s;
    return nullptr;
}

}  // namespace

extern "C" {

OPENND_API const char *OpenNdStatusName(HRESULT hr) {
    const StatusInfo *s = Find(hr);
    return s ? s->name : nullptr;
}

OPENND_API const char *OpenNdStatusMeaning(HRESULT hr) {
    const StatusInfo *s = Find(hr);
    return s ? s->meaning : "";
}

OPENND_API const char *OpenNdStatusText(HRESULT hr, char *buf, size_t len) {
    if (!buf || len == 0) return "";
    if (const StatusInfo *s = Find(hr))
        std::snprintf(buf, len, "%s", s->name);
    else if (hr == E_NOINTERFACE)
        std::snprintf(buf, len, "E_NOINTERFACE");
    else
        std::snprintf(buf, len, "0x%08X", static_cast<unsigned>(hr));
    return buf;
}

}  // extern "C"
