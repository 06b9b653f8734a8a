// Overlapped files and completion targets (include/opennd/overlapped_file.h),
// SetFileCompletionNotificationModes and the Win32 GetOverlappedResult.
#include "opennd/overlapped_file.h"

#include <sched.h>

#include <memory>
#include <thread>

#include "opennd/log.h"
#include "win32/common.h"
#include "win32/event.h"
#include "win32/file_object.h"

namespace opennd::win32 {

bool FileObject::Bind(std::shared_ptr<PortObject> port, ULONG_PTR key) {
    std::lock_guard lock(mu_);
    if (port_) return false;
    port_ = std::move(port);
    key_ = key;
    return true;
}

namespace {

// Steps 1 and 2 of a completion; returns hEvent as it was.
uintptr_t Publish(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes, const std::shared_ptr<EventObject> *taken) {
    // Read hEvent before publishing the status: once Internal is final the
    // application may free or reuse the OVERLAPPED, so it is not touched again.
    const uintptr_t event = reinterpret_cast<uintptr_t>(ov->hEvent);
    ov->InternalHigh = bytes;
    __atomic_store_n(&ov->Internal, static_cast<ULONG_PTR>(static_cast<uint32_t>(status)), __ATOMIC_RELEASE);
    if (taken) {
        if (*taken) (*taken)->Set();
    } else if (event != 0) {
        HANDLE h = reinterpret_cast<HANDLE>(event & ~static_cast<uintptr_t>(1));
        if (!SignalEventHandle(h))
            OPENND_LOG(Warn, "OpenNdCompleteOverlapped: hEvent %p is not an open event; not signalled", h);
    }
    return event;
}

}  // namespace

void FileObject::Complete(OVERLAPPED *ov, HRESULT status, ULONG_PTR bytes, const std::shared_ptr<EventObject> *taken) {
    const uintptr_t event = Publish(ov, status, bytes, taken);

    if ((event & 1) == 0) {
        std::shared_ptr<PortObject> port;
        ULONG_PTR key;
        {
            std::lock_guard lock(mu_);
            port = port_;
            key = key_;
        }
        if (port) {
            try {
                if (!port->Post(Packet{key, ov, static_cast<DWORD>(bytes), static_cast<uint32_t>(status)}))
                    OPENND_LOG(Debug, "OpenNdCompleteOverlapped: completion port closed; packet dropped");
            } catch (...) {
                OPENND_LOG(Error, "OpenNdCompleteOverlapped: out of memory; completion packet lost");
            }
        }
    }

    FdSignal(fd());
}

}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API HANDLE OpenNdCreateOverlappedFile(void) { return CreateObject<FileObject>(nullptr); }

OPENND_API OpenNdCompletionTarget *OpenNdAcquireCompletionTarget(HANDLE h) {
    std::shared_ptr<FileObject> file = LookupAs<FileObject>(h);
    if (!file) return nullptr;
    try {
        return new OpenNdCompletionTarget{std::move(file)};
    } catch (...) {
        SetError(ERROR_NOT_ENOUGH_MEMORY);
        return nullptr;
    }
}

OPENND_API void OpenNdReleaseCompletionTarget(OpenNdCompletionTarget *target) { delete target; }

OPENND_API void OpenNdCompleteOverlapped(OpenNdCompletionTarget *target, OVERLAPPED *ov, HRESULT status,
                                         ULONG_PTR bytes) {
    if (!target || !ov) {
        OPENND_LOG(Error, "OpenNdCompleteOverlapped: %s is NULL; completion lost", target ? "ov" : "target");
        return;
    }
    target->file->Complete(ov, status, bytes);
}

OPENND_API OpenNdEventRef *OpenNdBeginOverlapped(OVERLAPPED *ov) {
    if (!ov || !ov->hEvent) return nullptr;
    HANDLE h = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(ov->hEvent) & ~static_cast<uintptr_t>(1));
    std::shared_ptr<EventObject> event = LookupAs<EventObject>(h, /*set_error=*/false);
    if (!event) {
        OPENND_LOG(Warn, "OpenNdBeginOverlapped: hEvent %p is not an open event; it will not be signalled", h);
        return nullptr;
    }
    event->Reset();
    try {
        return new OpenNdEventRef{std::move(event)};
    } catch (...) {
        return nullptr;  // out of memory: the completion looks hEvent up instead
    }
}

OPENND_API void OpenNdCompleteOverlappedEx(OpenNdCompletionTarget *target, OVERLAPPED *ov, HRESULT status,
                                           ULONG_PTR bytes, OpenNdEventRef *event) {
    std::unique_ptr<OpenNdEventRef> owned(event);
    const std::shared_ptr<EventObject> *taken = owned ? &owned->event : nullptr;  // none taken: look it up
    if (!ov) {
        OPENND_LOG(Error, "OpenNdCompleteOverlappedEx: ov is NULL; completion lost");
        return;
    }
    if (target)
        target->file->Complete(ov, status, bytes, taken);
    else
        Publish(ov, status, bytes, taken);
}

// Overlapped files always behave as if FILE_SKIP_COMPLETION_PORT_ON_SUCCESS
// and FILE_SKIP_SET_EVENT_ON_HANDLE were set (a request that finishes
// synchronously posts nothing), so any combination of the two is accepted.
OPENND_API BOOL SetFileCompletionNotificationModes(HANDLE FileHandle, UCHAR Flags) {
    if (!LookupAs<FileObject>(FileHandle)) return FALSE;
    if (Flags & ~(FILE_SKIP_COMPLETION_PORT_ON_SUCCESS | FILE_SKIP_SET_EVENT_ON_HANDLE)) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    return TRUE;
}

// hFile is not used: the result is read from the OVERLAPPED alone.
// Extension: with bWait and no hEvent, Windows would wait on hFile; here the
// file's descriptor counts every completion rather than this request's, so we
// poll ov->Internal instead (yielding, then sleeping up to 1 ms between looks).
OPENND_API BOOL GetOverlappedResult(HANDLE hFile, LPOVERLAPPED lpOverlapped, LPDWORD lpNumberOfBytesTransferred,
                                    BOOL bWait) {
    (void)hFile;
    if (!lpOverlapped || !lpNumberOfBytesTransferred) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    auto status = [lpOverlapped] {
        return static_cast<uint32_t>(__atomic_load_n(&lpOverlapped->Internal, __ATOMIC_ACQUIRE));
    };
    if (status() == STATUS_PENDING) {
        if (!bWait) {
            SetError(ERROR_IO_INCOMPLETE);
            return FALSE;
        }
        HANDLE event = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(lpOverlapped->hEvent) &
                                                ~static_cast<uintptr_t>(1));
        // OpenNdCompleteOverlapped publishes Internal before setting the
        // event, so after the wait the status is normally final; if the event
        // was set for another reason, fall through to polling.
        if (event && WaitHandles(1, &event, false, INFINITE) == WAIT_FAILED) return FALSE;
        for (unsigned round = 0; status() == STATUS_PENDING; ++round) {
            if (round < 64)
                sched_yield();
            else
                std::this_thread::sleep_for(std::chrono::microseconds(round < 128 ? 50 : 1000));
        }
    }
    *lpNumberOfBytesTransferred = static_cast<DWORD>(lpOverlapped->InternalHigh);
    uint32_t s = status();
    if (static_cast<int32_t>(s) < 0) {
        SetError(Win32ErrorFromStatus(s));
        return FALSE;
    }
    return TRUE;
}

}  // extern "C"
