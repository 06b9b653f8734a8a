// What rdma_cm tells a connector (connection.h): each event moves the
// kit's state machine; and what releasing a connector tells the peer.
#include "connection.h"
#include "opennd/log.h"
#include "status.h"

namespace opennd::verbs {

void Connector::OnCmEvent(rdma_cm_id *id, const rdma_cm_event &e, const std::vector<uint8_t> &data) {
    std::lock_guard<std::mutex> guard(lock());
    if (id != id_) return;  // an id this connector has let go of
    const auto *pd = data.empty() ? nullptr : data.data();
    const auto pd_size = static_cast<ULONG>(data.size());
    OPENND_LOG(Debug, "ndverbs: connector: %s (status %d) in state %d", rdma_event_str(e.event), e.status,
               static_cast<int>(state_));
    switch (e.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        if (state_ == State::Connecting) ConnectStepLocked(e);
        break;
    case RDMA_CM_EVENT_CONNECT_RESPONSE:  // IB/RoCE: the reply; the RTU waits for CompleteConnect
        // The limits arrive in our view: responder_resources is what we serve.
        if (state_ == State::Connecting)
            RepliedLocked(pd, pd_size, e.param.conn.responder_resources, e.param.conn.initiator_depth);
        break;
    case RDMA_CM_EVENT_ESTABLISHED:
        if (state_ == State::Connecting && device_->caps().iwarp) {  // iWARP: the reply and the connection
            // iw_cm reports the reply's limits as its IRD and ORD: ours.
            qp_->SetCmId(id_);
            RepliedLocked(pd, pd_size, e.param.conn.initiator_depth, e.param.conn.responder_resources);
        } else if (state_ == State::Accepting) {
            qp_->Connected();
            AcceptedLocked();
        }
        break;
    case RDMA_CM_EVENT_REJECTED:
        if (state_ == State::Connecting)
            RejectedLocked(pd, pd_size);
        else if (state_ == State::Accepting)  // the initiator turned our reply down
            requests().Complete(EndAcceptLocked(), ND_CONNECTION_REFUSED);
        else if (state_ == State::Replied)  // the passive side abandoned its Accept
            PeerGoneLocked();
        else if (state_ == State::Requested)  // the initiator gave up
            InitiatorGoneLocked();
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL: PeerLeftLocked(ConnectFailure(e.event, e.status)); break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
        if (state_ == State::Connecting)
            ConnectFailedLocked(ConnectFailure(e.event, e.status));
        else if (state_ == State::Accepting)
            requests().Complete(EndAcceptLocked(), e.event == RDMA_CM_EVENT_UNREACHABLE ? ND_IO_TIMEOUT
                                                                                      : ND_CONNECTION_ABORTED);
        else if (state_ == State::Connected || state_ == State::Replied)
            PeerGoneLocked();
        break;
    default: break;  // TIMEWAIT_EXIT, ADDR_CHANGE
    }
}

// The port stayed down: as if the peer had left. A connection is over
// (NotifyDisconnect completes, what is posted completes ND_CANCELED), a
// Connect or Accept under way fails as an unreachable peer's does.
void Connector::OnLinkLost() {
    std::lock_guard<std::mutex> guard(lock());
    if (!id_) return;
    OPENND_LOG(Debug, "ndverbs: connector: the link stayed down in state %d", static_cast<int>(state_));
    PeerLeftLocked(ND_IO_TIMEOUT);
}

void Connector::OnFinalRelease() {
    {
        std::lock_guard<std::mutex> guard(lock());
        // Released after Connect completed but before CompleteConnect: the
        // passive side's Accept fails ND_CONNECTION_REFUSED (COMPAT).
        if (state_ == State::Replied && !device_->caps().iwarp && id_) rdma_reject(id_, nullptr, 0);
        else if ((state_ == State::Connected || state_ == State::Accepting || state_ == State::Replied) && id_)
            rdma_disconnect(id_);
        else if (state_ == State::Requested && id_)
            rdma_reject(id_, nullptr, 0);
        if (qp_) qp_->Fail();
        qp_.reset();
        requests().CancelAll();
        ClosedLocked();
        DropIdLocked();
    }
}

}  // namespace opennd::verbs
