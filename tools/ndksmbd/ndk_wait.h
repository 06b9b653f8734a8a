// Waiting for NDK callbacks from ordinary threads: a request/close completion
// that can be waited on with a timeout. The callback does all its work under
// the lock, so the waiter may be destroyed as soon as Wait returns true; after
// a timeout the waiter must outlive the object the request was made on (close
// that object first: its close completes only after the callback ran).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "ndkpi.h"

namespace smbd {

class NdkWait {
public:
    static VOID Request(PVOID context, NTSTATUS status) { static_cast<NdkWait *>(context)->Set(status); }
    static VOID Close(PVOID context) { static_cast<NdkWait *>(context)->Set(STATUS_SUCCESS); }

    void Reset() {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = false;
        status_ = STATUS_PENDING;
    }
    // The final status of a request that returned `inline_status`:
    // STATUS_PENDING means wait for the callback (STATUS_IO_TIMEOUT if none).
    NTSTATUS Finish(NTSTATUS inline_status, int timeout_ms) {
        if (inline_status != STATUS_PENDING) return inline_status;
        std::unique_lock<std::mutex> lock(mu_);
        if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return done_; })) return STATUS_IO_TIMEOUT;
        return status_;
    }

private:
    void Set(NTSTATUS status) {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = true;
        status_ = status;
        cv_.notify_all();
    }
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    NTSTATUS status_ = STATUS_PENDING;
};

// Closes any NDK object and waits for a pending close (bounded; after a
// timeout the waiter is left to the late callback).
template <class T>
NTSTATUS CloseNdk(T *object, NTSTATUS (*close)(NDK_OBJECT_HEADER *, NDK_FN_CLOSE_COMPLETION, PVOID),
                  int timeout_ms = 10000) {
    if (!object) return STATUS_SUCCESS;
    NdkWait *wait = new NdkWait;
    NTSTATUS status = wait->Finish(close(&object->Header, NdkWait::Close, wait), timeout_ms);
    if (status != STATUS_IO_TIMEOUT) delete wait;
    return status;
}

}  // namespace smbd
