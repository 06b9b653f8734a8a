#include "endpoint.h"

#include <time.h>

#include <stdexcept>

namespace ndperf {
namespace kit = opennd::kit;

uint64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string StatusName(HRESULT hr) {
    char buf[32];
    std::string s = OpenNdStatusText(hr, buf, sizeof buf);
    const char *m = OpenNdStatusMeaning(hr);
    if (m && *m) s += std::string(" (") + m + ")";
    return s;
}

Region::~Region() {
    if (mr) {
        OVERLAPPED ov{};
        if (mr->Deregister(&ov) == ND_PENDING) mr->GetOverlappedResult(&ov, TRUE);
        mr->Release();
    }
}

Endpoint::~Endpoint() {
    if (connector_) connector_->Release();
    if (listener_) listener_->Release();
    if (qp_) qp_->Release();
    if (cq_) cq_->Release();
    if (adapter_) adapter_->Release();
    if (file_) CloseHandle(file_);
    if (port_) CloseHandle(port_);
}

void Endpoint::Check(HRESULT hr, const char *what) {
    if (FAILED(hr)) throw std::runtime_error(std::string(what) + " failed: " + StatusName(hr));
}

HRESULT Endpoint::Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr) {
    if (hr != ND_PENDING) return hr;
    uint64_t deadline = NowNs() + 30'000'000'000ull;
    while ((hr = obj->GetOverlappedResult(ov, FALSE)) == ND_PENDING)
        if (NowNs() > deadline) return ND_IO_TIMEOUT;
    return hr;
}

void Endpoint::Open(const kit::IpAddress &local, uint32_t depth) {
    Check(NdOpenAdapter(IID_IND2Adapter, local.sa(), local.length(), reinterpret_cast<void **>(&adapter_)),
          "NdOpenAdapter");
    info_.InfoVersion = ND_VERSION_2;
    ULONG cb = sizeof info_;
    Check(adapter_->Query(&info_, &cb), "IND2Adapter::Query");
    Check(adapter_->CreateOverlappedFile(&file_), "CreateOverlappedFile");
    port_ = CreateIoCompletionPort(file_, nullptr, 0, 0);
    if (!port_) throw std::runtime_error("CreateIoCompletionPort failed");
    Check(adapter_->CreateCompletionQueue(IID_IND2CompletionQueue, file_, depth * 2 + 8, 0, 0,
                                          reinterpret_cast<void **>(&cq_)),
          "CreateCompletionQueue");
    Check(adapter_->CreateQueuePair(IID_IND2QueuePair, cq_, cq_, nullptr, depth + 4, depth + 4, 1, 1, 0,
                                    reinterpret_cast<void **>(&qp_)),
          "CreateQueuePair");
    Check(adapter_->CreateConnector(IID_IND2Connector, file_, reinterpret_cast<void **>(&connector_)),
          "CreateConnector");
}

uint16_t Endpoint::Listen(const kit::IpAddress &local, uint16_t port) {
    Check(adapter_->CreateListener(IID_IND2Listener, file_, reinterpret_cast<void **>(&listener_)), "CreateListener");
    kit::IpAddress a = local;
    kit::SetPort(a.sa(), port);
    Check(listener_->Bind(a.sa(), a.length()), "IND2Listener::Bind");
    Check(listener_->Listen(0), "Listen");
    kit::IpAddress bound;
    ULONG len = sizeof bound.storage;
    Check(listener_->GetLocalAddress(bound.sa(), &len), "IND2Listener::GetLocalAddress");
    return kit::Port(bound.sa());
}

void Endpoint::Accept(const void *pd, ULONG pd_len) {
    OVERLAPPED ov{};
    HRESULT hr = listener_->GetConnectionRequest(connector_, &ov);
    if (hr == ND_PENDING) hr = listener_->GetOverlappedResult(&ov, TRUE);  // the server waits for a client
    Check(hr, "GetConnectionRequest");
    Check(Wait(connector_, &ov, connector_->Accept(qp_, 8, 8, pd, pd_len, &ov)), "Accept");
}

void Endpoint::Connect(const kit::IpAddress &dest, const void *pd, ULONG pd_len) {
    OVERLAPPED ov{};
    Check(Wait(connector_, &ov, connector_->Connect(qp_, dest.sa(), dest.length(), 8, 8, pd, pd_len, &ov)),
          "Connect");
    Check(Wait(connector_, &ov, connector_->CompleteConnect(&ov)), "CompleteConnect");
}

void Endpoint::Register(Region &r, size_t size) {
    r.bytes.assign(size ? size : 1, 0);
    Check(adapter_->CreateMemoryRegion(IID_IND2MemoryRegion, file_, reinterpret_cast<void **>(&r.mr)),
          "CreateMemoryRegion");
    OVERLAPPED ov{};
    Check(Wait(r.mr, &ov,
               r.mr->Register(r.data(), r.bytes.size(),
                              ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ |
                                  ND_MR_FLAG_ALLOW_REMOTE_WRITE,
                              &ov)),
          "Register");
}

void Endpoint::Disconnect() {
    OVERLAPPED ov{};
    Wait(connector_, &ov, connector_->Disconnect(&ov));
}

ND2_RESULT Endpoint::Next(bool blocking, uint64_t timeout_ms) {
    ND2_RESULT r;
    uint64_t deadline = 0;
    for (uint64_t spins = 0;; ++spins) {
        if (cq_->GetResults(&r, 1) == 1) return r;
        if (blocking) {
            // Arm, look once more (no lost wake-up), then sleep on the port.
            OVERLAPPED ov{};
            HRESULT hr = cq_->Notify(ND_CQ_NOTIFY_ANY, &ov);
            if (cq_->GetResults(&r, 1) == 1) {
                if (hr == ND_PENDING) {
                    cq_->CancelOverlappedRequests();
                    DWORD n;
                    ULONG_PTR key;
                    OVERLAPPED *got;
                    while (GetQueuedCompletionStatus(port_, &n, &key, &got, 0) || got) {
                    }
                }
                return r;
            }
            if (hr == ND_PENDING) {
                DWORD n;
                ULONG_PTR key;
                OVERLAPPED *got = nullptr;
                GetQueuedCompletionStatus(port_, &n, &key, &got, static_cast<DWORD>(timeout_ms));
                if (!got) throw std::runtime_error("no completion within the timeout");
                cq_->GetOverlappedResult(got, FALSE);
            }
            continue;
        }
        if ((spins & 4095) == 0) {
            uint64_t now = NowNs();
            if (!deadline) deadline = now + timeout_ms * 1000000ull;
            if (now > deadline) throw std::runtime_error("no completion within the timeout");
        }
    }
}

ND2_RESULT Endpoint::NextOf(ND2_REQUEST_TYPE type, bool blocking) {
    for (auto it = stash_.begin(); it != stash_.end(); ++it)
        if (it->RequestType == type) {
            ND2_RESULT r = *it;
            stash_.erase(it);
            return r;
        }
    for (;;) {
        ND2_RESULT r = Next(blocking);
        if (FAILED(r.Status))
            throw std::runtime_error("completion failed: " + StatusName(r.Status) + " (request type " +
                                     std::to_string(r.RequestType) + ")");
        if (r.RequestType == type) return r;
        stash_.push_back(r);  // another kind: kept for whoever waits for it
    }
}

}  // namespace ndperf
