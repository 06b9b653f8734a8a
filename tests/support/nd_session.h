// Test and tool support: one ND endpoint (adapter, overlapped file, CQ, QP,
// connector) with bounded waits, so a two-process test reads like the ND
// sample programs without hanging when something goes wrong. Setup and
// teardown are opennd::client's; this adds the tests' vocabulary (an
// error string for gtest, Next polling).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/connection.h"
#include "common/node.h"
#include "common/region.h"
#include "ndsupport.h"
#include "opennd/ip_address.h"

namespace nd_session {

using opennd::client::NowMs;

inline std::string Status(HRESULT hr) { return opennd::client::StatusText(hr); }

// What an endpoint shares with those opened on it (OpenOn). A base class
// so that it outlives the connection's objects.
struct Shared {
    std::shared_ptr<opennd::client::Node> node;
    std::shared_ptr<opennd::client::Listener> listening;
};

struct Endpoint : Shared, opennd::client::Connection {
    IND2Adapter *adapter = nullptr;    // node's
    HANDLE file = nullptr;             // node's
    IND2Listener *listener = nullptr;  // listening's
    std::string error;

    bool Fail(const opennd::client::Status &s) {
        error = s.message();
        return false;
    }
    bool Fail(const std::string &what, HRESULT hr) { return Fail(opennd::client::Status(hr, what)); }

    // Opens the adapter serving `local` and creates a CQ and a QP.
    bool Open(const opennd::net::IpAddress &local, ULONG depth = 64, ULONG sges = 4, ULONG inline_size = 0) {
        auto n = std::make_shared<opennd::client::Node>();
        if (auto s = n->Open(local); !s) return Fail(s);
        node = std::move(n);
        adapter = node->adapter;
        file = node->file;
        return CreateObjects(depth, sges, inline_size);
    }
    // Another connection on the same adapter (and overlapped file) as
    // `parent`, with its own CQ and QP: a listener hands requests only to
    // connectors of its own adapter.
    bool OpenOn(const Endpoint &parent, ULONG depth = 64, ULONG sges = 4, ULONG inline_size = 0) {
        node = parent.node;
        adapter = parent.adapter;
        file = parent.file;
        listening = parent.listening;
        listener = parent.listener;
        return CreateObjects(depth, sges, inline_size);
    }
    bool CreateObjects(ULONG depth, ULONG sges, ULONG inline_size) {
        opennd::client::QueueShape shape{depth * 2, depth, depth, sges, sges, inline_size, this};
        if (auto s = opennd::client::Connection::Open(adapter, file, shape); !s) return Fail(s);
        return true;
    }

    // Waits for an overlapped request of `obj` to finish (bounded); past
    // the bound the request is cancelled and ND_IO_TIMEOUT returned.
    HRESULT Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr, uint64_t timeout_ms = 10000) {
        return opennd::client::Await(obj, *ov, hr, opennd::client::Deadline::After(timeout_ms), "").hr();
    }

    // Passive side: listen on `local` (port 0 picks one) and return the port.
    bool Listen(const opennd::net::IpAddress &local, uint16_t *port) {
        auto l = std::make_shared<opennd::client::Listener>();
        if (auto s = l->Listen(adapter, file, local, 0); !s) return Fail(s);
        *port = l->port();
        listener = l->get();
        listening = std::move(l);
        return true;
    }
    bool Accept(const void *pd = nullptr, ULONG pd_len = 0, ULONG inbound = 8, ULONG outbound = 8) {
        auto d = opennd::client::Deadline::After(10000);
        if (auto s = listening->GetConnectionRequest(connector, d); !s) return Fail(s);
        if (auto s = opennd::client::Connection::Accept({pd, pd_len, inbound, outbound}, d); !s) return Fail(s);
        return true;
    }
    bool Connect(const opennd::net::IpAddress &dest, const void *pd = nullptr, ULONG pd_len = 0, ULONG inbound = 8,
                 ULONG outbound = 8) {
        auto s = opennd::client::Connection::Connect(dest, {pd, pd_len, inbound, outbound},
                                                     opennd::client::Deadline::After(10000));
        return s ? true : Fail(s);
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
    opennd::client::Region mr;
    explicit Buffer(size_t n) : bytes(n) {}
    bool Register(Endpoint &ep, ULONG flags = opennd::client::kAllAccess) {
        auto s = mr.Register(ep.adapter, ep.file, bytes.data(), bytes.size(), flags,
                             opennd::client::Deadline::After(10000));
        return s ? true : ep.Fail(s);
    }
    ND2_SGE Sge(size_t offset = 0, size_t len = SIZE_MAX) {
        if (len == SIZE_MAX) len = bytes.size() - offset;
        return ND2_SGE{bytes.data() + offset, static_cast<ULONG>(len), mr->GetLocalToken()};
    }
};

}  // namespace nd_session
