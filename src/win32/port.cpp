// CreateIoCompletionPort, GetQueuedCompletionStatus(Ex),
// PostQueuedCompletionStatus.
#include "win32/port.h"

#include <algorithm>
#include <cstdlib>

#include "opennd/log.h"
#include "win32/file_object.h"
#include "opennd/params.h"

namespace opennd::win32 {

void PortObject::OnHandleClosed() {
    {
        std::lock_guard lock(mu_);
        closed_ = true;
        if (!queue_.empty()) {
            OPENND_LOG(Info, "completion port closed with %zu packets queued; dropped", queue_.size());
            queue_.clear();
            queued_.store(0, std::memory_order_relaxed);
            FdDrain(fd());
        }
    }
    cv_.notify_all();
}

bool PortObject::Post(const Packet &packet) {
    {
        std::lock_guard lock(mu_);
        if (closed_) return false;
        queue_.push_back(packet);
        queued_.store(queue_.size(), std::memory_order_release);
        if (queue_.size() == 1) FdSignal(fd());
    }
    cv_.notify_one();
    return true;
}

// How long a waiter spins before it sleeps. On virtual machines a wake-up
// costs tens of microseconds while a packet often arrives within a few: a
// short spin can keep blocking waits fast when the other side answers at
// once. Off by default: on 2-core VMs the spinner steals the CPU the answer
// needs (measured: 72 us with a 20 us spin vs 48 us without, ndperf -b).
// OPENND_WAIT_SPIN_US sets the spin in microseconds (default 0, off).
static inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

static std::chrono::microseconds SpinBudget() {
    static const long us = [] {
        return std::max(0L, opennd::ParamLong("OPENND_WAIT_SPIN_US", 0));
    }();
    return std::chrono::microseconds(us);
}

template <class Sink>
PortObject::Result PortObject::Dequeue(ULONG max, ULONG *got, const Deadline &deadline, Sink &&sink) {
    if (queued_.load(std::memory_order_acquire) == 0 && SpinBudget().count() > 0) {
        auto until = std::min(Deadline::Clock::now() + SpinBudget(), deadline.at());
        while (queued_.load(std::memory_order_acquire) == 0 && Deadline::Clock::now() < until)
            CpuRelax();
    }
    std::unique_lock lock(mu_);
    auto ready = [this] { return !queue_.empty() || closed_; };
    if (deadline.infinite())
        cv_.wait(lock, ready);
    else if (!cv_.wait_until(lock, deadline.at(), ready))
        return Result::Timeout;
    if (closed_) return Result::Closed;

    ULONG n = 0;
    while (n < max && !queue_.empty()) {
        sink(n++, queue_.front());
        queue_.pop_front();
    }
    queued_.store(queue_.size(), std::memory_order_relaxed);
    *got = n;
    if (queue_.empty()) {
        FdDrain(fd());
    } else {
        // Normally each Post already woke a waiter; this only keeps packets
        // from waiting for the next Post if a woken waiter lost the race.
        lock.unlock();
        cv_.notify_one();
    }
    return Result::Ok;
}

PortObject::Result PortObject::DequeueOne(Packet *out, const Deadline &deadline) {
    ULONG got = 0;
    return Dequeue(1, &got, deadline, [out](ULONG, const Packet &p) { *out = p; });
}

PortObject::Result PortObject::DequeueEntries(OVERLAPPED_ENTRY *out, ULONG max, ULONG *got, const Deadline &deadline) {
    return Dequeue(max, got, deadline, [out](ULONG i, const Packet &p) {
        out[i].lpCompletionKey = p.key;
        out[i].lpOverlapped = p.ov;
        out[i].Internal = p.status;
        out[i].dwNumberOfBytesTransferred = p.bytes;
    });
}

namespace {

// Last error for a Get call that dequeued nothing.
BOOL FailedDequeue(PortObject::Result r) {
    SetError(r == PortObject::Result::Timeout ? static_cast<DWORD>(WAIT_TIMEOUT) : ERROR_ABANDONED_WAIT_0);
    return FALSE;
}

}  // namespace
}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

