// opennd::client::Status: what one ND call of the setup or teardown path
// came to. Each user turns it into its own form (a gtest failure, a tool's
// message and exit code, a conformance report), so it carries the raw
// pieces: the call, the HRESULT, and whether our own deadline ended it.
#pragma once

#include <string>

#include "ndspi.h"

namespace opennd::client {

class Status {
public:
    Status() = default;
    Status(HRESULT hr, std::string call) : hr_(hr), call_(std::move(call)) {}
    // The request did not finish by the deadline and was cancelled; hr()
    // is ND_IO_TIMEOUT. `abandoned`: not even the cancel completed it
    // within its grace, so the provider may still write its OVERLAPPED
    // (a provider bug; the caller should not reuse or free it lightly).
    static Status TimedOut(std::string call, bool abandoned = false);

    bool ok() const { return SUCCEEDED(hr_) && hr_ != ND_PENDING && !timed_out_; }
    explicit operator bool() const { return ok(); }
    HRESULT hr() const { return hr_; }
    const std::string &call() const { return call_; }
    bool timed_out() const { return timed_out_; }
    bool abandoned() const { return abandoned_; }

    // "NdOpenAdapter: ND_INVALID_ADDRESS"; "GetConnectionRequest: timed out".
    std::string message() const;

private:
    HRESULT hr_ = ND_SUCCESS;
    std::string call_;
    bool timed_out_ = false;
    bool abandoned_ = false;
};

// The status's name ("ND_CANCELED", else its hex value).
std::string StatusText(HRESULT hr);
// The name and, where libopennd has one, its meaning for a user:
// "ND_CONNECTION_REFUSED (no listener, backlog full, or the peer rejected)".
std::string StatusDescription(HRESULT hr);

}  // namespace opennd::client
