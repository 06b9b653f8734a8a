// The NDK adapter: wraps an IND2Adapter, owns the overlapped file every child
// object uses and the completion port it is bound to, and runs the
// dispatcher thread that turns port packets into NDK callbacks.
//
// Threads and locks:
//  - consumer threads call dispatch functions; the data path (posts,
//    GetCqResults) takes no lock of this layer;
//  - the dispatcher thread is the only one that calls consumer callbacks, so
//    callbacks of one adapter are serialised (CQ notifications included) and
//    never run inside the call that caused them;
//  - mu_ guards every object's lifecycle fields (object.h) and live_. It is
//    never held while calling the consumer or an ND2 overlapped call.
#pragma once

#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_set>

#include "lam.h"
#include "object.h"
#include "translate.h"

namespace opennd::ndk {

class Adapter final : public Object {
public:
    // NdkOpenAdapterByAddress after the version check.
    static NTSTATUS Open(const sockaddr *address, ULONG length, NDK_ADAPTER **out);
    static Adapter *From(NDK_ADAPTER *p) { return Self<Adapter>(p); }

    NDK_ADAPTER *pub() { return &face_.pub; }
    IND2Adapter *nd() const { return nd_; }
    HANDLE file() const { return file_; }
    Lams &lams() { return lams_; }
    // The provider's OpenND extensions (OPENND_EXT_*, opennd/nd_extensions.h).
    ULONG extensions() const { return extensions_; }

    // ---- lifecycle ----
    // A new object: child of the adapter, dependent of each non-null antecedent.
    void Register(Object *o, Object *a1 = nullptr, Object *a2 = nullptr, Object *a3 = nullptr, Object *a4 = nullptr);
    // One more antecedent for an existing object (a connector's QP).
    void Link(Object *o, Object *antecedent);
    // NDK_FN_CLOSE_OBJECT for a child object.
    NTSTATUS Close(Object *o, NDK_FN_CLOSE_COMPLETION done, void *context);
    // NdkCloseAdapter.
    NTSTATUS CloseAdapter(NDK_FN_CLOSE_COMPLETION done, void *context);

    // ---- requests ----
    // A consumer request: `call(OVERLAPPED*)` makes the ND2 call. ND_PENDING
    // gives STATUS_PENDING and one `done` callback later; anything else is
    // returned at once (translated) and no callback follows.
    template <class Call>
    NTSTATUS Start(Object *o, RequestKind kind, NDK_FN_REQUEST_COMPLETION done, void *context, Call &&call) {
        Request *r = new (std::nothrow) Request;
        if (!r) return STATUS_INSUFFICIENT_RESOURCES;
        r->owner = o;
        r->kind = kind;
        r->done = done;
        r->context = context;
        RequestStarted(o, 2);  // the request, and a hold on `o` until call() returns
        HRESULT hr = call(&r->ov);
        EndHold(o);
        if (hr == ND_PENDING) return STATUS_PENDING;
        delete r;
        RequestEnded(o);
        return StatusFromNd(hr);
    }
    // An internal request behind event callbacks. An inline ND_SUCCESS (or any
    // inline status, with deliver_inline) is posted to the port so the
    // handler runs on the dispatcher like a pending one. False if nothing is
    // in flight: the caller disposes of `r`. A close that started meanwhile
    // (from another thread, or from the callback of this very request) may
    // have cancelled before the request existed, so it is cancelled here too.
    template <class Call>
    bool StartEvent(Object *o, Request *r, bool deliver_inline, Call &&call) {
        r->owner = o;
        RequestStarted(o, 2);  // as in Start
        HRESULT hr = call(&r->ov);
        bool started = hr == ND_PENDING;
        if (!started && (hr == ND_SUCCESS || deliver_inline)) {
            r->synthetic = true;
            r->status = hr;
            started = Post(r);
        }
        if (started && o->closing()) o->StopWork();
        EndHold(o);
        if (!started) RequestEnded(o);
        return started;
    }

private:
    Adapter(IND2Adapter *nd, HANDLE file, HANDLE port);
    ~Adapter() override;  // releases the ND2 adapter, port and file

    void Run();
    void Handle(Request *r);
    bool Post(Request *r);
    void RequestStarted(Object *o, int count = 1);
    void RequestEnded(Object *o);
    // Drops one in-flight count of `o`. The last one of a closing object
    // runs Quiesce first, while it still counts (so no other thread can
    // finish and free `o` under it). True if `o` is now finished: the caller
    // completes it.
    bool Drop(Object *o);
    // Ends the hold a thread took on `o` for the length of an ND2 call. The
    // request's completion may have run meanwhile and its callback closed
    // `o`: then the close completes on the dispatcher, after this thread has
    // let go of the object, never inline here.
    void EndHold(Object *o);
    bool ReadyLocked(const Object *o) const;
    bool AnyOpenLocked() const;
    bool KickLocked(Object *o);
    void Complete(Object *o, bool async);
    void Shutdown();  // stops and joins the dispatcher (not from it)

    Face<NDK_ADAPTER> face_;
    IND2Adapter *nd_;
    HANDLE file_;
    HANDLE port_;
    Lams lams_;  // released before the ND2 adapter
    ULONG extensions_ = 0;
    std::thread thread_;
    std::thread::id dispatcher_id_;
    std::mutex mu_;
    std::condition_variable cv_;       // live_ shrank or an object started closing
    std::unordered_set<Object *> live_; // every object created on this adapter, not yet finished
    bool exit_ = false;                // dispatcher only: the adapter's close completed
};

}  // namespace opennd::ndk
