// The device's progress thread at work (device.h): routing rdma_cm,
// completion and asynchronous events to the objects they belong to, the
// keys of live registrations, deferred calls and timers.
#include <unistd.h>

#include <algorithm>

#include "device.h"
#include "opennd/kit/clock.h"
#include "opennd/log.h"
#include "opennd/params.h"

namespace opennd::verbs {

template <class T>
T *Device::HoldFound(std::unordered_map<const void *, T *> &map, const void *key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map.find(key);
    return it != map.end() && it->second->TryHold() ? it->second : nullptr;
}

void Device::AddEndpoint(rdma_cm_id *id, CmEndpoint *e) {
    std::lock_guard<std::mutex> lock(mu_);
    endpoints_[id] = e;
}
void Device::RemoveEndpoint(rdma_cm_id *id) {
    std::lock_guard<std::mutex> lock(mu_);
    endpoints_.erase(id);
}
void Device::AddObject(const void *handle, DeviceObject *o) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[handle] = o;
}
void Device::RemoveObject(const void *handle) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(handle);
}

void Device::AddKey(uint32_t lkey) {
    std::lock_guard<std::mutex> lock(mu_);
    ++keys_[lkey];
}
void Device::RemoveKey(uint32_t lkey) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = keys_.find(lkey); it != keys_.end() && --it->second == 0) keys_.erase(it);
}
bool Device::LiveKey(uint32_t lkey) {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_.count(lkey) != 0;
}

void Device::Defer(std::function<void()> fn) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        deferred_.push_back(std::move(fn));
    }
    const uint64_t one = 1;
    if (write(defer_fd_, &one, sizeof one) != sizeof one) OPENND_LOG(Error, "ndverbs: cannot wake the progress thread");
}

void Device::After(uint64_t ms, std::function<void()> fn) {
    const uint64_t due = kit::NowMs() + ms;
    uint64_t first;
    {
        std::lock_guard<std::mutex> lock(mu_);
        timers_.emplace_back(due, std::move(fn));
        first = due;
        for (const auto &t : timers_) first = std::min(first, t.first);
    }
    WakeAt(defer_fd_, first);
}

void Device::RunDeferred() {
    uint64_t n;
    while (read(defer_fd_, &n, sizeof n) == sizeof n) {
    }
    std::vector<std::function<void()>> run;
    uint64_t next = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        run.swap(deferred_);
        const uint64_t now = kit::NowMs();
        for (auto it = timers_.begin(); it != timers_.end();) {
            if (it->first <= now) {
                run.push_back(std::move(it->second));
                it = timers_.erase(it);
            } else {
                next = next ? std::min(next, it->first) : it->first;
                ++it;
            }
        }
    }
    if (next) WakeAt(defer_fd_, next);
    for (auto &fn : run) fn();
}

// Each event is copied and acknowledged before its endpoint sees it, so an
// endpoint destroying its id (which waits for the acknowledgements) never
// waits for this thread.
void Device::ReadCm() {
    rdma_cm_event *raw = nullptr;
    while (rdma_get_cm_event(cm_, &raw) == 0) {
        const rdma_cm_event event = *raw;
        std::vector<uint8_t> data;
        const auto *pd = static_cast<const uint8_t *>(raw->param.conn.private_data);
        if (pd && raw->id && raw->id->ps == RDMA_PS_TCP) data.assign(pd, pd + raw->param.conn.private_data_len);
        // A request arrives on a new id; the listener is its listen_id.
        const bool request = event.event == RDMA_CM_EVENT_CONNECT_REQUEST;
        CmEndpoint *e = HoldFound(endpoints_, request ? event.listen_id : event.id);
        OPENND_LOG(Debug, "ndverbs: %s (status %d) on id %p%s", rdma_event_str(event.event), event.status,
                   static_cast<void *>(event.id), e ? "" : ", nobody's");
        rdma_ack_cm_event(raw);
        if (!e) {
            if (request) {  // nobody listens any more
                rdma_reject(event.id, nullptr, 0);
                rdma_destroy_id(event.id);
            }
            continue;
        }
        e->OnCmEvent(event.id, event, data);
        e->Unhold();
    }
}

void Device::ReadCompletions() {
    ibv_cq *cq = nullptr;
    void *context = nullptr;
    while (ibv_get_cq_event(comp_, &cq, &context) == 0) {
        DeviceObject *o = HoldFound(objects_, cq);
        ibv_ack_cq_events(cq, 1);
        if (!o) continue;
        o->OnCompletionEvent();
        o->Unhold();
    }
}

bool Device::PortActive() const {
    ibv_port_attr attr{};
    return ibv_query_port(ctx_, caps_.port, &attr) == 0 && attr.state == IBV_PORT_ACTIVE;
}

void Device::OnPortEvent(bool up) {
    if (up) return;  // a timer still due finds the port active and does nothing
    const uint64_t down = ++port_downs_;
    After(static_cast<uint64_t>(std::max(0L, ParamLong("OPENND_VERBS_LINK_DOWN_MS", 3000))), [this, down] {
        if (down != port_downs_ || PortActive()) return;
        OPENND_LOG(Warn, "ndverbs: %s: port %u still down: its connections are over",
                   ibv_get_device_name(ctx_->device), caps_.port);
        std::vector<CmEndpoint *> held;
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (const auto &entry : endpoints_) {
                CmEndpoint *e = entry.second;  // a listener may own several ids
                if (std::find(held.begin(), held.end(), e) == held.end() && e->TryHold()) held.push_back(e);
            }
        }
        for (CmEndpoint *e : held) {
            e->OnLinkLost();
            e->Unhold();
        }
    });
}

void Device::ReadAsync() {
    ibv_async_event event;
    while (ibv_get_async_event(ctx_, &event) == 0) {
        const void *element = nullptr;
        switch (event.event_type) {
        case IBV_EVENT_CQ_ERR: element = event.element.cq; break;
        case IBV_EVENT_SRQ_ERR:
        case IBV_EVENT_SRQ_LIMIT_REACHED: element = event.element.srq; break;
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
        case IBV_EVENT_COMM_EST:
        case IBV_EVENT_SQ_DRAINED:
        case IBV_EVENT_PATH_MIG:
        case IBV_EVENT_PATH_MIG_ERR:
        case IBV_EVENT_QP_LAST_WQE_REACHED: element = event.element.qp; break;
        default:
            OPENND_LOG(Info, "ndverbs: %s: %s", ibv_get_device_name(ctx_->device),
                       ibv_event_type_str(event.event_type));
            if ((event.event_type == IBV_EVENT_PORT_ERR || event.event_type == IBV_EVENT_PORT_ACTIVE) &&
                event.element.port_num == caps_.port)
                OnPortEvent(event.event_type == IBV_EVENT_PORT_ACTIVE);
            break;
        }
        DeviceObject *o = element ? HoldFound(objects_, element) : nullptr;
        const ibv_event_type type = event.event_type;
        ibv_ack_async_event(&event);
        if (!o) continue;
        o->OnAsyncEvent(type);
        o->Unhold();
    }
}

}  // namespace opennd::verbs
