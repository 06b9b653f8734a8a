// The NDK object types other than the adapter. Each wraps the ND2 object of
// the same role (the PD groups; ND2 has none) and is created on the
// consumer's thread by a Create call of its parent's dispatch table.
#pragma once

#include <mutex>

#include "adapter.h"
#include "opennd/nd_extensions.h"

namespace opennd::ndk {

extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch;

class SharedEndpoint;

class Pd final : public Object {
public:
    explicit Pd(Adapter *adapter);
    NDK_PD *pub() { return &face_.pub; }

private:
    Face<NDK_PD> face_;
};

class Cq final : public Object {
public:
    Cq(Adapter *adapter, IND2CompletionQueue *nd, NDK_FN_CQ_NOTIFICATION_CALLBACK notify, void *notify_context);
    ~Cq() override;
    NDK_CQ *pub() { return &face_.pub; }
    IND2CompletionQueue *nd() const { return nd_; }
    // The provider's IOpenNdCompletionQueueExt, if its CQ answers it.
    IOpenNdCompletionQueueExt *ext() const { return ext_; }
    void Arm(ULONG type);

    IND2Overlapped *Overlapped() override { return nd_; }
    void OnRequestDone(Request *request, HRESULT status) override;
    void StopWork() override;

private:
    Face<NDK_CQ> face_;
    IND2CompletionQueue *nd_;
    IOpenNdCompletionQueueExt *ext_ = nullptr;
    NDK_FN_CQ_NOTIFICATION_CALLBACK notify_;
    void *notify_context_;
    // Arming (NdkArmCq may race with the dispatcher's notification handling).
    // Each arm round issues at most one ND2 Notify per type; the first
    // Notify of a round to complete ends it and, if armed, fires the callback.
    std::mutex arm_mu_;
    bool armed_ = false;
    uint64_t round_ = 0;
    unsigned round_types_ = 0;  // bit per NDK_CQ_NOTIFY_* with a Notify in this round
    unsigned merged_types_ = 0; // bit per type: an arm merged into this round's Notify
};

// The request context of what this layer posts for itself (a Read's local
// invalidation, qp.cpp): its completions are not the consumer's, and
// GetCqResults drops them.
inline char kInternalRequestTag;
inline void *const kInternalRequest = &kInternalRequestTag;

// An MR: a registration (NdkRegisterMr) over an IND2MemoryRegion, or a
// fast-register MR (NdkCreateMr(FastRegister = TRUE)) over an
// IND2MemoryWindow that IOpenNdQueuePairExt::FastRegister binds over the
// pages' logical address mapping, at the consumer's virtual address.
class Mr final : public Object {
public:
    Mr(Adapter *adapter, IND2MemoryRegion *nd);
    Mr(Adapter *adapter, IND2MemoryWindow *fast);
    ~Mr() override;
    NDK_MR *pub() { return &face_.pub; }
    IND2MemoryRegion *nd() const { return nd_; }  // null for a fast-register MR
    IND2MemoryWindow *fast() const { return fast_; }  // null for a registration

    // NdkInitializeFastRegisterMr's values: pages (0 until it is called),
    // and whether remote access may be granted.
    ULONG fast_pages() const { return fast_pages_; }
    bool fast_remote() const { return fast_remote_; }
    void InitializeFast(ULONG pages, bool remote) {
        fast_pages_ = pages;
        fast_remote_ = remote;
    }

    IND2Overlapped *Overlapped() override { return nd_; }
    void StopWork() override;

private:
    Face<NDK_MR> face_;
    IND2MemoryRegion *nd_ = nullptr;
    IND2MemoryWindow *fast_ = nullptr;
    ULONG fast_pages_ = 0;
    bool fast_remote_ = false;
};

class Mw final : public Object {
public:
    Mw(Adapter *adapter, IND2MemoryWindow *nd);
    ~Mw() override;
    NDK_MW *pub() { return &face_.pub; }
    IND2MemoryWindow *nd() const { return nd_; }

private:
    Face<NDK_MW> face_;
    IND2MemoryWindow *nd_;
};

class Srq final : public Object {
public:
    Srq(Adapter *adapter, IND2SharedReceiveQueue *nd, ULONG threshold, NDK_FN_SRQ_NOTIFICATION_CALLBACK notify,
        void *notify_context);
    ~Srq() override;
    NDK_SRQ *pub() { return &face_.pub; }
    IND2SharedReceiveQueue *nd() const { return nd_; }
    // A notification is owed from now on (one callback per arm); returns
    // whether one already was. Forgive withdraws it (a Modify that failed).
    bool Owe();
    void Forgive();
    // Starts an ND2 Notify for an owed notification that no Notify in flight
    // serves (if a callback was given).
    void Issue();

