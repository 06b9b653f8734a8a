// Listener: binds an ND address and port, accepts connection requests on
// its CM socket (progress thread) and hands each to one pending
// GetConnectionRequest, or holds it in the backlog until one comes.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "connector.h"
#include "progress_engine.h"
#include "opennd/kit/address.h"
#include "opennd/kit/listener.h"
#include "soft_limits.h"
#include "tcp_link.h"

namespace soft {

// The kit's listener (Bind/Listen order, GetConnectionRequest, the bounded
// queue of requests) over the CM socket and the TCP port.
class Listener : public opennd::kit::Listener<ConnRequest, Connector>, public Watched {
public:
    Listener(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file);
    ~Listener() override;

    bool TryRef() override { return TryHold(); }  // the application's last Release still returns 0
    void Unref() override { Unhold(); }
    void OnReadable(int fd) override;

private:
    // An accepted socket waiting for its request: a same-host CM socket (no
    // link) or a TCP connection with its MPA handshake.
    struct Handshake {
        std::chrono::steady_clock::time_point since;
        std::shared_ptr<TcpLink> link;
        uint64_t peer = 0;  // who: the uid of a same-host peer, a hash of a remote IP
    };
    void OnFinalRelease() override;
    // opennd::kit::Listener's hooks, under lock().
    HRESULT BindLocked(const opennd::kit::IpAddress &want) override;
    HRESULT ListenLocked() override;
    Connector *OwnConnector(IUnknown *connector) override;
    size_t HardQueueBound() const override { return HardQueuedRequests(); }

    void AcceptAllLocked();
    void ReadRequestLocked(int fd);
    // Remote peers (listener_tcp.cpp): the bound port is a TCP listener too.
    bool ListenTcpLocked();
    void AcceptTcpLocked();
    void ReadTcpRequestLocked(int fd);
    // Watches a newly accepted socket from `peer`, first dropping
    // handshakes past kHandshakeTimeoutMs and, beyond the bounds, the
    // oldest of that peer, or of the peer holding the most.
    void AdmitLocked(int fd, std::shared_ptr<TcpLink> link, uint64_t peer);
    void DropHandshakeLocked(std::map<int, Handshake>::iterator it);
    bool DropOldestHandshakeLocked();  // false: none to drop
    void CloseLocked();

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    int port_fd_ = -1;
    int cm_fd_ = -1;
    std::map<int, Handshake> handshaking_;  // bounded (AdmitLocked)
    bool tcp_listening_ = false;  // port_fd_ listens for TCP peers
};

}  // namespace soft
