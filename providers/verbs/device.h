// One RDMA device as the verbs provider uses it: librdmacm's context for
// it (so queue pairs, regions and rdma_cm ids share one context), a
// protection domain, what ND2_ADAPTER_INFO declares, and the progress
// thread that reads the device's three descriptors: the rdma_cm event
// channel, the completion channel and the asynchronous event descriptor.
// One Device per context in a process, shared by every adapter opened on
// it. Setup path only.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>
#include <string>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ndspi.h"
#include "opennd/kit/address.h"
#include "opennd/kit/progress.h"

namespace opennd::verbs {

// What the objects on a device receive from its progress thread. Each is
// registered by the raw pointer rdma_cm or verbs hands back (an id, a CQ,
// a QP, an SRQ) and found again under the device's lock with TryHold, so
// the thread never touches an object being destroyed.
class CmEndpoint {
public:
    virtual bool TryHold() = 0;
    virtual void Unhold() = 0;
    // An event for one of its ids, copied and acknowledged already.
    virtual void OnCmEvent(rdma_cm_id *id, const rdma_cm_event &event, const std::vector<uint8_t> &private_data) = 0;
    // The device's port stayed down (Device::OnPortEvent): a connection
    // on it is over, as neither rdma_cm nor (on iWARP) the device ends it.
    virtual void OnLinkLost() {}

protected:
    ~CmEndpoint() = default;
};

class DeviceObject {
public:
    virtual bool TryHold() = 0;
    virtual void Unhold() = 0;
    // A completion event (CQ) or an asynchronous event (CQ, QP, SRQ).
    virtual void OnCompletionEvent() {}
    virtual void OnAsyncEvent(ibv_event_type) {}

protected:
    ~DeviceObject() = default;
};

// Facts about a device that the mapping depends on.
struct DeviceCaps {
    bool iwarp = false;        // iw_cm: no CONNECT_RESPONSE, no RNR, MPA private data
    bool ib_link = false;      // InfiniBand link layer (not RoCE): rdma_cm's RTR mask workaround
    bool sink_needs_write = false;  // an iWARP RNIC: a Read's sink needs remote write rights
    bool windows = false;      // type 2 memory windows in hardware
    bool resize_cq = false;
    bool resize_srq = false;   // IBV_DEVICE_SRQ_RESIZE (siw: no)
    bool siw = false;          // Linux soft-iWARP, whatever it is named (its quirks: docs/verbs.md)
    // A Read completes when its response is in, after requests posted
    // behind it that complete once sent (siw): the send queue's
    // completions are not in post order unless those wait (QueuePair::Order).
    bool reads_complete_late = false;
    // A Read may carry a fence (siw refuses one and leaves it stuck at the
    // head of its send queue: siw_activate_tx_from_sq, "cannot fence read").
    bool fenced_reads = true;
    // A region can be registered at an address of the peer's choosing
    // (ibv_reg_mr_iova). siw cannot: measured in the VM, it places the
    // peer's accesses by the buffer's own address whatever the IOVA.
    bool relocatable_regions = true;
    uint32_t max_sge_rd = 1;   // SGEs of one RDMA Read work request
    uint32_t max_qp_wr = 1;    // work requests of one queue
    uint64_t max_msg = 0;      // the port's max_msg_sz
    uint64_t max_transfer = 0; // one request's data (MaxTransferLength)
    uint8_t port = 1;
};

class Device : public kit::Progress {
public:
    ~Device();
    // The device serving `ctx`, opened once per process.
    static std::shared_ptr<Device> Get(ibv_context *ctx);

    ibv_context *context() const { return ctx_; }
    ibv_pd *pd() const { return pd_; }
    ibv_comp_channel *comp_channel() const { return comp_; }
    rdma_event_channel *cm_channel() const { return cm_; }
    const ND2_ADAPTER_INFO &info() const { return info_; }
    const DeviceCaps &caps() const { return caps_; }
    // The local addresses rdma_cm maps to this device (asked afresh).
    std::vector<kit::IpAddress> Addresses() const;
    // For ndinfo: the device, its transport and link, port state,
    // firmware, fork safety and how windows are made (asked afresh).
    std::string Notes() const;

    // Routing of events to objects (see CmEndpoint, DeviceObject).
    void AddEndpoint(rdma_cm_id *id, CmEndpoint *e);
    void RemoveEndpoint(rdma_cm_id *id);
    void AddObject(const void *handle, DeviceObject *o);
    void RemoveObject(const void *handle);
    // Runs fn on this device's progress thread soon (rdma_cm calls that
    // block, such as siw's connect, never run on an application's thread).
    void Defer(std::function<void()> fn);
    // Local keys of the live registrations: a receive that failed as rxe
    // reports both a bad key and a short buffer (LOC_QP_OP_ERR) is told
    // apart by whether its key still exists.
    void AddKey(uint32_t lkey);
    void RemoveKey(uint32_t lkey);
    bool LiveKey(uint32_t lkey);
    // Runs fn on the progress thread once `ms` have passed.
    void After(uint64_t ms, std::function<void()> fn);

private:
    class Reader;
    Device() = default;
    bool Open(ibv_context *ctx);
    void ReadCm();
    void ReadCompletions();
    void ReadAsync();
    // IBV_EVENT_PORT_ERR / PORT_ACTIVE of our port. A port still down
    // OPENND_VERBS_LINK_DOWN_MS later ends every connection (OnLinkLost):
    // rxe fails requests posted while it is down but tells no connector,
    // and siw leaves them to TCP's retransmissions (docs/verbs.md, point 8).
    void OnPortEvent(bool up);
    bool PortActive() const;
    void RunDeferred();
    template <class T>
    T *HoldFound(std::unordered_map<const void *, T *> &map, const void *key);

    ibv_context *ctx_ = nullptr;
    ibv_pd *pd_ = nullptr;
    ibv_comp_channel *comp_ = nullptr;
    rdma_event_channel *cm_ = nullptr;
    int defer_fd_ = -1;
    bool listed_ = false;  // in the process's map of open devices
    ND2_ADAPTER_INFO info_{};
    DeviceCaps caps_;
    std::unique_ptr<Reader> reader_;
    std::mutex mu_;  // guards the maps and deferred_
    std::unordered_map<const void *, CmEndpoint *> endpoints_;
    std::unordered_map<const void *, DeviceObject *> objects_;
    std::unordered_map<uint32_t, int> keys_;
    std::vector<std::function<void()>> deferred_;
    std::vector<std::pair<uint64_t, std::function<void()>>> timers_;  // (NowMs due, fn)
    uint64_t port_downs_ = 0;  // PORT_ERR events so far (progress thread only): a timer names its own
};

// Every device rdma_cm knows, with the node GUID that names its adapter.
struct DeviceEntry {
    ibv_context *context;
    UINT64 guid;
};
std::vector<DeviceEntry> Devices();
// The device an address belongs to (nullptr if none: no RDMA device
// serves it, or rdma_cm is not available here).
ibv_context *DeviceOf(const kit::IpAddress &a);

}  // namespace opennd::verbs
