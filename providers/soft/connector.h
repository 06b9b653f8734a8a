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
// Locking: mu_ guards the state; QP and overlapped calls are made under it
// (lock order connector -> QP -> CQ; nothing calls back into a connector).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "connection.h"
#include "engine.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"
#include "queue_pair.h"

namespace soft {

// A connection request received by a listener, not yet handed to a connector.
struct ConnRequest {
    std::shared_ptr<Connection> conn;
    CmMessage message;
    opennd::kit::IpAddress local;  // the address it was made to
    uint64_t peer = 0;             // who asked: a same-host peer's uid, a hash of a remote IP
};

class Connector : public opennd::kit::Unknown<IND2Connector>, public Watched {
public:
    enum class State { Idle, Bound, Connecting, Replied, Requested, Accepting, Connected, Disconnected, Closed };

    Connector(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file);
    ~Connector() override;
    bool Valid() const { return requests_.Valid(); }
    static Connector *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    // Listener side: true if this connector can take a request now.
    bool Fresh();
    void Adopt(ConnRequest request);

    // Watched
    bool TryRef() override { return TryHold(); }  // the application's last Release still returns 0
    void Unref() override { Unhold(); }
    void OnReadable(int fd) override;

    // IND2Overlapped
    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override {
        return requests_.Result(ov, wait);
    }
    // IND2Connector
    HRESULT STDMETHODCALLTYPE Bind(const sockaddr *address, ULONG size) override;
    HRESULT STDMETHODCALLTYPE Connect(IUnknown *qp, const sockaddr *dest, ULONG dest_size, ULONG inbound_limit,
                                      ULONG outbound_limit, const VOID *private_data, ULONG private_size,
                                      OVERLAPPED *ov) override;
    HRESULT STDMETHODCALLTYPE CompleteConnect(OVERLAPPED *ov) override;
    HRESULT STDMETHODCALLTYPE Accept(IUnknown *qp, ULONG inbound_limit, ULONG outbound_limit,
                                     const VOID *private_data, ULONG private_size, OVERLAPPED *ov) override;
    HRESULT STDMETHODCALLTYPE Reject(const VOID *private_data, ULONG private_size) override;
    HRESULT STDMETHODCALLTYPE GetReadLimits(ULONG *inbound, ULONG *outbound) override;
    HRESULT STDMETHODCALLTYPE GetPrivateData(VOID *data, ULONG *size) override;
    HRESULT STDMETHODCALLTYPE GetLocalAddress(sockaddr *address, ULONG *size) override;
    HRESULT STDMETHODCALLTYPE GetPeerAddress(sockaddr *address, ULONG *size) override;
    HRESULT STDMETHODCALLTYPE NotifyDisconnect(OVERLAPPED *ov) override;
    HRESULT STDMETHODCALLTYPE Disconnect(OVERLAPPED *ov) override;

private:
    void OnFinalRelease() override;
    // requires mu_
    void ReadCmLocked(int fd);
    bool PeerReachesUsLocked(const CmMessage &m);
    void HandleMessageLocked(const CmMessage &m, int *fds, int nfds);
    void HandleClosedLocked();
    void AbandonLocked(HRESULT connect_status);
    // The Accept is over without a connection: the QP closes; returns the
    // Accept's request (to complete, if the caller does not cancel it).
    OVERLAPPED *EndAcceptLocked();
    void PeerGoneLocked();
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
    opennd::kit::OverlappedRequests requests_;
    std::mutex mu_;
    State state_ = State::Idle;
    bool aborted_ = false;        // the active side gave up (passive view)
    bool have_peer_data_ = false; // peer_msg_ holds a request, reply or reject
    int port_fd_ = -1;            // reservation of local_
    int watched_fd_ = -1;
    opennd::kit::IpAddress local_, peer_;
    std::shared_ptr<Connection> conn_;
    opennd::kit::ComPtr<QueuePair> qp_;
    CmMessage peer_msg_{};
    ULONG inbound_ = 0, outbound_ = 0;  // negotiated read limits
    OVERLAPPED *connect_ov_ = nullptr, *accept_ov_ = nullptr;
    uint64_t accept_deadline_ms_ = 0;  // Accepting: when it fails ND_IO_TIMEOUT (AcceptTimeoutMs)
    std::vector<OVERLAPPED *> notify_ovs_;
};

}  // namespace soft
