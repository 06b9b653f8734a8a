// Adapter: object lifecycle (close rules) and the dispatcher thread.
//
// Close rules (NDKPI "object lifetime requirements"):
//  - a close completes when the object has no request in flight (their
//    callbacks have returned) and no dependent object left open;
//  - if that holds when NdkCloseXxx is called, the call completes the close
//    itself and returns STATUS_SUCCESS (no callback);
//  - otherwise it returns STATUS_PENDING and the close completion runs on the
//    dispatcher once the last request handler or dependent is gone. A close
//    called from a callback of the same object is such a case: the callback's
//    request is still in flight until it returns.
#include <algorithm>

#include "adapter.h"

#include "opennd/kit/overlapped.h"

namespace opennd::ndk {
namespace {
constexpr ULONG_PTR kIoKey = 1;
constexpr ULONG_PTR kShutdownKey = 2;
}  // namespace

void Adapter::Register(Object *o, Object *a1, Object *a2, Object *a3, Object *a4) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(o);
    for (Object *a : {static_cast<Object *>(this), a1, a2, a3, a4}) {
        if (!a) continue;
        o->antecedents_.push_back(a);
        ++a->dependents_;
    }
    cv_.notify_all();
}

void Adapter::Link(Object *o, Object *antecedent) {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::find(o->antecedents_.begin(), o->antecedents_.end(), antecedent) != o->antecedents_.end()) return;
    o->antecedents_.push_back(antecedent);
    ++antecedent->dependents_;
}

bool Adapter::ReadyLocked(const Object *o) const {
    return o->closing_.load(std::memory_order_relaxed) && !o->finished_ && o->inflight_ == 0 &&
           o->dependents_ == 0;
}

bool Adapter::AnyOpenLocked() const {
    for (const Object *o : live_)
        if (!o->closing_.load(std::memory_order_relaxed)) return true;
    return false;
}

void Adapter::RequestStarted(Object *o, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    o->inflight_ += count;
}

void Adapter::RequestEnded(Object *o) {
    if (Drop(o)) Complete(o, true);
}

bool Adapter::Drop(Object *o) {
    std::unique_lock<std::mutex> lock(mu_);
    if (o->closing_.load(std::memory_order_relaxed) && o->inflight_ == 1 && !o->quiesced_) {
        o->quiesced_ = true;
        lock.unlock();
        o->Quiesce();  // still counted: no other thread can finish (and free) `o` meanwhile
        lock.lock();
    }
    --o->inflight_;
    if (!ReadyLocked(o)) return false;
    o->finished_ = true;
    return true;
}

void Adapter::EndHold(Object *o) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        bool last = o->closing_.load(std::memory_order_relaxed) && o->inflight_ == 1;
        if (!last || KickLocked(o)) {  // the kick holds its own count
            --o->inflight_;
            return;
        }
    }
    RequestEnded(o);  // no kick (the port is closed): the close completes here after all
}

// A packet that only makes the dispatcher re-check a pending close. One
// on its way is enough: it re-checks when handled, holding its own count.
bool Adapter::KickLocked(Object *o) {
    if (o->kick_posted_) return true;
    Request &r = o->kick_;
    r = Request{};
    r.owner = o;
    r.kind = RequestKind::Kick;
    r.synthetic = true;
    ++o->inflight_;
    if (!Post(&r)) {  // the port is closed: the adapter is going
        --o->inflight_;
        return false;
    }
    o->kick_posted_ = true;
    return true;
}

NTSTATUS Adapter::Close(Object *o, NDK_FN_CLOSE_COMPLETION done, void *context) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (o->closing_.load(std::memory_order_relaxed)) return STATUS_INVALID_DEVICE_STATE;
        o->close_done_ = done;
        o->close_context_ = context;
        o->closing_.store(true, std::memory_order_release);
        ++o->inflight_;  // held while StopWork runs: nothing completes the close meanwhile
        cv_.notify_all();
    }
    o->StopWork();
    if (!Drop(o)) return STATUS_PENDING;
    Complete(o, false);
    return STATUS_SUCCESS;
}

