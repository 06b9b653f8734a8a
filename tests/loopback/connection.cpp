// Loopback connections: connectors and listeners of one process, on the
// kit's state machine. The transport is a message handed from one
// connector to another (a request to a listener, a reply, ready, reject,
// disconnect). The kit runs the hooks under a connector's lock, so they only
// queue messages; OnUnlocked delivers them once the lock is released, and
// one connector never waits for another's lock while holding its own. The
// one nesting: a listener hands a request to a connector (or refuses one)
// under its own lock, so the order is listener, then connector.
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "loopback.h"
#include "objects.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/kit/connector.h"
#include "opennd/kit/listener.h"
#include "opennd/kit/registry.h"
#include "queue_pair.h"

namespace loopback {
namespace kit = opennd::kit;
namespace net = opennd::net;
namespace {

uint16_t NextPort() {
    static std::atomic<uint16_t> next{50000};
    return next.fetch_add(1);
}

// Bind for connectors and listeners: one of the adapter's addresses (or the
// wildcard), port 0 choosing one.
HRESULT BindTo(const std::vector<net::IpAddress> &ours, const net::IpAddress &want, net::IpAddress *local) {
    if (!kit::BindableAddress(ours, want)) return ND_INVALID_ADDRESS;
    *local = want;
    if (net::Port(local->sa()) == 0) net::SetPort(local->sa(), NextPort());
    return ND_SUCCESS;
}

class Connector;

// What one connector says to another.
struct Message {
    enum class Kind { Reply, Ready, Reject, Disconnect, Refused } kind;
    kit::HoldPtr<Connector> to, from;
    std::vector<uint8_t> data;  // private data
    ULONG inbound = 0, outbound = 0;  // Reply: the read limits the passive side granted
    kit::HoldPtr<QueuePair> qp;               // Reply: the passive side's queue pair
};

// A connection request, queued by a listener until a connector takes it.
// One dropped untaken (the listener is full or goes) refuses the initiator.
struct Request {
    uint64_t peer = 0;  // one process: every request is the same peer's
    net::IpAddress local, source;
    std::vector<uint8_t> data;
    ULONG inbound = 0, outbound = 0;
    kit::HoldPtr<Connector> from;
    kit::HoldPtr<QueuePair> qp;
    Request() = default;
    Request(Request &&) = default;
    Request &operator=(Request &&) = default;
    ~Request();
};

class Listener;
// Listening addresses of this process.
std::mutex g_listeners_mu;
std::vector<std::pair<net::IpAddress, Listener *>> *g_listeners;  // while non-empty

class Connector : public kit::Connector {
public:
    Connector(IND2Adapter *adapter, HANDLE file, const ND2_ADAPTER_INFO &info, std::vector<net::IpAddress> addrs)
        : kit::Connector(file, info), adapter_(adapter, true), addresses_(std::move(addrs)) {
        Registry::Add(this);
    }
    ~Connector() override { Registry::Remove(this); }
    static Connector *Find(IUnknown *u) { return Registry::Find(u, IID_IND2Connector); }

    // A listener hands us a request (under its lock; we are Fresh).
    void Adopt(Request r);
    // A message from the connector at the other end; then what this
    // connector queued is sent.
    void OnMessage(Message m) {
        Handle(std::move(m));
        OnUnlocked();
    }
    // Only the state change: for a refusal delivered while a listener's
    // lock is held (a dropped request), where sending anything could reach
    // that listener again.
    void Handle(Message m);

private:
    using Registry = kit::Registry<Connector, IND2Connector>;
    void Send(Message::Kind kind, const void *data = nullptr, ULONG size = 0) {
        Message m{kind, kit::HoldPtr<Connector>(peer_.get()), kit::HoldPtr<Connector>(this), {}, 0, 0, {}};
        if (size) m.data.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + size);
        outbox_.push_back(std::move(m));
    }
    void OnUnlocked() override;
    void OnFinalRelease() override;