    IND2Overlapped *Overlapped() override { return nd_; }
    void OnRequestDone(Request *request, HRESULT status) override;
    void StopWork() override;

private:
    Face<NDK_SRQ> face_;
    IND2SharedReceiveQueue *nd_;
    NDK_FN_SRQ_NOTIFICATION_CALLBACK notify_;
    void *notify_context_;
    std::mutex arm_mu_;
    bool armed_ = false;           // a notification is owed to the consumer
    bool notify_pending_ = false;  // an ND2 Notify is in flight
};

class Qp final : public Object {
public:
    Qp(Adapter *adapter, IND2QueuePair *nd);
    ~Qp() override;
    NDK_QP *pub() { return &face_.pub; }
    IND2QueuePair *nd() const { return nd_; }
    // The provider's IOpenNdQueuePairExt, if its adapter has extensions.
    IOpenNdQueuePairExt *ext() const { return ext_; }

    void StopWork() override;

private:
    Face<NDK_QP> face_;
    IND2QueuePair *nd_;
    IOpenNdQueuePairExt *ext_ = nullptr;
};

class Connector final : public Object {
public:
    Connector(Adapter *adapter, IND2Connector *nd);
    ~Connector() override;
    NDK_CONNECTOR *pub() { return &face_.pub; }
    IND2Connector *nd() const { return nd_; }

    // After Connect/Accept is under way: the QP may not finish closing first.
    void UseQp(Qp *qp);
    // Binds to the endpoint's address, once (a connector whose attempt
    // failed stays bound); the endpoint may not finish closing first.
    HRESULT UseEndpoint(SharedEndpoint *endpoint);
    // CompleteConnect/Accept succeeded: watch for the peer's disconnect.
    void WatchDisconnect();
    void SetDisconnectEvent(NDK_FN_DISCONNECT_EVENT_CALLBACK event, void *context);
    // Sets or clears the mark of a local Disconnect; the previous mark.
    bool MarkLocalDisconnect(bool on) { return local_disconnect_.exchange(on); }

    IND2Overlapped *Overlapped() override { return nd_; }
    void OnRequestDone(Request *request, HRESULT status) override;
    void StopWork() override;

private:
    Face<NDK_CONNECTOR> face_;
    IND2Connector *nd_;
    std::mutex mu_;
    Qp *qp_ = nullptr;
    SharedEndpoint *endpoint_ = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK disconnect_event_ = nullptr;
    void *disconnect_context_ = nullptr;
    std::atomic<bool> local_disconnect_{false};
    bool disconnect_reported_ = false;  // dispatcher only
};

// A local address and port several connectors connect from
// (shared_endpoint.cpp): an ND2 connector bound to it by the provider's
// IOpenNdConnectorExt::BindShared and never connected, which keeps the
// address while the endpoint is open.
class SharedEndpoint final : public Object {
public:
    SharedEndpoint(Adapter *adapter, IND2Connector *holder, const sockaddr_storage &address, ULONG length);
    ~SharedEndpoint() override;
    NDK_SHARED_ENDPOINT *pub() { return &face_.pub; }
    IND2Connector *nd() const { return holder_; }
    const sockaddr *address() const { return reinterpret_cast<const sockaddr *>(&address_); }
    ULONG address_length() const { return length_; }

private:
    Face<NDK_SHARED_ENDPOINT> face_;
    IND2Connector *holder_;
    sockaddr_storage address_;
    ULONG length_;
};

// Binds `nd` to `address` shared (IOpenNdConnectorExt): ND_NOT_SUPPORTED
// from a provider without the extension.
HRESULT BindShared(IND2Connector *nd, const sockaddr *address, ULONG length);

class Listener final : public Object {
public:
    Listener(Adapter *adapter, IND2Listener *nd, NDK_FN_CONNECT_EVENT_CALLBACK event, void *context);
    ~Listener() override;
    NDK_LISTENER *pub() { return &face_.pub; }
    IND2Listener *nd() const { return nd_; }
    // Waits for the next connection request (one GetConnectionRequest at a time).
    void Next();
    void Pause(bool pause) { paused_.store(pause); }

    IND2Overlapped *Overlapped() override { return nd_; }
    void OnRequestDone(Request *request, HRESULT status) override;
    void StopWork() override;
    void Quiesce() override;

private:
    Face<NDK_LISTENER> face_;
    IND2Listener *nd_;
    NDK_FN_CONNECT_EVENT_CALLBACK event_;
    void *event_context_;
    std::atomic<bool> paused_{false};
};

}  // namespace opennd::ndk
