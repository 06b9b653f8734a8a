// The connector over rdma_cm (connection.h): the calls' transport and the
// events that answer them.
#include <algorithm>
#include <cstring>

#include "connection.h"
#include "opennd/kit/connection_rules.h"
#include "opennd/kit/memory_region.h"
#include "opennd/kit/registry.h"
#include "opennd/log.h"
#include "opennd/params.h"
#include "status.h"

namespace opennd::verbs {
namespace {

using Registry = kit::Registry<Connector, IND2Connector>;
// Address and route resolution, as rping and perftest ask. A neighbour not
// yet in the ARP or ND table is resolved when the kernel's timer for the
// request fires (seen on siw, in a VM: the first connection to a host
// waits exactly this long), so it must be well under Connect's own bound
// (OPENND_VERBS_CONNECT_MS).
constexpr int kResolveMs = 2000;
// How long a peer waits before it sends again to a queue pair of ours that
// had no receive posted: IB's code 24, 40.96 ms.
constexpr uint8_t kRnrTimer = 24;

}  // namespace

// A peer that stops answering (its node died, or its region went in the
// middle of a Read) fails our requests ND_IO_TIMEOUT in about 2 s (IB's
// code 16: 268 ms, times the retry count) instead of rdma_cm's default
// (RoCE: a second each).
void SetAckTimeout(rdma_cm_id *id) {
    uint8_t timeout = 16;
    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout);
}

kit::IpAddress FromCm(const sockaddr *sa) {
    kit::IpAddress a;
    if (sa) kit::FromSockaddr(sa, kit::SockaddrLength(sa->sa_family), &a);
    return a;
}

HRESULT BindStatus(int err) {
    switch (err) {
    case EADDRINUSE: return kit::kStatusAddressAlreadyAssociated;
    case EADDRNOTAVAIL:
    case EAFNOSUPPORT:
    case ENODEV:
    case EINVAL: return ND_INVALID_ADDRESS;
    case ENOMEM: return ND_NO_MEMORY;
    default: return ND_INSUFFICIENT_RESOURCES;
    }
}

Connector::Connector(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file)
    : kit::Connector(file, device->info()), device_(std::move(device)), adapter_(adapter, true) {
    Registry::Add(this);
}

Connector::~Connector() { Registry::Remove(this); }

Connector *Connector::Find(IUnknown *u) { return Registry::Find(u, IID_IND2Connector); }

bool Connector::OwnsQueuePair(IUnknown *qp) {
    QueuePair *q = QueuePair::Find(qp);
    return q && q->device() == device_.get();
}

HRESULT Connector::MakeIdLocked(const kit::IpAddress *address) {
    if (!id_) {
        if (rdma_create_id(device_->cm_channel(), &id_, this, RDMA_PS_TCP) != 0) {
            id_ = nullptr;
            return ND_INSUFFICIENT_RESOURCES;
        }
        device_->AddEndpoint(id_, this);
        SetAckTimeout(id_);
    }
    if (!address) return ND_SUCCESS;
    kit::IpAddress a = *address;
    // Shared: ids with the option share the port; one without it, or a
    // listener, is refused it (rdma_cm's port check).
    int one = 1;
    if (shared_ && rdma_set_option(id_, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof one) != 0) {
        DropIdLocked();
        return ND_INSUFFICIENT_RESOURCES;
    }
    if (rdma_bind_addr(id_, a.sa()) != 0) {
        const HRESULT hr = BindStatus(errno);
        DropIdLocked();
        return hr;
    }
    local_ = FromCm(rdma_get_local_addr(id_));
    return ND_SUCCESS;
}

// Destroying the id waits for its events' acknowledgements, which the
// progress thread gives before it takes our lock: safe under it.
void Connector::DropIdLocked() {
    if (!id_) return;
    device_->RemoveEndpoint(id_);
    rdma_destroy_id(id_);
    id_ = nullptr;
}

HRESULT Connector::BindLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(device_->Addresses(), want)) return ND_INVALID_ADDRESS;
    return MakeIdLocked(&want);
}

HRESULT Connector::BindSharedLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(device_->Addresses(), want)) return ND_INVALID_ADDRESS;
    shared_ = true;
    const HRESULT hr = MakeIdLocked(&want);
    if (FAILED(hr)) shared_ = false;
    return hr;
}

