// Loopback provider child objects: memory region, loopback queue pair,
// connector and listener. Each keeps its adapter alive (ComPtr).
#include "objects.h"

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>

#include "loopback.h"
#include "opennd/kit/com.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/connector.h"
#include "opennd/kit/listener.h"
#include "opennd/kit/memory_region.h"
#include "opennd/kit/overlapped.h"
#include "opennd/kit/post_checks.h"
#include "opennd/kit/registry.h"

namespace loopback {
namespace kit = opennd::kit;

namespace {

// The kit's region; its tokens are random numbers.
class MemoryRegion : public kit::MemoryRegion {
public:
    MemoryRegion(IND2Adapter *adapter, HANDLE file) : kit::MemoryRegion(file, SIZE_T(1) << 40), adapter_(adapter, true) {}

    UINT32 STDMETHODCALLTYPE GetLocalToken() override { return local_.load(); }
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return remote_.load(); }

private:
    HRESULT DoRegister(const kit::Registration &) override {
        local_ = RandomToken();
        remote_ = RandomToken();
        return ND_SUCCESS;
    }
    void DoDeregister() override {}
    bool CompletesInline(const kit::Registration &r) const override { return (r.flags & kLoopbackInline) != 0; }

    kit::ComPtr<IND2Adapter> adapter_;
    std::atomic<uint32_t> local_{0}, remote_{0};
};

// A queue pair whose Sends land in its own posted Receives.
class QueuePair : public kit::Unknown<IND2QueuePair> {
public:
    // The initiator depth is not needed: Sends complete at once, none waits.
    QueuePair(IND2Adapter *adapter, const kit::QueuePairArgs &a)
        : adapter_(adapter, true), rcq_(kit::CompletionQueue::FromUnknown(a.receive_cq), true),
          icq_(kit::CompletionQueue::FromUnknown(a.initiator_cq), true), context_(a.context),
          rdepth_(a.receive_depth), limits_{a.initiator_sge, a.receive_sge, a.inline_size, kMaxSge, kMaxTransferLength} {}

    HRESULT STDMETHODCALLTYPE Flush() override {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Recv &r : receives_) Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_CANCELED, 0, false);
        receives_.clear();
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE Send(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags) override {
        uint64_t len = 0;
        HRESULT hr = kit::CheckSend(limits_, sge, nsge, flags, true, &len);
        if (FAILED(hr)) return hr;
        std::lock_guard<std::mutex> lock(mu_);
        if (receives_.empty()) {
            Complete(icq_.get(), ctx, Nd2RequestTypeSend, ND_IO_TIMEOUT, 0, false);
            return ND_SUCCESS;
        }
        Recv r = receives_.front();
        receives_.pop_front();
        const uint64_t room = kit::SgeBytes(r.sge.data(), static_cast<ULONG>(r.sge.size()));
        if (len > room) {
            Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_BUFFER_OVERFLOW, 0, false);
            Complete(icq_.get(), ctx, Nd2RequestTypeSend, ND_REMOTE_ERROR, 0, false);
            return ND_SUCCESS;
        }
        size_t di = 0, doff = 0;
        for (ULONG i = 0; i < nsge; ++i) {
            const char *src = static_cast<const char *>(sge[i].Buffer);
            size_t left = sge[i].BufferLength;
            while (left) {
                size_t n = std::min(left, r.sge[di].BufferLength - doff);
                std::memcpy(static_cast<char *>(r.sge[di].Buffer) + doff, src, n);
                src += n, left -= n, doff += n;
                if (doff == r.sge[di].BufferLength) ++di, doff = 0;
            }
        }
        Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_SUCCESS, static_cast<ULONG>(len),
                 (flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0);
        if (!(flags & ND_OP_FLAG_SILENT_SUCCESS)) Complete(icq_.get(), ctx, Nd2RequestTypeSend, ND_SUCCESS, 0, false);
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) override {
        HRESULT hr = kit::CheckReceive(limits_.receive_sge, limits_.max_transfer, sge, nsge);
        if (FAILED(hr)) return hr;
        std::lock_guard<std::mutex> lock(mu_);
        if (receives_.size() >= rdepth_) return ND_NO_MORE_ENTRIES;
        receives_.push_back({ctx, std::vector<ND2_SGE>(sge, sge + nsge)});
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE Bind(VOID *, IUnknown *, IUnknown *, const VOID *, SIZE_T, ULONG) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE Invalidate(VOID *, IUnknown *, ULONG) override { return ND_NOT_SUPPORTED; }
    HRESULT STDMETHODCALLTYPE Read(VOID *, const ND2_SGE[], ULONG, UINT64, UINT32, ULONG) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE Write(VOID *, const ND2_SGE[], ULONG, UINT64, UINT32, ULONG) override {
        return ND_NOT_SUPPORTED;
    }

private:
    struct Recv {
        void *context;
        std::vector<ND2_SGE> sge;
    };
    void Complete(kit::CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type, HRESULT status, ULONG bytes,
                  bool solicited) {
        ND2_RESULT r{status, bytes, context_, ctx, type};
        cq->Push(r, solicited);
    }
    void OnFinalRelease() override { Flush(); }

    kit::ComPtr<IND2Adapter> adapter_;
    kit::ComPtr<kit::CompletionQueue> rcq_, icq_;
    void *context_;
    ULONG rdepth_;
    const kit::PostLimits limits_;
    std::mutex mu_;
    std::deque<Recv> receives_;
};

