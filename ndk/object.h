// The NDK object base: the public face a consumer sees, the overlapped
// request record, and the lifecycle state every object shares.
//
// Every NDK object wraps the ND2 object of the same role (PD excepted: ND2
// has none). Asynchronous ND2 calls (Register, Connect, Notify, ...) carry a
// Request whose OVERLAPPED completes on the adapter's completion port; the
// adapter's dispatcher thread turns it into the NDK callback (adapter.h).
//
// Lifecycle (all fields guarded by the adapter's mutex):
//  - inflight: requests issued and not yet handled, the handler (and so the
//    consumer callback) included; a close cannot complete while it is > 0;
//  - dependents: objects that name this one as antecedent (children, QPs of
//    a CQ, connectors of a QP or listener); a close waits for them too;
//  - closing: NdkCloseXxx was called; finished: the close is being completed.
#pragma once

#include <atomic>
#include <vector>

#include "ndkpi.h"
#include "ndspi.h"

namespace opennd::ndk {

class Adapter;
class Object;

// What the consumer holds: the NDK struct (header + dispatch pointer) followed
// by a pointer back to the implementation. `pub` is the first member of a
// standard-layout struct, so NDK_xxx* and Face<NDK_xxx>* convert both ways.
template <class Pub>
struct Face {
    Pub pub;
    Object *self;

    static Face *Of(Pub *p) { return reinterpret_cast<Face *>(p); }
};

// The object behind any NDK object header, or nullptr for an unknown type.
Object *FromHeader(NDK_OBJECT_HEADER *header);

enum class RequestKind {
    Consumer,          // a consumer request: answered by its REQUEST_COMPLETION
    CompleteConnect,   // consumer request that arms disconnect events when it succeeds
    Accept,            // same
    CqNotify,          // CQ Notify behind NdkArmCq
    SrqNotify,         // SRQ Notify behind the SRQ notification callback
    ConnectionRequest, // listener GetConnectionRequest behind connect events
    DisconnectNotify,  // connector NotifyDisconnect behind disconnect events
    Kick,              // no ND2 call: re-checks whether a pending close can complete
};

// One outstanding overlapped call. The OVERLAPPED comes first so the
// dispatcher gets the Request back from the OVERLAPPED* of a port packet.
struct Request {
    OVERLAPPED ov{};
    Object *owner = nullptr;
    RequestKind kind = RequestKind::Consumer;
    NDK_FN_REQUEST_COMPLETION done = nullptr;
    void *context = nullptr;
    bool synthetic = false;      // posted by the NDK layer itself: status below,
    HRESULT status = ND_SUCCESS; // no GetOverlappedResult
    uint64_t round = 0;          // CqNotify: the arm round it belongs to
    IND2Connector *connector = nullptr; // ConnectionRequest: the connector that takes it
};

class Object {
public:
    Object(Adapter *adapter, NDK_OBJECT_TYPE type);
    virtual ~Object();  // releases the wrapped ND2 objects
    Object(const Object &) = delete;
    Object &operator=(const Object &) = delete;

    Adapter *adapter() const { return adapter_; }
    NDK_OBJECT_TYPE type() const { return type_; }
    bool closing() const { return closing_.load(std::memory_order_acquire); }

    // The ND2 object whose GetOverlappedResult answers this object's requests.
    virtual IND2Overlapped *Overlapped() { return nullptr; }
    // Dispatcher thread, no lock held: a request of this object completed
    // with `status` (the final ND2 status). Calls the consumer's callback.
    virtual void OnRequestDone(Request *request, HRESULT status);
    // NdkCloseXxx was called: cancel and flush (outside the lock). Requests
    // cancelled here still reach OnRequestDone.
    virtual void StopWork() {}
    // Closing and nothing in flight any more (dependents may remain).
    virtual void Quiesce() {}

protected:
    // Fills the public header; the dispatch table is set by the derived class.
    void InitHeader(NDK_OBJECT_HEADER *header);

private:
    friend class Adapter;
    Adapter *adapter_;
    const NDK_OBJECT_TYPE type_;
    int inflight_ = 0;
    int dependents_ = 0;
    std::atomic<bool> closing_{false};
    bool finished_ = false;
    bool quiesced_ = false;
    NDK_FN_CLOSE_COMPLETION close_done_ = nullptr;
    void *close_context_ = nullptr;
    std::vector<Object *> antecedents_;
    // The packet that makes the dispatcher re-check a pending close
    // (Adapter::KickLocked): part of the object, so a close never waits for
    // memory. kick_posted_: it is on its way (guarded by the adapter's lock).
    Request kick_;
    bool kick_posted_ = false;
};

// The implementation type behind a public pointer (no checks: the data path).
template <class Impl, class Pub>
Impl *Self(Pub *p) {
    return static_cast<Impl *>(Face<Pub>::Of(p)->self);
}

// NDK_FN_CLOSE_OBJECT for every object type but the adapter.
NTSTATUS CloseObject(NDK_OBJECT_HEADER *header, NDK_FN_CLOSE_COMPLETION done, PVOID context);
// NDK_FN_QUERY_EXTENSION_INTERFACE (extension.cpp): OpenND's one extension,
// the ND2 object under an NDK object (opennd/ndk_extensions.h).
NTSTATUS QueryExtension(NDK_OBJECT_HEADER *header, GUID *id, NDK_VERSION version, NDK_EXTENSION_INTERFACE *out);

}  // namespace opennd::ndk