rdma_conn_param Connector::ConnParam(const void *data, ULONG size, ULONG inbound, ULONG outbound) const {
    rdma_conn_param p{};
    p.private_data = size ? data : nullptr;
    p.private_data_len = static_cast<uint8_t>(size);
    p.responder_resources = static_cast<uint8_t>(std::min<ULONG>(inbound, 255));
    p.initiator_depth = static_cast<uint8_t>(std::min<ULONG>(outbound, 255));
    p.flow_control = 1;
    p.retry_count = 7;
    // A Send the peer makes with no receive posted here is retried a few
    // times, kRnrTimer apart, then fails ND_IO_TIMEOUT (Windows providers
    // fail it at once; a receiver a few milliseconds late to post, as in a
    // busy VM, then breaks the connection). A queue pair on an SRQ lets the
    // peer retry for ever (the SRQ refills).
    p.rnr_retry_count = qp_ && qp_->UsesSrq() ? 7 : static_cast<uint8_t>(std::clamp(ParamLong("OPENND_VERBS_RNR_RETRY", 6), 0L, 7L));
    p.qp_num = qp_ ? qp_->qp()->qp_num : 0;
    return p;
}

HRESULT Connector::ConnectLocked(IUnknown *qp, const kit::IpAddress &dest, ULONG inbound, ULONG outbound,
                                 const void *data, ULONG size, OVERLAPPED *ov) {
    if (state_ == State::Idle || !id_) {
        // The source: the destination itself if it is ours (a loopback
        // connection), else one of the device's addresses of its family.
        kit::IpAddress src = state_ == State::Bound ? local_ : kit::IpAddress{};
        if (state_ == State::Idle) {
            bool found = false;
            for (const auto &a : device_->Addresses()) {
                if (a.family() != dest.family() || (found && !kit::SameIp(a.sa(), dest.sa()))) continue;
                src = a;
                found = true;
            }
            if (!found) return ND_INVALID_ADDRESS;
        }
        if (HRESULT hr = MakeIdLocked(&src); FAILED(hr)) return hr;
        state_ = State::Bound;
    }
    std::vector<uint8_t> copy(size);
    if (!kit::CopyFromApplication(copy.data(), data, size)) return ND_ACCESS_VIOLATION;  // R116
    QueuePair *q = QueuePair::Find(qp);
    if (!q->Claim()) return ND_CONNECTION_ACTIVE;  // connected, or being connected, elsewhere
    HRESULT hr = requests().Begin(ov);
    if (hr != ND_PENDING) {
        q->Unclaim();
        return hr;
    }
    qp_ = kit::ComPtr<QueuePair>(q, true);
    connect_data_ = std::move(copy);
    ask_inbound_ = inbound;
    ask_outbound_ = outbound;
    StartConnectingLocked(dest, ov);
    // rdma_cm retries a silent destination for minutes: Connect ends sooner.
    auto hold = std::make_shared<kit::HoldPtr<Connector>>(this);
    device_->After(static_cast<uint64_t>(ParamLong("OPENND_VERBS_CONNECT_MS", 5000)),
                   [hold, attempt = ++attempts_] { (*hold)->ConnectTimedOut(attempt); });
    kit::IpAddress to = dest;
    if (rdma_resolve_addr(id_, nullptr, to.sa(), kResolveMs) != 0) ConnectFailedLocked(ND_HOST_UNREACHABLE);
    return ND_PENDING;
}

void Connector::ConnectTimedOut(uint64_t attempt) {
    std::lock_guard<std::mutex> guard(lock());
    if (state_ == State::Connecting && attempt == attempts_) ConnectFailedLocked(ND_IO_TIMEOUT);
}

void Connector::ConnectStepLocked(const rdma_cm_event &e) {
    if (e.event == RDMA_CM_EVENT_ADDR_RESOLVED) {
        if (rdma_resolve_route(id_, kResolveMs) != 0) ConnectFailedLocked(ND_HOST_UNREACHABLE);
        return;
    }
    // ROUTE_RESOLVED. siw's connect blocks in a TCP connect: this runs on
    // the progress thread, never on the application's.
    rdma_conn_param p = ConnParam(connect_data_.data(), static_cast<ULONG>(connect_data_.size()), ask_inbound_,
                                  ask_outbound_);
    if (rdma_connect(id_, &p) != 0) {
        const int err = errno;
        ConnectFailedLocked(err == ECONNREFUSED ? ND_CONNECTION_REFUSED : ND_CONNECTION_ABORTED);
    }
}

