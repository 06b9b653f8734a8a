// Overlapped request tracking for one ND object (CQ, MR, SRQ, connector,
// listener): the IND2Overlapped half every provider would otherwise write
// again.
//
// Life of a request: the object calls Begin(ov) and returns ND_PENDING; later
// exactly one of Complete(ov, ...) or CancelAll() delivers its completion
// through the object's overlapped file (event, completion port, fd). A
// request is delivered once: Complete on a request that was already cancelled
// returns false and does nothing, so the object can drop its own record of it.
//
// Locking: one mutex per tracker. Delivery happens under it, so completions
// of one object reach the port in the order they were decided, and
// CancelAll delivers in issue order before it returns.
#pragma once

#include <condition_variable>
#include <list>
#include <mutex>
#include <unordered_map>

#include "ndspi.h"
#include "opennd/overlapped_file.h"

namespace opennd::kit {

// Owns one counted reference to an overlapped file's completion target.
class CompletionTarget {
public:
    CompletionTarget() = default;
    // Acquires the target of an overlapped file handle; false if the handle
    // is not an open overlapped file.
    bool Acquire(HANDLE overlapped_file);
    ~CompletionTarget();
    CompletionTarget(const CompletionTarget &) = delete;
    CompletionTarget &operator=(const CompletionTarget &) = delete;
    OpenNdCompletionTarget *get() const { return target_; }
    explicit operator bool() const { return target_ != nullptr; }

private:
    OpenNdCompletionTarget *target_ = nullptr;
};

inline HRESULT OverlappedStatus(const OVERLAPPED *ov) {
    return static_cast<HRESULT>(static_cast<uint32_t>(__atomic_load_n(&ov->Internal, __ATOMIC_ACQUIRE)));
}

class OverlappedRequests {
public:
    // Takes the completion target of `overlapped_file`; Valid() tells if it was one.
    explicit OverlappedRequests(HANDLE overlapped_file);
    ~OverlappedRequests();
    bool Valid() const { return static_cast<bool>(target_); }

    // Records a new pending request and resets its event (as Windows does
    // when I/O begins). Returns ND_PENDING, or an error (and records and
    // resets nothing) for a null OVERLAPPED or one already pending here.
    HRESULT Begin(OVERLAPPED *ov);
    // Delivers the completion of a pending request. False if it is not
    // pending here (never begun, already completed or cancelled).
    bool Complete(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes = 0);
    // Begin + Complete: for work done at once but reported as pending, which
    // is what ND applications expect of Register, Connect, Notify and friends.
    HRESULT CompleteNow(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes = 0);
    // Completes the oldest pending request (issue order); false if none.
    bool CompleteOldest(HRESULT status, ULONG_PTR bytes = 0, OVERLAPPED **which = nullptr);
    bool IsPending(OVERLAPPED *ov);
    size_t PendingCount();
    // IND2Overlapped::CancelOverlappedRequests: every pending request is
    // delivered with ND_CANCELED, in issue order, before this returns.
    HRESULT CancelAll();
    // IND2Overlapped::GetOverlappedResult. With wait, blocks until the request
    // completes (on an internal condition, so it works with or without
    // hEvent and never consumes the application's event).
    HRESULT Result(OVERLAPPED *ov, BOOL wait);

private:
    void DeliverLocked(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes);

    CompletionTarget target_;
    std::mutex mu_;
    std::condition_variable done_;
    struct Pending {
        OVERLAPPED *ov;
        OpenNdEventRef *event;  // hEvent as the request began (OpenNdBeginOverlapped)
    };
    std::list<Pending> order_;  // pending requests, issue order
    std::unordered_map<OVERLAPPED *, std::list<Pending>::iterator> index_;
};

}  // namespace opennd::kit
