#include "common/status.h"

#include "ndsupport.h"

namespace opennd::client {

Status Status::TimedOut(std::string call, bool abandoned) {
    Status s(ND_IO_TIMEOUT, std::move(call));
    s.timed_out_ = true;
    s.abandoned_ = abandoned;
    return s;
}

std::string StatusText(HRESULT hr) {
    char buf[32];
    return OpenNdStatusText(hr, buf, sizeof buf);
}

std::string StatusDescription(HRESULT hr) {
    std::string s = StatusText(hr);
    const char *m = OpenNdStatusMeaning(hr);
    if (m && *m) s += std::string(" (") + m + ")";
    return s;
}

std::string Status::message() const {
    std::string what = timed_out_ ? (abandoned_ ? "timed out, and its cancel never completed" : "timed out")
                                  : StatusText(hr_);
    return call_.empty() ? what : call_ + ": " + what;
}

}  // namespace opennd::client