// NumberOfConcurrentThreads is accepted and ignored: every waiting thread
// may take a packet.
OPENND_API HANDLE CreateIoCompletionPort(HANDLE FileHandle, HANDLE ExistingCompletionPort, ULONG_PTR CompletionKey,
                                         DWORD NumberOfConcurrentThreads) {
    (void)NumberOfConcurrentThreads;
    if (FileHandle == INVALID_HANDLE_VALUE) {
        if (ExistingCompletionPort) {
            SetError(ERROR_INVALID_PARAMETER);
            return nullptr;
        }
        return CreateObject<PortObject>(nullptr);
    }

    std::shared_ptr<FileObject> file = LookupAs<FileObject>(FileHandle);
    if (!file) return nullptr;  // ERROR_INVALID_HANDLE set

    if (ExistingCompletionPort) {
        std::shared_ptr<PortObject> port = LookupAs<PortObject>(ExistingCompletionPort);
        if (!port) return nullptr;
        if (!file->Bind(std::move(port), CompletionKey)) {
            SetError(ERROR_INVALID_PARAMETER);
            return nullptr;
        }
        return ExistingCompletionPort;
    }

    std::shared_ptr<PortObject> port;
    HANDLE h = CreateObject<PortObject>(&port);
    if (!h) return nullptr;
    if (!file->Bind(std::move(port), CompletionKey)) {
        // Lost a race with another association of the same file.
        if (std::shared_ptr<Object> unused = RemoveHandle(h)) unused->OnHandleClosed();
        SetError(ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    return h;
}

OPENND_API BOOL GetQueuedCompletionStatus(HANDLE CompletionPort, LPDWORD lpNumberOfBytesTransferred,
                                          PULONG_PTR lpCompletionKey, LPOVERLAPPED *lpOverlapped,
                                          DWORD dwMilliseconds) {
    if (!lpOverlapped) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    *lpOverlapped = nullptr;
    std::shared_ptr<PortObject> port = LookupAs<PortObject>(CompletionPort);
    if (!port) return FALSE;
    Packet p;
    PortObject::Result r = port->DequeueOne(&p, Deadline(dwMilliseconds));
    if (r != PortObject::Result::Ok) return FailedDequeue(r);
    if (lpNumberOfBytesTransferred) *lpNumberOfBytesTransferred = p.bytes;
    if (lpCompletionKey) *lpCompletionKey = p.key;
    *lpOverlapped = p.ov;
    // As Windows: a dequeued packet of a failed request returns FALSE with
    // *lpOverlapped set, so the caller can tell it from a failed wait.
    if (static_cast<int32_t>(p.status) < 0) {
        SetError(Win32ErrorFromStatus(p.status));
        return FALSE;
    }
    return TRUE;
}

// Each entry's Internal is the packet's status; TRUE even if it is a failure.
// fAlertable is ignored (no APCs).
OPENND_API BOOL GetQueuedCompletionStatusEx(HANDLE CompletionPort, LPOVERLAPPED_ENTRY lpCompletionPortEntries,
                                            ULONG ulCount, PULONG ulNumEntriesRemoved, DWORD dwMilliseconds,
                                            BOOL fAlertable) {
    (void)fAlertable;
    if (ulNumEntriesRemoved) *ulNumEntriesRemoved = 0;
    if (!lpCompletionPortEntries || ulCount == 0 || !ulNumEntriesRemoved) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    std::shared_ptr<PortObject> port = LookupAs<PortObject>(CompletionPort);
    if (!port) return FALSE;
    ULONG got = 0;
    PortObject::Result r = port->DequeueEntries(lpCompletionPortEntries, ulCount, &got, Deadline(dwMilliseconds));
    if (r != PortObject::Result::Ok) return FailedDequeue(r);
    *ulNumEntriesRemoved = got;
    return TRUE;
}

OPENND_API BOOL PostQueuedCompletionStatus(HANDLE CompletionPort, DWORD dwNumberOfBytesTransferred,
                                           ULONG_PTR dwCompletionKey, LPOVERLAPPED lpOverlapped) {
    std::shared_ptr<PortObject> port = LookupAs<PortObject>(CompletionPort);
    if (!port) return FALSE;
    try {
        if (!port->Post(Packet{dwCompletionKey, lpOverlapped, dwNumberOfBytesTransferred, 0})) {
            SetError(ERROR_INVALID_HANDLE);  // closed since the lookup
            return FALSE;
        }
    } catch (...) {
        SetError(ERROR_NOT_ENOUGH_MEMORY);
        return FALSE;
    }
    return TRUE;
}

}  // extern "C"
