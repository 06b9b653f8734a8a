#include "common/connection.h"

namespace opennd::client {

Status Connect(IND2Connector *c, IND2QueuePair *qp, const opennd::net::IpAddress &dest, const ConnectParams &p,
               Deadline d) {
    Overlapped ov;
    return Await(c, ov,
                 c->Connect(qp, dest.sa(), dest.length(), p.inbound_read_limit, p.outbound_read_limit,
                            p.private_data, p.private_data_size, &ov),
                 d, "Connect");
}

Status CompleteConnect(IND2Connector *c, Deadline d) {
    Overlapped ov;
    return Await(c, ov, c->CompleteConnect(&ov), d, "CompleteConnect");
}

Status Accept(IND2Connector *c, IND2QueuePair *qp, const ConnectParams &p, Deadline d) {
    Overlapped ov;
    return Await(c, ov,
                 c->Accept(qp, p.inbound_read_limit, p.outbound_read_limit, p.private_data, p.private_data_size,
                           &ov),
                 d, "Accept");
}

Status Disconnect(IND2Connector *c, Deadline d) {
    Overlapped ov;
    return Await(c, ov, c->Disconnect(&ov), d, "Disconnect");
}

Status Connection::Open(IND2Adapter *adapter, HANDLE file, const QueueShape &s) {
    HRESULT hr = adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, s.cq_depth, 0, 0, cq.put_void());
    if (FAILED(hr)) return Status(hr, "CreateCompletionQueue");
    hr = adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, s.context, s.receive_depth, s.initiator_depth,
                                  s.receive_sge, s.initiator_sge, s.inline_size, qp.put_void());
    if (FAILED(hr)) return Status(hr, "CreateQueuePair");
    if (!connector) {
        hr = adapter->CreateConnector(IID_IND2Connector, file, connector.put_void());
        if (FAILED(hr)) return Status(hr, "CreateConnector");
    }
    return Status();
}

Status Connection::Connect(const opennd::net::IpAddress &dest, const ConnectParams &p, Deadline d) {
    Status s = client::Connect(connector, qp, dest, p, d);
    return s ? client::CompleteConnect(connector, d) : s;
}

Status Listener::Listen(IND2Adapter *adapter, HANDLE file, const opennd::net::IpAddress &local, ULONG backlog) {
    HRESULT hr = adapter->CreateListener(IID_IND2Listener, file, listener_.put_void());
    if (FAILED(hr)) return Status(hr, "CreateListener");
    if (FAILED(hr = listener_->Bind(local.sa(), local.length()))) return Status(hr, "IND2Listener::Bind");
    if (FAILED(hr = listener_->Listen(backlog))) return Status(hr, "IND2Listener::Listen");
    opennd::net::IpAddress bound;
    ULONG len = sizeof bound.storage;
    if (FAILED(hr = listener_->GetLocalAddress(bound.sa(), &len)))
        return Status(hr, "IND2Listener::GetLocalAddress");
    port_ = opennd::net::Port(bound.sa());
    return Status();
}

Status Listener::GetConnectionRequest(IND2Connector *c, Deadline d) {
    Overlapped ov;
    return Await(listener_, ov, listener_->GetConnectionRequest(c, &ov), d, "GetConnectionRequest");
}

}  // namespace opennd::client
