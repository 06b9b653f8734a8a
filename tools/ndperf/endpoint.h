// ndperf's ND endpoint: adapter, CQ bound to a completion port (for the
// blocking mode), QP, connector, registered buffers, and bounded waits.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "ndsupport.h"
#include "opennd/kit/address.h"

namespace ndperf {

struct Region {
    std::vector<char> bytes;
    IND2MemoryRegion *mr = nullptr;
    ~Region();
    char *data() { return bytes.data(); }
    UINT32 local_token() const { return mr->GetLocalToken(); }
    UINT32 remote_token() const { return mr->GetRemoteToken(); }
};

class Endpoint {
public:
    ~Endpoint();
    // Throws std::runtime_error with the ND status name on failure.
    void Open(const opennd::kit::IpAddress &local, uint32_t depth);
    uint16_t Listen(const opennd::kit::IpAddress &local, uint16_t port);
    void Accept(const void *pd, ULONG pd_len);
    void Connect(const opennd::kit::IpAddress &dest, const void *pd, ULONG pd_len);
    void Register(Region &r, size_t size);
    void Disconnect();

    // One completion; throws after `timeout_ms` without one.
    ND2_RESULT Next(bool blocking, uint64_t timeout_ms = 10000);
    // Completions until one of `type` arrives (others must be successes).
    ND2_RESULT NextOf(ND2_REQUEST_TYPE type, bool blocking);

    IND2QueuePair *qp() { return qp_; }
    const ND2_ADAPTER_INFO &info() const { return info_; }

private:
    void Check(HRESULT hr, const char *what);
    HRESULT Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr);

    IND2Adapter *adapter_ = nullptr;
    HANDLE file_ = nullptr, port_ = nullptr;
    IND2CompletionQueue *cq_ = nullptr;
    IND2QueuePair *qp_ = nullptr;
    IND2Connector *connector_ = nullptr;
    IND2Listener *listener_ = nullptr;
    ND2_ADAPTER_INFO info_{};
    std::deque<ND2_RESULT> stash_;
};

uint64_t NowNs();
std::string StatusName(HRESULT hr);

}  // namespace ndperf