// IB/RoCE: what librdmacm would do with a queue pair on the id, done here
// because ours is not: INIT again from the id (its port and keys), RTR,
// RTS, with the read limits negotiated.
bool Connector::ReadyLocked() {
    ibv_qp *qp = qp_->qp();
    ibv_qp_attr attr;
    int mask = 0;
    attr.qp_state = IBV_QPS_INIT;
    if (rdma_init_qp_attr(id_, &attr, &mask) != 0 || ibv_modify_qp(qp, &attr, mask) != 0) return false;
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    if (rdma_init_qp_attr(id_, &attr, &mask) != 0) return false;
    if (device_->caps().ib_link) mask &= ~0xe00000;  // RoCE-only bits rdma_ucm sets on IB (librdmacm does the same)
    attr.max_dest_rd_atomic = static_cast<uint8_t>(inbound_);
    attr.min_rnr_timer = kRnrTimer;
    mask |= IBV_QP_MIN_RNR_TIMER;
    if (ibv_modify_qp(qp, &attr, mask) != 0) return false;
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    if (rdma_init_qp_attr(id_, &attr, &mask) != 0) return false;
    attr.max_rd_atomic = static_cast<uint8_t>(outbound_);
    return ibv_modify_qp(qp, &attr, mask) == 0;
}

HRESULT Connector::CompleteConnectLocked() {
    if (device_->caps().iwarp) {  // ready since ESTABLISHED
        qp_->Connected();
        return ND_SUCCESS;
    }
    if (!ReadyLocked() || rdma_establish(id_) != 0) return ND_CONNECTION_ABORTED;
    qp_->Connected();
    return ND_SUCCESS;
}

void Connector::Adopt(Request r) {
    std::lock_guard<std::mutex> guard(lock());
    id_ = std::exchange(r.id, nullptr);
    id_->context = this;
    SetAckTimeout(id_);
    device_->AddEndpoint(id_, this);
    RequestedLocked(r.local, r.source, r.data.data(), static_cast<ULONG>(r.data.size()), r.peer_inbound,
                    r.peer_outbound);
}

HRESULT Connector::AcceptLocked(IUnknown *qp, const void *data, ULONG size, OVERLAPPED *ov) {
    uint8_t copy[256];
    if (size > sizeof copy || !kit::CopyFromApplication(copy, data, size)) return ND_ACCESS_VIOLATION;  // R116
    QueuePair *q = QueuePair::Find(qp);
    if (!q->Claim()) return ND_CONNECTION_ACTIVE;
    qp_ = kit::ComPtr<QueuePair>(q, true);
    if (!device_->caps().iwarp && !ReadyLocked()) {
        qp_->Unclaim();
        qp_.reset();
        return ND_CONNECTION_ABORTED;
    }
    qp_->SetCmId(id_);
    rdma_conn_param p = ConnParam(copy, size, inbound_, outbound_);
    if (rdma_accept(id_, &p) != 0) {
        qp_->Fail();
        qp_.reset();
        return ND_CONNECTION_ABORTED;
    }
    HRESULT hr = requests().Begin(ov);
    if (hr != ND_PENDING) return hr;
    StartAcceptingLocked(ov);
    return ND_PENDING;
}

HRESULT Connector::RejectLocked(const void *data, ULONG size) {
    uint8_t copy[256];
    if (size > sizeof copy || !kit::CopyFromApplication(copy, data, size)) return ND_ACCESS_VIOLATION;  // R116
    // The active side turning a reply down: IB's CM rejects in REP_RCVD;
    // iWARP is connected already and can only disconnect (docs/verbs.md).
    if (state_ == State::Replied && device_->caps().iwarp)
        rdma_disconnect(id_);
    else
        rdma_reject(id_, size ? copy : nullptr, static_cast<uint8_t>(size));
    if (qp_) qp_->Fail();
    qp_.reset();
    return ND_SUCCESS;
}

void Connector::DisconnectLocked() {
    if (qp_) qp_->Fail();
    if (id_) rdma_disconnect(id_);
}

// IB/RoCE: the reply went but no RTU came; a reject in REP_SENT tells the
// initiator (its CompleteConnect fails). iWARP is connected: disconnect.
void Connector::AbandonAcceptLocked() {
    if (device_->caps().iwarp) {
        rdma_disconnect(id_);
        return;
    }
    // Destroying the id rejects and stops the CM resending the reply; a
    // reject alone leaves the reply's retries holding the id, and its
    // destruction then waits for them (measured on rxe: over a minute).
    DropIdLocked();
}

void Connector::ConnectOverLocked(HRESULT *) {
    // The id has done its part; a new Connect makes another, bound to the
    // same address (state Bound keeps local_).
    DropIdLocked();
    if (qp_) qp_->Unclaim();  // it may connect again
    qp_.reset();
}

void Connector::AcceptOverLocked() {
    if (qp_) qp_->Fail();
    qp_.reset();
}

void Connector::ConnectionOverLocked() {
    if (qp_) qp_->Fail();  // what is posted completes ND_CANCELED
    if (id_) rdma_disconnect(id_);  // answers the peer's DREQ
}

HRESULT MakeConnector(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp) {
    return kit::HandIfValid(new Connector(std::move(device), adapter, file), iid, pp, ND_INVALID_HANDLE);
}

}  // namespace opennd::verbs