    bool OwnsQueuePair(IUnknown *qp) override { return QueuePair::Find(qp) != nullptr; }
    HRESULT BindLocked(const net::IpAddress &want) override { return BindTo(addresses_, want, &local_); }
    HRESULT ConnectLocked(IUnknown *qp, const net::IpAddress &dest, ULONG inbound, ULONG outbound, const void *data,
                          ULONG size, OVERLAPPED *ov) override;
    HRESULT CompleteConnectLocked() override {
        Send(Message::Kind::Ready);
        return ND_SUCCESS;
    }
    HRESULT AcceptLocked(IUnknown *qp, const void *data, ULONG size, OVERLAPPED *ov) override;
    HRESULT RejectLocked(const void *data, ULONG size) override {
        Send(Message::Kind::Reject, data, size);
        CloseQp();
        return ND_SUCCESS;
    }
    void DisconnectLocked() override { Send(Message::Kind::Disconnect); }
    void AbandonAcceptLocked() override { Send(Message::Kind::Disconnect); }
    void ConnectOverLocked(HRESULT *) override { qp_.reset(); }
    void AcceptOverLocked() override { CloseQp(); }
    void ConnectionOverLocked() override { CloseQp(); }
    void CloseQp() {
        if (qp_) qp_->Close();
        qp_.reset();
    }

    kit::ComPtr<IND2Adapter> adapter_;
    const std::vector<net::IpAddress> addresses_;
    // Under lock().
    kit::ComPtr<QueuePair> qp_;
    kit::HoldPtr<Connector> peer_;
    kit::HoldPtr<QueuePair> peer_qp_;  // passive side: the initiator's, until Accept links it
    std::vector<Message> outbox_;
    std::vector<Request> requests_out_;  // active side: a request for a listener
};

class Listener : public kit::Listener<Request, Connector> {
public:
    Listener(IND2Adapter *adapter, HANDLE file, std::vector<net::IpAddress> addrs)
        : kit::Listener<Request, Connector>(file), adapter_(adapter, true), addresses_(std::move(addrs)) {}

    // A request for our address and port. Refused (dropped) when full.
    void Offer(Request r) {
        Request refused;
        {
            std::lock_guard<std::mutex> guard(lock());
            if (!ListeningLocked() || QueueFullLocked(r.peer))
                refused = std::move(r);  // refused below, outside our lock
            else
                QueueRequestLocked(std::move(r));
        }
    }
    bool Serves(const net::IpAddress &dest) {
        std::lock_guard<std::mutex> guard(lock());
        if (!ListeningLocked() || net::Port(local_.sa()) != net::Port(dest.sa())) return false;
        return net::IsWildcard(local_.sa()) ? local_.family() == dest.family() : net::SameIp(local_.sa(), dest.sa());
    }

private:
    HRESULT BindLocked(const net::IpAddress &want) override { return BindTo(addresses_, want, &local_); }
    HRESULT ListenLocked() override {
        std::lock_guard<std::mutex> g(g_listeners_mu);
        if (!g_listeners) g_listeners = new std::vector<std::pair<net::IpAddress, Listener *>>;
        g_listeners->push_back({local_, this});
        return ND_SUCCESS;
    }
    Connector *OwnConnector(IUnknown *u) override { return Connector::Find(u); }
    size_t HardQueueBound() const override { return 64; }
    void OnFinalRelease() override {
        {
            std::lock_guard<std::mutex> g(g_listeners_mu);
            if (g_listeners) {
                std::erase_if(*g_listeners, [this](const auto &e) { return e.second == this; });
                if (g_listeners->empty()) {
                    delete g_listeners;
                    g_listeners = nullptr;
                }
            }
        }
        std::lock_guard<std::mutex> guard(lock());
        DropRequestsLocked();  // their initiators are refused
    }

    kit::ComPtr<IND2Adapter> adapter_;
    std::vector<net::IpAddress> addresses_;
};

// The listener serving `dest`, held; none if nobody listens there.
kit::HoldPtr<Listener> FindListener(const net::IpAddress &dest) {
    std::vector<kit::HoldPtr<Listener>> candidates;
    {
        std::lock_guard<std::mutex> g(g_listeners_mu);
        if (g_listeners)
            for (const auto &e : *g_listeners) candidates.emplace_back(e.second);
    }
    for (auto &l : candidates)
        if (l && l->Serves(dest)) return std::move(l);
    return {};
}

Request::~Request() {
    if (!from) return;  // taken by a connector
    from->Handle(Message{Message::Kind::Refused, {}, {}, {}, 0, 0, {}});
}

HRESULT Connector::ConnectLocked(IUnknown *qp_unknown, const net::IpAddress &dest, ULONG inbound, ULONG outbound,
                                 const void *data, ULONG size, OVERLAPPED *ov) {
    if (state_ == State::Idle) {
        for (const auto &a : addresses_)
            if (a.family() == dest.family()) local_ = a;
        net::SetPort(local_.sa(), NextPort());
        state_ = State::Bound;
    }
    HRESULT hr = requests().Begin(ov);
    if (hr != ND_PENDING) return hr;
    qp_ = kit::ComPtr<QueuePair>(QueuePair::Find(qp_unknown), true);
    StartConnectingLocked(dest, ov);
    Request r;
    r.local = dest;
    r.source = local_;
    r.data.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + size);
    r.inbound = inbound;
    r.outbound = outbound;
    r.from = kit::HoldPtr<Connector>(this);
    r.qp = kit::HoldPtr<QueuePair>(qp_.get());
    requests_out_.push_back(std::move(r));
    return ND_PENDING;
}

