// IND2Connector's state machine for every provider (SPI §6, R110-R143):
// which call is allowed in which state and what it answers otherwise, the
// argument checks in the spec's order, private data and read limits
// (clamped, R120), the overlapped Connect/CompleteConnect/Accept/
// NotifyDisconnect/Disconnect requests, and what cancelling does to a
// connection being made. A provider supplies the transport: the *Locked
// hooks send what the call means to the peer, and it reports what the peer
// does through the event methods below.
//
//   Idle -Bind-> Bound -Connect-> Connecting -reply-> Replied -CompleteConnect-> Connected
//   Idle -(listener hands a request)-> Requested -Accept-> Accepting -peer ready-> Connected
//   Connected -Disconnect / peer gone-> Disconnected;  Reject, failure, release -> Closed
//   Connecting -refused-> Bound (the connector may try again)
//
// Locking: lock() guards the state; hooks and events run under it. Setup
// path only.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "ndspi.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"

namespace opennd::kit {

class Connector : public Unknown<IND2Connector> {
public:
    enum class State { Idle, Bound, Connecting, Replied, Requested, Accepting, Connected, Disconnected, Closed };

    // `info`: the adapter's private-data sizes and read limits.
    Connector(HANDLE overlapped_file, const ND2_ADAPTER_INFO &info);
    bool Valid() const { return requests_.Valid(); }
    // True if a listener may hand this connector a request now (Idle).
    bool Fresh();

    // IND2Overlapped
    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() final;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) final {
        return requests_.Result(ov, wait);
    }
    // IND2Connector
    HRESULT STDMETHODCALLTYPE Bind(const sockaddr *address, ULONG size) final;
    HRESULT STDMETHODCALLTYPE Connect(IUnknown *qp, const sockaddr *dest, ULONG dest_size, ULONG inbound_limit,
                                      ULONG outbound_limit, const VOID *private_data, ULONG private_size,
                                      OVERLAPPED *ov) final;
    HRESULT STDMETHODCALLTYPE CompleteConnect(OVERLAPPED *ov) final;
    HRESULT STDMETHODCALLTYPE Accept(IUnknown *qp, ULONG inbound_limit, ULONG outbound_limit,
                                     const VOID *private_data, ULONG private_size, OVERLAPPED *ov) final;
    HRESULT STDMETHODCALLTYPE Reject(const VOID *private_data, ULONG private_size) final;
    HRESULT STDMETHODCALLTYPE GetReadLimits(ULONG *inbound, ULONG *outbound) final;
    HRESULT STDMETHODCALLTYPE GetPrivateData(VOID *data, ULONG *size) final;
    HRESULT STDMETHODCALLTYPE GetLocalAddress(sockaddr *address, ULONG *size) final;
    HRESULT STDMETHODCALLTYPE GetPeerAddress(sockaddr *address, ULONG *size) final;
    HRESULT STDMETHODCALLTYPE NotifyDisconnect(OVERLAPPED *ov) final;
    HRESULT STDMETHODCALLTYPE Disconnect(OVERLAPPED *ov) final;
    // IOpenNdConnectorExt::BindShared (opennd/nd_extensions.h): Bind's
    // rules, then BindSharedLocked.
    HRESULT BindShared(const sockaddr *address, ULONG size);
    // IUnknown: also answers IID_IOpenNdConnectorExt (a tear-off).
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override;

protected:
    std::mutex &lock() { return mu_; }
    OverlappedRequests &requests() { return requests_; }