// A connection request (none ever arrives).
struct Request {
    uint64_t peer = 0;
};

// The kit's connector with no transport: no connection is ever made, so
// every call answers as the SPI says for a connector that never connects.
class Connector : public kit::Connector {
public:
    Connector(IND2Adapter *adapter, HANDLE file, const ND2_ADAPTER_INFO &info)
        : kit::Connector(file, info), adapter_(adapter, true) {
        ConnectorRegistry::Add(this);
    }
    ~Connector() override { ConnectorRegistry::Remove(this); }
    static Connector *Find(IUnknown *u) { return ConnectorRegistry::Find(u, IID_IND2Connector); }
    void Adopt(const Request &) {}

private:
    using ConnectorRegistry = kit::Registry<Connector, IND2Connector>;
    bool OwnsQueuePair(IUnknown *) override { return true; }
    HRESULT BindLocked(const opennd::net::IpAddress &) override { return ND_NOT_SUPPORTED; }
    HRESULT ConnectLocked(IUnknown *, const opennd::net::IpAddress &, ULONG, ULONG, const void *, ULONG,
                          OVERLAPPED *) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT CompleteConnectLocked() override { return ND_CONNECTION_INVALID; }
    HRESULT AcceptLocked(IUnknown *, const void *, ULONG, OVERLAPPED *) override { return ND_CONNECTION_INVALID; }
    HRESULT RejectLocked(const void *, ULONG) override { return ND_CONNECTION_INVALID; }
    void DisconnectLocked() override {}
    void AbandonAcceptLocked() override {}
    void ConnectOverLocked(HRESULT *) override {}
    void AcceptOverLocked() override {}
    void ConnectionOverLocked() override {}

    kit::ComPtr<IND2Adapter> adapter_;
};

// The kit's listener on the adapter's addresses; no connection ever
// arrives, so its GetConnectionRequests stay pending until cancelled or the
// listener goes.
class Listener : public kit::Listener<Request, Connector> {
public:
    Listener(IND2Adapter *adapter, HANDLE file, std::vector<opennd::net::IpAddress> addrs)
        : kit::Listener<Request, Connector>(file), adapter_(adapter, true), addresses_(std::move(addrs)) {}

private:
    HRESULT BindLocked(const opennd::net::IpAddress &want) override {
        bool ours = opennd::net::IsWildcard(want.sa());
        for (const auto &a : addresses_) ours = ours || opennd::net::SameIp(a.sa(), want.sa());
        if (!ours) return ND_INVALID_ADDRESS;
        local_ = want;
        if (opennd::net::Port(local_.sa()) == 0) opennd::net::SetPort(local_.sa(), 49152);
        return ND_SUCCESS;
    }
    HRESULT ListenLocked() override { return ND_SUCCESS; }
    Connector *OwnConnector(IUnknown *u) override { return Connector::Find(u); }
    size_t HardQueueBound() const override { return 64; }
    void OnFinalRelease() override {
        std::lock_guard<std::mutex> guard(lock());
        DropRequestsLocked();
    }

    kit::ComPtr<IND2Adapter> adapter_;
    std::vector<opennd::net::IpAddress> addresses_;
};

}  // namespace

HRESULT MakeMemoryRegion(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp) {
    return kit::HandIfValid(new MemoryRegion(adapter, file), iid, pp, ND_INVALID_HANDLE);
}

HRESULT MakeQueuePair(IND2Adapter *adapter, const kit::QueuePairArgs &args, REFIID iid, void **pp) {
    return kit::Hand(new QueuePair(adapter, args), iid, pp);
}

HRESULT MakeConnector(IND2Adapter *adapter, HANDLE file, const ND2_ADAPTER_INFO &info, REFIID iid, void **pp) {
    return kit::HandIfValid(new Connector(adapter, file, info), iid, pp, ND_INVALID_HANDLE);
}

HRESULT MakeListener(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp, std::vector<opennd::net::IpAddress> addrs) {
    return kit::HandIfValid(new Listener(adapter, file, std::move(addrs)), iid, pp, ND_INVALID_HANDLE);
}

}  // namespace loopback
