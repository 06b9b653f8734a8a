// Connection setup and teardown with bounded waits: the steps over a
// connector (for users that build their own queue pairs), a Connection
// that owns a CQ, a QP and a connector, and a Listener.
#pragma once

#include <cstdint>

#include "common/await.h"
#include "common/com_ptr.h"
#include "common/status.h"
#include "ndspi.h"
#include "opennd/ip_address.h"

namespace opennd::client {

// What Connect and Accept offer the peer.
struct ConnectParams {
    const void *private_data = nullptr;
    ULONG private_data_size = 0;
    ULONG inbound_read_limit = 8;
    ULONG outbound_read_limit = 8;
};

// Each step waits until `d` at most (Await: cancelled and collected past it).
Status Connect(IND2Connector *c, IND2QueuePair *qp, const opennd::net::IpAddress &dest, const ConnectParams &p,
               Deadline d);
Status CompleteConnect(IND2Connector *c, Deadline d);
Status Accept(IND2Connector *c, IND2QueuePair *qp, const ConnectParams &p, Deadline d);
Status Disconnect(IND2Connector *c, Deadline d);

struct QueueShape {
    ULONG cq_depth = 128;
    ULONG receive_depth = 64;
    ULONG initiator_depth = 64;
    ULONG receive_sge = 4;
    ULONG initiator_sge = 4;
    ULONG inline_size = 0;
    void *context = nullptr;  // the QP's, in each of its completions
};

// One CQ (both queues complete there), one QP and one connector. Members
// are declared in creation order, so they are released connector first,
// then the QP, then the CQ it completes to.
struct Connection {
    ComPtr<IND2CompletionQueue> cq;
    ComPtr<IND2QueuePair> qp;
    ComPtr<IND2Connector> connector;

    // Creates the CQ and QP on `adapter`, and a connector on `file` unless
    // one is set already (a listener's, holding a request).
    Status Open(IND2Adapter *adapter, HANDLE file, const QueueShape &shape);
    // Connect, then CompleteConnect, each bounded by `d`.
    Status Connect(const opennd::net::IpAddress &dest, const ConnectParams &p, Deadline d);
    Status Accept(const ConnectParams &p, Deadline d) { return client::Accept(connector, qp, p, d); }
    Status Disconnect(Deadline d) { return client::Disconnect(connector, d); }
    // Releases them in the destructor's order (an assignment from an empty
    // Connection would release the CQ first).
    void Reset() {
        connector.reset();
        qp.reset();
        cq.reset();
    }
};

class Listener {
public:
    // CreateListener on (adapter, file), Bind to `local` (port 0: one is
    // picked), Listen(backlog); port() is the bound port.
    Status Listen(IND2Adapter *adapter, HANDLE file, const opennd::net::IpAddress &local, ULONG backlog);
    // The next connection request into `c`, waiting until `d` at most.
    Status GetConnectionRequest(IND2Connector *c, Deadline d);

    IND2Listener *get() const { return listener_.get(); }
    uint16_t port() const { return port_; }
    ComPtr<IND2Listener> Share() const { return listener_.Share(); }

private:
    ComPtr<IND2Listener> listener_;
    uint16_t port_ = 0;
};

}  // namespace opennd::client
