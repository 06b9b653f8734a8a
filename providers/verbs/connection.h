// Connections over rdma_cm (RDMA_PS_TCP), on the kit's connector and
// listener state machines. The queue pair is never attached to the
// rdma_cm id (VERBS-MAPPING §1.4): on InfiniBand and RoCE, librdmacm then
// reports CONNECT_RESPONSE and leaves the RTU to us, so ND's Connect ->
// CompleteConnect | Reject split survives; the connector moves the queue
// pair through RTR and RTS itself (rdma_init_qp_attr). iWARP has no such
// split: the kernel makes the queue pair ready and reports ESTABLISHED,
// which completes Connect; CompleteConnect then only says so.
//
// Events reach the connector on its device's progress thread (device.h),
// copied and acknowledged already, so destroying an id never waits for it.
// Locking: the kit's connector lock guards id_ and qp_; a listener hands a
// request to a connector under its own lock (listener, then connector).
#pragma once

#include <rdma/rdma_cma.h>

#include <memory>
#include <vector>

#include "device.h"
#include "opennd/kit/connector.h"
#include "opennd/kit/listener.h"
#include "queue_pair.h"

namespace opennd::verbs {

// A connection request a listener holds until a connector takes it (or
// it is refused when dropped).
struct Request {
    uint64_t peer = 0;  // a hash of the initiator's IP
    rdma_cm_id *id = nullptr;
    kit::IpAddress local, source;
    std::vector<uint8_t> data;
    ULONG peer_inbound = 0, peer_outbound = 0;
    Request() = default;
    Request(Request &&o) noexcept { *this = std::move(o); }
    Request &operator=(Request &&o) noexcept;
    ~Request();
};

class Connector : public kit::Connector, public CmEndpoint {
public:
    Connector(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file);
    ~Connector() override;
    static Connector *Find(IUnknown *u);
    // A listener hands us a request (we are Fresh).
    void Adopt(Request r);

    bool TryHold() override { return kit::Connector::TryHold(); }
    void Unhold() override { kit::Connector::Unhold(); }
    void OnCmEvent(rdma_cm_id *id, const rdma_cm_event &e, const std::vector<uint8_t> &data) override;
    void OnLinkLost() override;

private:
    bool OwnsQueuePair(IUnknown *qp) override;
    HRESULT BindLocked(const kit::IpAddress &want) override;
    HRESULT BindSharedLocked(const kit::IpAddress &want) override;
    HRESULT ConnectLocked(IUnknown *qp, const kit::IpAddress &dest, ULONG inbound, ULONG outbound, const void *data,
                          ULONG size, OVERLAPPED *ov) override;
    HRESULT CompleteConnectLocked() override;
    HRESULT AcceptLocked(IUnknown *qp, const void *data, ULONG size, OVERLAPPED *ov) override;
    HRESULT RejectLocked(const void *data, ULONG size) override;
    void DisconnectLocked() override;
    void AbandonAcceptLocked() override;
    void ConnectOverLocked(HRESULT *status) override;
    void AcceptOverLocked() override;
    void ConnectionOverLocked() override;
    void OnFinalRelease() override;

    // The Connect `attempt` is still waiting at its deadline: it fails.
    void ConnectTimedOut(uint64_t attempt);
    // The id, made (and bound to `address` unless it is null) if there is none.
    HRESULT MakeIdLocked(const kit::IpAddress *address);
    void DropIdLocked();
    // The next step of a Connect as rdma_cm answers the last one.
    void ConnectStepLocked(const rdma_cm_event &e);
    rdma_conn_param ConnParam(const void *data, ULONG size, ULONG inbound, ULONG outbound) const;
    // INIT (with the id's port and keys), RTR and RTS, from the id (IB/RoCE).
    bool ReadyLocked();

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    // Under lock().
    rdma_cm_id *id_ = nullptr;
    bool shared_ = false;  // bound by BindShared: the id has RDMA_OPTION_ID_REUSEADDR
    kit::ComPtr<QueuePair> qp_;
    std::vector<uint8_t> connect_data_;  // the request's private data, until rdma_connect sends it
    ULONG ask_inbound_ = 0, ask_outbound_ = 0;
    uint64_t attempts_ = 0;  // Connect calls so far (a deadline names its attempt)
};

class Listener : public kit::Listener<Request, Connector>, public CmEndpoint {
public:
    Listener(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file);
    ~Listener() override;

    bool TryHold() override { return kit::Listener<Request, Connector>::TryHold(); }
    void Unhold() override { kit::Listener<Request, Connector>::Unhold(); }
    void OnCmEvent(rdma_cm_id *id, const rdma_cm_event &e, const std::vector<uint8_t> &data) override;

private:
    HRESULT BindLocked(const kit::IpAddress &want) override;
    HRESULT ListenLocked() override;
    Connector *OwnConnector(IUnknown *u) override { return Connector::Find(u); }
    size_t HardQueueBound() const override { return 1024; }  // rdma_ucm's max_backlog by default
    void OnFinalRelease() override;

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    rdma_cm_id *id_ = nullptr;  // under lock()
};

// rdma_cm's addresses as ND's.
kit::IpAddress FromCm(const sockaddr *sa);
HRESULT BindStatus(int err);
void SetAckTimeout(rdma_cm_id *id);

}  // namespace opennd::verbs
