// Listener: binds an ND address and port, accepts connection requests on
// its CM socket (progress thread) and hands each to one pending
// GetConnectionRequest, or holds it in the backlog until one comes.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "connector.h"
#include "engine.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"
#include "tcp_link.h"

namespace soft {

class Listener : public opennd::kit::Unknown<IND2Listener>, public Watched {
public:
    Listener(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file);
    ~Listener() override;
    bool Valid() const { return requests_.Valid(); }

    bool TryRef() override { return TryHold(); }  // the application's last Release still returns 0
    void Unref() override { Unhold(); }
    void OnReadable(int fd) override;

    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override {
        return requests_.Result(ov, wait);
    }
    HRESULT STDMETHODCALLTYPE Bind(const sockaddr *address, ULONG size) override;
    HRESULT STDMETHODCALLTYPE Listen(ULONG backlog) override;
    HRESULT STDMETHODCALLTYPE GetLocalAddress(sockaddr *address, ULONG *size) override;
    HRESULT STDMETHODCALLTYPE GetConnectionRequest(IUnknown *connector, OVERLAPPED *ov) override;

private:
    // An accepted socket waiting for its request: a same-host CM socket (no
    // link) or a TCP connection with its MPA handshake.
    struct Handshake {
        std::chrono::steady_clock::time_point since;
        std::shared_ptr<TcpLink> link;
        uint64_t peer = 0;  // who: the uid of a same-host peer, a hash of a remote IP
    };
    struct Waiting {
        opennd::kit::ComPtr<Connector> connector;
        OVERLAPPED *ov;
    };
    void OnFinalRelease() override;
    void AcceptAllLocked();
    void ReadRequestLocked(int fd);
    // Remote peers (listener_tcp.cpp): the bound port is a TCP listener too.
    bool ListenTcpLocked();
    void AcceptTcpLocked();
    void ReadTcpRequestLocked(int fd);
    void QueueRequestLocked(ConnRequest req);
    // True if a request from `peer` cannot be queued now: the backlog, the
    // hard bound or the peer's share is full (HardQueuedRequests).
    bool QueueFullLocked(uint64_t peer) const;
    // Watches a newly accepted socket from `peer`, first dropping
    // handshakes past kHandshakeTimeoutMs and, beyond the bounds, the
    // oldest of that peer, or of the peer holding the most.
    void AdmitLocked(int fd, std::shared_ptr<TcpLink> link, uint64_t peer);
    void DropHandshakeLocked(std::map<int, Handshake>::iterator it);
    bool DropOldestHandshakeLocked();  // false: none to drop
    void MatchLocked();
    void CloseLocked();

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    opennd::kit::OverlappedRequests requests_;
    std::mutex mu_;
    int port_fd_ = -1;
    int cm_fd_ = -1;
    bool listening_ = false;
    ULONG backlog_ = 0;
    opennd::kit::IpAddress bound_;
    std::map<int, Handshake> handshaking_;  // bounded (AdmitLocked)
    bool tcp_listening_ = false;  // port_fd_ listens for TCP peers
    std::deque<ConnRequest> backlog_queue_;
    std::deque<Waiting> waiting_;
};

}  // namespace soft
