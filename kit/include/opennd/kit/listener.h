// IND2Listener for every provider (SPI §11, R144-R150): Bind and Listen in
// their order (bound once, listening once), GetLocalAddress only while
// listening (R148), GetConnectionRequest with a fresh connector of this
// adapter, each request handed to exactly one of them (R149) in arrival
// order, the queue of requests nobody asked for yet bounded by the backlog
// (0: no limit of the application's, R147) and always by a hard bound with
// a per-peer share (a host that floods requests cannot fill it alone), and
// cancellation (R150). A provider supplies the transport: BindLocked,
// ListenLocked, and QueueRequestLocked for each request that arrives.
//
// `Request` is the provider's connection request, with a `uint64_t peer`
// member naming who sent it (a uid, a hash of a remote address);
// `ConnectorImpl` its connector (a kit::Connector) with Adopt(Request).
// Setup path only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>

#include "ndspi.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/kit/connector.h"
#include "opennd/kit/overlapped.h"

namespace opennd::kit {

template <class Request, class ConnectorImpl>
class Listener : public Unknown<IND2Listener> {
public:
    explicit Listener(HANDLE overlapped_file) : requests_(overlapped_file) {}
    bool Valid() const { return requests_.Valid(); }

    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() final {
        std::lock_guard<std::mutex> guard(mu_);
        waiting_.clear();
        return requests_.CancelAll();
    }
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) final {
        return requests_.Result(ov, wait);
    }
    HRESULT STDMETHODCALLTYPE Bind(const sockaddr *address, ULONG size) final {
        IpAddress want;
        if (!FromSockaddr(address, size, &want)) return ND_INVALID_ADDRESS;
        std::lock_guard<std::mutex> guard(mu_);
        if (bound_) return kStatusAddressAlreadyAssociated;  // bound already (COMPAT)
        HRESULT hr = BindLocked(want);
        if (SUCCEEDED(hr)) bound_ = true;
        return hr;
    }
    HRESULT STDMETHODCALLTYPE Listen(ULONG backlog) final {
        std::lock_guard<std::mutex> guard(mu_);
        if (!bound_ || listening_) return ND_INVALID_DEVICE_STATE;  // listening already (COMPAT)
        HRESULT hr = ListenLocked();
        if (FAILED(hr)) return hr;
        backlog_ = backlog;  // 0: no limit (R147)
        listening_ = true;
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE GetLocalAddress(sockaddr *address, ULONG *size) final {
        if (!size) return ND_INVALID_PARAMETER_2;
        std::lock_guard<std::mutex> guard(mu_);
        if (!listening_) return ND_INVALID_DEVICE_STATE;  // R148
        return CopyOutAddress(local_, address, size);
    }
    HRESULT STDMETHODCALLTYPE GetConnectionRequest(IUnknown *connector_unknown, OVERLAPPED *ov) final {
        ConnectorImpl *connector = OwnConnector(connector_unknown);
        if (!connector) return ND_INVALID_PARAMETER_1;
        if (!ov) return ND_INVALID_PARAMETER_2;
        if (!connector->Fresh()) return ND_INVALID_DEVICE_STATE;
        std::lock_guard<std::mutex> guard(mu_);
        HRESULT hr = requests_.Begin(ov);
        if (hr != ND_PENDING) return hr;
        waiting_.push_back({ComPtr<ConnectorImpl>(connector, true), ov});
        MatchLocked();
        return ND_PENDING;
    }

protected:
    std::mutex &lock() { return mu_; }
    bool ListeningLocked() const { return listening_; }

    // ---- The transport (under lock()) ----
    // Take `want` (port 0: any) and set local_.
    virtual HRESULT BindLocked(const IpAddress &want) = 0;
    // Start taking connections on local_.
    virtual HRESULT ListenLocked() = 0;
    // `connector` as one of this adapter's, or nullptr (ND_INVALID_PARAMETER_1).
    virtual ConnectorImpl *OwnConnector(IUnknown *connector) = 0;
    // Requests held at the very most whatever the backlog (each holds
    // resources: a socket, a device's connection id).
    virtual size_t HardQueueBound() const = 0;

    // True if a request from `peer` cannot be held now: the backlog, the
    // hard bound or the peer's quarter of it is full. The transport then
    // refuses it as a full backlog would (the initiator may retry).
    bool QueueFullLocked(uint64_t peer) const {
        const size_t hard = HardQueueBound(), share = std::max<size_t>(1, hard / 4);
        if (queue_.size() >= (backlog_ != 0 ? std::min<size_t>(backlog_, hard) : hard)) return true;
        return static_cast<size_t>(std::count_if(queue_.begin(), queue_.end(),
                                                 [peer](const Request &r) { return r.peer == peer; })) >= share;
    }
    // A request arrived (checked with QueueFullLocked): it goes to the
    // oldest waiting GetConnectionRequest, or waits for one.
    void QueueRequestLocked(Request request) {
        queue_.push_back(std::move(request));
        MatchLocked();
    }
    // The listener is going: requests held are dropped (their initiators
    // see a refusal) and every GetConnectionRequest completes ND_CANCELED
    // (L10, R150).
    void DropRequestsLocked() {
        queue_.clear();
        waiting_.clear();
        requests_.CancelAll();
    }

    IpAddress local_;  // the address bound (BindLocked sets it)

private:
    struct Waiting {
        ComPtr<ConnectorImpl> connector;
        OVERLAPPED *ov;
    };
    // Each request completes exactly one waiting GetConnectionRequest (R149).
    void MatchLocked() {
        while (!queue_.empty() && !waiting_.empty()) {
            Waiting w = std::move(waiting_.front());
            waiting_.pop_front();
            if (!requests_.IsPending(w.ov) || !w.connector->Fresh()) continue;  // cancelled meanwhile
            w.connector->Adopt(std::move(queue_.front()));
            queue_.pop_front();
            w.connector.reset();  // before the application hears of it: its last Release returns 0
            requests_.Complete(w.ov, ND_SUCCESS);
        }
    }

    OverlappedRequests requests_;
    std::mutex mu_;
    bool bound_ = false, listening_ = false;
    ULONG backlog_ = 0;
    std::deque<Request> queue_;
    std::deque<Waiting> waiting_;
};

}  // namespace opennd::kit