// `o` is finished: nothing in flight, nothing depends on it. Releases it and
// tells its antecedents; with `async`, runs its close completion (dispatcher).
// Order: out of live_ first (AnyOpenLocked reads the objects in it), then the
// ND2 objects are released, then the antecedents learn of it, so an
// antecedent (and the adapter itself) is released after its dependents.
void Adapter::Complete(Object *o, bool async) {
    NDK_FN_CLOSE_COMPLETION done = o->close_done_;
    void *context = o->close_context_;
    if (o == this) {  // only reached on the dispatcher: see CloseAdapter
        exit_ = true;
        return;
    }
    std::vector<Object *> antecedents;
    {
        std::lock_guard<std::mutex> lock(mu_);
        live_.erase(o);
        antecedents = std::move(o->antecedents_);
    }
    delete o;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (Object *a : antecedents) {
            --a->dependents_;
            if (ReadyLocked(a)) KickLocked(a);
        }
        cv_.notify_all();
    }
    if (async && done) done(context);
}

NTSTATUS Adapter::CloseAdapter(NDK_FN_CLOSE_COMPLETION done, void *context) {
    const bool on_dispatcher = std::this_thread::get_id() == dispatcher_id_;
    std::unique_lock<std::mutex> lock(mu_);
    if (closing_.load(std::memory_order_relaxed)) return STATUS_INVALID_DEVICE_STATE;
    close_done_ = done;
    close_context_ = context;
    closing_.store(true, std::memory_order_release);
    if (!on_dispatcher) {
        // Closes already started are allowed to finish (their callbacks to
        // return); an object still open makes the close pending instead.
        finished_ = true;  // no kick for the adapter while this thread decides
        cv_.wait(lock, [&] { return dependents_ == 0 || AnyOpenLocked(); });
        if (dependents_ == 0 && inflight_ == 0) {
            lock.unlock();
            Shutdown();
            delete this;
            return STATUS_SUCCESS;
        }
        finished_ = false;
    }
    if (ReadyLocked(this)) KickLocked(this);
    return STATUS_PENDING;
}

bool Adapter::Post(Request *r) { return PostQueuedCompletionStatus(port_, 0, kIoKey, &r->ov) != FALSE; }

void Adapter::Handle(Request *r) {
    Object *o = r->owner;
    if (r->kind != RequestKind::Kick) {
        HRESULT status = r->status;
        if (!r->synthetic) {
            // Every ND_PENDING request is answered through GetOverlappedResult (ND2 §4.4).
            IND2Overlapped *ov = o->Overlapped();
            status = ov ? ov->GetOverlappedResult(&r->ov, FALSE) : kit::OverlappedStatus(&r->ov);
        }
        o->OnRequestDone(r, status);
    }
    if (r == &o->kick_) {
        std::lock_guard<std::mutex> lock(mu_);
        o->kick_posted_ = false;
    } else {
        delete r;
    }
    RequestEnded(o);
}

void Adapter::Run() {
    OVERLAPPED_ENTRY entries[16];
    for (;;) {
        ULONG n = 0;
        if (!GetQueuedCompletionStatusEx(port_, entries, 16, &n, INFINITE, FALSE)) return;  // port closed
        bool stop = false;
        for (ULONG i = 0; i < n; ++i) {
            if (entries[i].lpCompletionKey == kShutdownKey) {
                stop = true;
                continue;
            }
            Handle(reinterpret_cast<Request *>(entries[i].lpOverlapped));
            if (exit_) {
                // The adapter's own close completed here (it was pending):
                // report it, then this thread releases everything and ends.
                if (close_done_) close_done_(close_context_);
                thread_.detach();
                delete this;
                return;
            }
        }
        if (stop) return;
    }
}

void Adapter::Shutdown() {
    PostQueuedCompletionStatus(port_, 0, kShutdownKey, nullptr);
    if (thread_.joinable()) thread_.join();
}

}  // namespace opennd::ndk
