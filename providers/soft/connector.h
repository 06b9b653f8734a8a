// Connection setup and teardown (SPI §6) for the software provider.
//
// Same-host peers meet on the listener's CM socket (cm_socket.h). The active
// side creates the shared channel and sends a Request carrying it and its
// wake descriptor (SCM_RIGHTS: only the process that completes this
// exchange gets them; connection.h says how waking works) and its memory-
// region table's descriptor number (a peer with ptrace access fetches it).
// The passive side answers Accept (its own wake descriptor) or Reject; CompleteConnect sends Ready. The CM
// socket stays open for the connection's life: Disconnect, Terminate and the
// peer's death (EOF) arrive on it, handled by the engine's progress thread.
//
// Locking: the kit connector's lock() guards the state; QP and overlapped
// calls are made under it (lock order connector -> QP -> CQ; nothing calls
// back into a connector).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "connection.h"
#include "progress_engine.h"
#include "opennd/kit/address.h"
#include "opennd/kit/connector.h"
#include "queue_pair.h"

namespace soft {

// A connection request received by a listener, not yet handed to a connector.
struct ConnRequest {
    std::shared_ptr<Connection> conn;
    CmMessage message;
    opennd::kit::IpAddress local;  // the address it was made to
    uint64_t peer = 0;             // who asked: a same-host peer's uid, a hash of a remote IP
};

// The kit's connector (state machine, checks, private data, read limits)
// over the CM socket or the MPA exchange.
class Connector : public opennd::kit::Connector, public Watched {
public:
    Connector(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file, const ND2_ADAPTER_INFO &info);
    ~Connector() override;
    static Connector *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    // Listener side: takes a request (the connector is Fresh()).
    void Adopt(ConnRequest request);

    // Watched
    bool TryRef() override { return TryHold(); }  // the application's last Release still returns 0
    void Unref() override { Unhold(); }
    void OnReadable(int fd) override;

private:
    void OnFinalRelease() override;
    // opennd::kit::Connector's transport hooks (connector.cpp), under lock().
    bool OwnsQueuePair(IUnknown *qp) override;
    HRESULT BindLocked(const opennd::kit::IpAddress &want) override;
    HRESULT BindSharedLocked(const opennd::kit::IpAddress &want) override;
    HRESULT ConnectLocked(IUnknown *qp, const opennd::kit::IpAddress &dest, ULONG inbound, ULONG outbound,
                          const void *private_data, ULONG private_size, OVERLAPPED *ov) override;
    HRESULT CompleteConnectLocked() override;
    HRESULT AcceptLocked(IUnknown *qp, const void *private_data, ULONG private_size, OVERLAPPED *ov) override;
    HRESULT RejectLocked(const void *private_data, ULONG private_size) override;
    void DisconnectLocked() override;
    void AbandonAcceptLocked() override;
    void ConnectOverLocked(HRESULT *status) override;
    void AcceptOverLocked() override;
    void ConnectionOverLocked() override;

    // Events (connector_events.cpp), under lock().
    void ReadCmLocked(int fd);
    bool PeerReachesUsLocked(const CmMessage &m);
    void HandleMessageLocked(const CmMessage &m, int *fds, int nfds);
    void HandleClosedLocked();
    void StopWatchingLocked();
    // Over TCP (connector_tcp.cpp).
    // The request is out: remember it and watch fd (the CM socket, or the
    // TCP stream) for the answer.
    void StartConnectingLocked(std::shared_ptr<Connection> conn, QueuePair *qp, const opennd::kit::IpAddress &dest,
                               OVERLAPPED *ov, int fd);
    HRESULT ConnectTcpLocked(QueuePair *qp, const opennd::kit::IpAddress &dest, ULONG inbound, ULONG outbound,
                             const VOID *private_data, ULONG private_size, OVERLAPPED *ov);
    void OnTcpLocked();
    void TcpHandshakeLocked();
    HRESULT AcceptTcpLocked(QueuePair *qp, const CmMessage &m, OVERLAPPED *ov);
    // The end of Accept on either transport, once the reply went out (`sent`):
    // the overlapped begins and the QP is ours, or the QP is let go.
    HRESULT AcceptSentLocked(QueuePair *qp, bool sent, OVERLAPPED *ov);
    void RejectTcpLocked(const CmMessage &m);

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    int port_fd_ = -1;            // reservation of local_
    bool shared_ = false;         // port_fd_ shares local_ (BindSharedLocked)
    int watched_fd_ = -1;
    std::shared_ptr<Connection> conn_;
    opennd::kit::ComPtr<QueuePair> qp_;
    uint64_t accept_deadline_ms_ = 0;  // Accepting: when it fails ND_IO_TIMEOUT (AcceptTimeoutMs)
};

}  // namespace soft