void Connector::Adopt(Request r) {
    std::lock_guard<std::mutex> guard(lock());
    peer_ = std::move(r.from);
    peer_qp_ = std::move(r.qp);
    RequestedLocked(r.local, r.source, r.data.data(), static_cast<ULONG>(r.data.size()), r.inbound, r.outbound);
}

HRESULT Connector::AcceptLocked(IUnknown *qp_unknown, const void *data, ULONG size, OVERLAPPED *ov) {
    HRESULT hr = requests().Begin(ov);
    if (hr != ND_PENDING) return hr;
    qp_ = kit::ComPtr<QueuePair>(QueuePair::Find(qp_unknown), true);
    qp_->Link(peer_qp_.get());
    Send(Message::Kind::Reply, data, size);
    // What we serve is what the initiator may issue, and the reverse.
    outbox_.back().inbound = outbound_;
    outbox_.back().outbound = inbound_;
    outbox_.back().qp = kit::HoldPtr<QueuePair>(qp_.get());
    StartAcceptingLocked(ov);
    return ND_PENDING;
}

void Connector::Handle(Message m) {
    {
        std::lock_guard<std::mutex> guard(lock());
        const ULONG size = static_cast<ULONG>(m.data.size());
        switch (m.kind) {
        case Message::Kind::Reply:
            if (state_ != State::Connecting) break;
            peer_ = std::move(m.from);
            qp_->Link(m.qp.get());
            RepliedLocked(m.data.data(), size, m.inbound, m.outbound);
            break;
        case Message::Kind::Refused:
            if (state_ == State::Connecting) ConnectFailedLocked(ND_CONNECTION_REFUSED);
            break;
        case Message::Kind::Ready:
            if (state_ == State::Accepting) AcceptedLocked();
            break;
        case Message::Kind::Reject:
            if (state_ == State::Connecting)
                RejectedLocked(m.data.data(), size);
            else if (state_ == State::Accepting)  // the initiator turned our reply down (D31)
                requests().Complete(EndAcceptLocked(), ND_CONNECTION_REFUSED);
            break;
        case Message::Kind::Disconnect:
            PeerLeftLocked(ND_CONNECTION_REFUSED);  // Connecting: the passive side went before it answered
            break;
        }
    }
}

// Delivers what the calls queued, with no lock held.
void Connector::OnUnlocked() {
    std::vector<Message> out;
    std::vector<Request> requests;
    {
        std::lock_guard<std::mutex> guard(lock());
        out.swap(outbox_);
        requests.swap(requests_out_);
    }
    for (Request &r : requests) {
        kit::HoldPtr<Listener> listener = FindListener(r.local);
        if (listener) listener->Offer(std::move(r));
    }  // a request nobody took is refused as it goes
    for (Message &m : out)
        if (m.to) {
            Connector *to = m.to.get();
            to->OnMessage(std::move(m));
        }
}

void Connector::OnFinalRelease() {
    {
        std::lock_guard<std::mutex> guard(lock());
        // Released after Connect completed but before CompleteConnect: the
        // passive side's Accept fails ND_CONNECTION_REFUSED (COMPAT).
        if (state_ == State::Replied) Send(Message::Kind::Reject);
        if (state_ == State::Connected || state_ == State::Accepting || state_ == State::Requested)
            Send(Message::Kind::Disconnect);
        CloseQp();
        requests().CancelAll();
        ClosedLocked();
        // The other end holds us as we hold it: let go, or neither is freed.
        peer_.reset();
        peer_qp_.reset();
    }
    OnUnlocked();
}

}  // namespace

HRESULT MakeConnector(IND2Adapter *adapter, HANDLE file, const ND2_ADAPTER_INFO &info, REFIID iid, void **pp,
                      std::vector<net::IpAddress> addrs) {
    return kit::HandIfValid(new Connector(adapter, file, info, std::move(addrs)), iid, pp, ND_INVALID_HANDLE);
}

HRESULT MakeListener(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp, std::vector<net::IpAddress> addrs) {
    return kit::HandIfValid(new Listener(adapter, file, std::move(addrs)), iid, pp, ND_INVALID_HANDLE);
}

}  // namespace loopback
