// The listener over rdma_cm (connection.h): each CONNECT_REQUEST arrives
// on a new id, which a Request holds until a connector adopts it; one
// dropped untaken is rejected (its initiator sees a refusal).
#include <functional>
#include <string>

#include "connection.h"
#include "objects.h"
#include "opennd/kit/connection_rules.h"

namespace opennd::verbs {

Request &Request::operator=(Request &&o) noexcept {
    if (this != &o) {
        this->~Request();
        peer = o.peer;
        id = std::exchange(o.id, nullptr);
        local = o.local;
        source = o.source;
        data = std::move(o.data);
        peer_inbound = o.peer_inbound;
        peer_outbound = o.peer_outbound;
    }
    return *this;
}

Request::~Request() {
    if (!id) return;
    rdma_reject(id, nullptr, 0);
    rdma_destroy_id(id);
    id = nullptr;
}

Listener::Listener(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file)
    : kit::Listener<Request, Connector>(file), device_(std::move(device)), adapter_(adapter, true) {}

Listener::~Listener() = default;

HRESULT Listener::BindLocked(const kit::IpAddress &want) {
    if (!kit::BindableAddress(device_->Addresses(), want)) return ND_INVALID_ADDRESS;
    if (rdma_create_id(device_->cm_channel(), &id_, this, RDMA_PS_TCP) != 0) {
        id_ = nullptr;
        return ND_INSUFFICIENT_RESOURCES;
    }
    kit::IpAddress a = want;
    if (rdma_bind_addr(id_, a.sa()) != 0) {
        const HRESULT hr = BindStatus(errno);
        rdma_destroy_id(id_);
        id_ = nullptr;
        return hr;
    }
    device_->AddEndpoint(id_, this);
    local_ = FromCm(rdma_get_local_addr(id_));
    return ND_SUCCESS;
}

HRESULT Listener::ListenLocked() {
    return rdma_listen(id_, static_cast<int>(HardQueueBound())) == 0 ? ND_SUCCESS : BindStatus(errno);
}

void Listener::OnCmEvent(rdma_cm_id *id, const rdma_cm_event &e, const std::vector<uint8_t> &data) {
    if (e.event != RDMA_CM_EVENT_CONNECT_REQUEST) return;
    Request r;
    r.id = id;  // rejected and destroyed with r unless queued
    r.local = FromCm(rdma_get_local_addr(id));
    r.source = FromCm(rdma_get_peer_addr(id));
    r.peer = std::hash<std::string>()(kit::ToString(r.source.sa()));
    r.data = data;
    // In our view: responder_resources is what the initiator will issue.
    r.peer_outbound = e.param.conn.responder_resources;
    r.peer_inbound = e.param.conn.initiator_depth;
    std::lock_guard<std::mutex> guard(lock());
    if (!ListeningLocked() || QueueFullLocked(r.peer)) return;
    id->context = nullptr;
    QueueRequestLocked(std::move(r));
}

void Listener::OnFinalRelease() {
    std::lock_guard<std::mutex> guard(lock());
    DropRequestsLocked();  // their initiators are refused
    if (!id_) return;
    device_->RemoveEndpoint(id_);
    rdma_destroy_id(id_);
    id_ = nullptr;
}

HRESULT MakeListener(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp) {
    return kit::HandIfValid(new Listener(std::move(device), adapter, file), iid, pp, ND_INVALID_HANDLE);
}

}  // namespace opennd::verbs
