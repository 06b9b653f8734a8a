// Test and tool support: one ND endpoint (adapter, overlapped file, CQ, QP,
// connector) with bounded waits, so a two-process test reads like the ND
// sample programs without hanging when something goes wrong.
#pragma once

#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ndsupport.h"
#include "opennd/ip_address.h"

namespace nd_session {

inline uint64_t NowMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

inline std::string Status(HRESULT hr) {
    char buf[32];
    return OpenNdStatusText(hr, buf, sizeof buf);
}

struct Endpoint {
    IND2Adapter *adapter = nullptr;
    HANDLE file = nullptr;
    IND2CompletionQueue *cq = nullptr;
    IND2QueuePair *qp = nullptr;
    IND2Connector *connector = nullptr;
    IND2Listener *listener = nullptr;
    bool owns_file = true;
    std::string error;

    ~Endpoint() {
        if (connector) connector->Release();
        if (listener) listener->Release();
        if (qp) qp->Release();
        if (cq) cq->Release();
        if (adapter) adapter->Release();
        if (file && owns_file) CloseHandle(file);
    }
    bool Fail(const std::string &what, HRESULT hr) {
        error = what + ": " + Status(hr);
        return false;
    }

    // Opens the adapter serving `local` and creates a CQ and a QP.
    bool Open(const opennd::net::IpAddress &local, ULONG depth = 64, ULONG sges = 4, ULONG inline_size = 0) {
        HRESULT hr = NdOpenAdapter(IID_IND2Adapter, local.sa(), local.length(), reinterpret_cast<void **>(&adapter));
        if (FAILED(hr)) return Fail("NdOpenAdapter", hr);
        if (FAILED(hr = adapter->CreateOverlappedFile(&file))) return Fail("CreateOverlappedFile", hr);
        return CreateObjects(depth, sges, inline_size);
    }
    // Another connection on the same adapter (and overlapped file) as
    // `parent`, with its own CQ and QP: a listener hands requests only to
    // connectors of its own adapter.
    bool OpenOn(const Endpoint &parent, ULONG depth = 64, ULONG sges = 4, ULONG inline_size = 0) {
        adapter = parent.adapter;
        adapter->AddRef();
        file = parent.file;
        owns_file = false;
        listener = parent.listener;
        if (listener) listener->AddRef();
        return CreateObjects(depth, sges, inline_size);
    }
    bool CreateObjects(ULONG depth, ULONG sges, ULONG inline_size) {
        HRESULT hr = adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, depth * 2, 0, 0,
                                            reinterpret_cast<void **>(&cq));
        if (FAILED(hr)) return Fail("CreateCompletionQueue", hr);
        hr = adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, this, depth, depth, sges, sges, inline_size,
                                      reinterpret_cast<void **>(&qp));
        if (FAILED(hr)) return Fail("CreateQueuePair", hr);
        hr = adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&connector));
        if (FAILED(hr)) return Fail("CreateConnector", hr);
        return true;
    }

    // Waits for an overlapped request of `obj` to finish (bounded).
    HRESULT Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr, uint64_t timeout_ms = 10000) {
        if (hr != ND_PENDING) return hr;
        uint64_t deadline = NowMs() + timeout_ms;
        while ((hr = obj->GetOverlappedResult(ov, FALSE)) == ND_PENDING)
            if (NowMs() > deadline) return ND_IO_TIMEOUT;
        return hr;
    }

    // Passive side: listen on `local` (port 0 picks one) and return the port.
    bool Listen(const opennd::net::IpAddress &local, uint16_t *port) {
        HRESULT hr = adapter->CreateListener(IID_IND2Listener, file, reinterpret_cast<void **>(&listener));
        if (FAILED(hr)) return Fail("CreateListener", hr);
        if (FAILED(hr = listener->Bind(local.sa(), local.length()))) return Fail("Listener::Bind", hr);
        if (FAILED(hr = listener->Listen(0))) return Fail("Listen", hr);
        opennd::net::IpAddress bound;
        ULONG len = sizeof bound.storage;
        if (FAILED(hr = listener->GetLocalAddress(bound.sa(), &len))) return Fail("GetLocalAddress", hr);
        *port = opennd::net::Port(bound.sa());
        return true;
    }
    bool Accept(const void *pd = nullptr, ULONG pd_len = 0, ULONG inbound = 8, ULONG outbound = 8) {
        OVERLAPPED ov{};
        HRESULT hr = Wait(listener, &ov, listener->GetConnectionRequest(connector, &ov));
        if (FAILED(hr)) return Fail("GetConnectionRequest", hr);
        hr = Wait(connector, &ov, connector->Accept(qp, inbound, outbound, pd, pd_len, &ov));
        if (FAILED(hr)) return Fail("Accept", hr);
        return true;
    }
    bool Connect(const opennd::net::IpAddress &dest, const void *pd = nullptr, ULONG pd_len = 0, ULONG inbound = 8,
                 ULONG outbound = 8) {
        OVERLAPPED ov{};
        HRESULT hr = Wait(connector, &ov,
                          connector->Connect(qp, dest.sa(), dest.length(), inbound, outbound, pd, pd_len, &ov));
        if (FAILED(hr)) return Fail("Connect", hr);
        hr = Wait(connector, &ov, connector->CompleteConnect(&ov));
        if (FAILED(hr)) return Fail("CompleteConnect", hr);
        return true;
    }

    // Polls the CQ for one completion (bounded). Status ND_IO_TIMEOUT and
    // RequestContext nullptr if none came.
    ND2_RESULT Next(uint64_t timeout_ms = 10000) {
        ND2_RESULT r{};
        uint64_t deadline = NowMs() + timeout_ms;
        uint64_t spins = 0;
        while (cq->GetResults(&r, 1) == 0) {
            if ((++spins & 1023) == 0 && NowMs() > deadline) {
                r = ND2_RESULT{ND_IO_TIMEOUT, 0, nullptr, nullptr, Nd2RequestTypeReceive};
                return r;
            }
        }
        return r;
    }
};

// A registered buffer.
struct Buffer {
    std::vector<char> bytes;
    IND2MemoryRegion *mr = nullptr;
    explicit Buffer(size_t n) : bytes(n) {}
    ~Buffer() {
        if (mr) mr->Release();
    }
    bool Register(Endpoint &ep, ULONG flags = ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ |
                                              ND_MR_FLAG_ALLOW_REMOTE_WRITE) {
        HRESULT hr = ep.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, ep.file, reinterpret_cast<void **>(&mr));
        if (FAILED(hr)) return ep.Fail("CreateMemoryRegion", hr);
        OVERLAPPED ov{};
        hr = ep.Wait(mr, &ov, mr->Register(bytes.data(), bytes.size(), flags, &ov));
        if (FAILED(hr)) return ep.Fail("Register", hr);
        return true;
    }
    ND2_SGE Sge(size_t offset = 0, size_t len = SIZE_MAX) {
        if (len == SIZE_MAX) len = bytes.size() - offset;
        return ND2_SGE{bytes.data() + offset, static_cast<ULONG>(len), mr->GetLocalToken()};
    }
};

}  // namespace nd_session