    // ---- The transport (under lock(), arguments checked, state right) ----
    // Is `qp` a queue pair of this adapter (else ND_INVALID_PARAMETER_1)?
    virtual bool OwnsQueuePair(IUnknown *qp) = 0;
    // Bind from Idle: take `want` (port 0: any) and set local_. Success moves to Bound.
    virtual HRESULT BindLocked(const IpAddress &want) = 0;
    // BindShared from Idle: as BindLocked, the address shared with the
    // other connectors bound to it this way. Default: ND_NOT_SUPPORTED.
    virtual HRESULT BindSharedLocked(const IpAddress &) { return ND_NOT_SUPPORTED; }
    // Connect from Idle or Bound, with read limits already clamped to the
    // adapter's: send the request. ND_PENDING once StartConnectingLocked
    // ran; any other status is Connect's return (a failure reported through
    // `ov` is requests().CompleteNow's ND_PENDING).
    virtual HRESULT ConnectLocked(IUnknown *qp, const IpAddress &dest, ULONG inbound, ULONG outbound,
                                  const void *private_data, ULONG private_size, OVERLAPPED *ov) = 0;
    // CompleteConnect from Replied: tell the peer. A failure ends the
    // connection (the base calls PeerGoneLocked) and completes the request.
    virtual HRESULT CompleteConnectLocked() = 0;
    // Accept from Requested, with inbound_ and outbound_ negotiated: send
    // the reply. ND_PENDING once StartAcceptingLocked ran.
    virtual HRESULT AcceptLocked(IUnknown *qp, const void *private_data, ULONG private_size, OVERLAPPED *ov) = 0;
    // Reject from Requested or Replied: tell the peer and let the
    // connection go. Success moves to Closed; a failure changes nothing.
    virtual HRESULT RejectLocked(const void *private_data, ULONG private_size) = 0;
    // Disconnect from Connected: tell the peer (PeerGoneLocked follows).
    virtual void DisconnectLocked() = 0;
    // CancelOverlappedRequests while Accepting: tell the initiator, which
    // hears of it as of a disconnect (AcceptOverLocked follows).
    virtual void AbandonAcceptLocked() = 0;
    // A Connect attempt is over without a connection (refused, failed,
    // cancelled): undo the attempt. May turn a refusal into another status
    // (the connector cannot take its address again: ND_CONNECTION_ABORTED).
    virtual void ConnectOverLocked(HRESULT *status) = 0;
    // An Accept is over without a connection: the queue pair closes.
    virtual void AcceptOverLocked() = 0;
    // The connection is over (either side): the queue pair's requests
    // complete ND_CANCELED.
    virtual void ConnectionOverLocked() = 0;
    // After every call above has released lock(): a transport that must
    // not act under it (it calls into another connector, or blocks) queues
    // the work in its hooks and does it here.
    virtual void OnUnlocked() {}

    // ---- Events (under lock()) ----
    void StartConnectingLocked(const IpAddress &dest, OVERLAPPED *ov);
    // The passive side accepted: its private data and the limits it grants.
    void RepliedLocked(const void *private_data, ULONG private_size, ULONG inbound, ULONG outbound);
    // The passive side rejected (with its private data, readable by
    // GetPrivateData) or the attempt failed: Connect completes `status`.
    void RejectedLocked(const void *private_data, ULONG private_size);
    void ConnectFailedLocked(HRESULT status);
    // A listener hands this (Idle) connector a request: the initiator's
    // address, private data and the read limits it asked for.
    void RequestedLocked(const IpAddress &local, const IpAddress &peer, const void *private_data,
                         ULONG private_size, ULONG peer_inbound, ULONG peer_outbound);
    // The initiator went away before Accept or Reject: they answer
    // ND_CONNECTION_ABORTED.
    void InitiatorGoneLocked() { aborted_ = true; }
    void StartAcceptingLocked(OVERLAPPED *ov);
    // The initiator completed: Accept completes ND_SUCCESS.
    void AcceptedLocked();
    // The Accept is over without a connection; returns its request for the
    // caller to complete with the reason.
    OVERLAPPED *EndAcceptLocked();
    // The connection is over: NotifyDisconnect completes.
    void PeerGoneLocked();
    // The other side went away, whatever the state: a Connect fails
    // `while_connecting`, an Accept ND_CONNECTION_ABORTED, a connection is
    // over, a request waiting for Accept is abandoned.
    void PeerLeftLocked(HRESULT while_connecting);
    void ClosedLocked() { state_ = State::Closed; }

    // Under lock().
    State state_ = State::Idle;
    IpAddress local_, peer_;
    ULONG inbound_ = 0, outbound_ = 0;  // negotiated read limits

private:
    // Declared before a call's lock: runs OnUnlocked once it is released.
    struct AfterCall {
        Connector *c;
        ~AfterCall() { c->OnUnlocked(); }
    };
    void SetPeerDataLocked(const void *data, ULONG size);
    HRESULT BindAs(const sockaddr *address, ULONG size, bool shared);

    OverlappedRequests requests_;
    const ULONG max_caller_data_, max_callee_data_, max_inbound_, max_outbound_;
    std::mutex mu_;
    bool aborted_ = false;             // the initiator gave up (passive side)
    bool have_peer_data_ = false;      // peer_data_ holds a request, reply or reject
    std::vector<uint8_t> peer_data_;
    ULONG peer_inbound_ = 0, peer_outbound_ = 0;  // the limits the initiator asked for
    OVERLAPPED *connect_ov_ = nullptr, *accept_ov_ = nullptr;
    std::vector<OVERLAPPED *> notify_ovs_;
};

}  // namespace opennd::kit
