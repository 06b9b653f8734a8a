// I/O completion ports.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>

#include "win32/common.h"
#include "win32/handle_table.h"

namespace opennd::win32 {

struct Packet {
    ULONG_PTR key;
    OVERLAPPED *ov;
    DWORD bytes;
    // The request's final status for packets from OpenNdCompleteOverlapped
    // (the value it stored in ov->Internal), 0 for PostQueuedCompletionStatus.
    // Kept in the packet, as Windows keeps it in the IRP, so dequeueing never
    // reads an OVERLAPPED the application may already be reusing.
    uint32_t status;
};

// State guarded by mu_: the packet queue, closed_. The eventfd counter is
// non-zero exactly while the queue is non-empty (changed under mu_), so the
// port can be polled and waited on; waiting does not dequeue.
// GetQueuedCompletionStatus waiters block on cv_; each packet is popped by
// exactly one of them.
class PortObject final : public Object {
public:
    static constexpr ObjectKind kKind = ObjectKind::Port;

    explicit PortObject(int fd) : Object(kKind, fd) {}

    bool SignalledLocked() override { return !queue_.empty(); }
    // Drops queued packets and wakes every waiter (they fail with
    // ERROR_ABANDONED_WAIT_0). Overlapped files bound to the port still hold
    // a reference; what they post afterwards is dropped.
    void OnHandleClosed() override;

    // Queues a packet; false if the port's handle has been closed. May throw
    // std::bad_alloc.
    bool Post(const Packet &packet);

    enum class Result { Ok, Timeout, Closed };
    // Wait until a packet is queued (or the deadline passes, or the port is
    // closed), then remove one packet, or up to max as OVERLAPPED_ENTRYs
    // (*got >= 1 on Ok).
    Result DequeueOne(Packet *out, const Deadline &deadline);
    Result DequeueEntries(OVERLAPPED_ENTRY *out, ULONG max, ULONG *got, const Deadline &deadline);

private:
    template <class Sink>
    Result Dequeue(ULONG max, ULONG *got, const Deadline &deadline, Sink &&sink);

    std::condition_variable cv_;
    std::deque<Packet> queue_;  // guarded by mu_
    std::atomic<size_t> queued_{0};  // queue_.size(), for the lock-free spin before sleeping
    bool closed_ = false;       // guarded by mu_
};

}  // namespace opennd::win32
