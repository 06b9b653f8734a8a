// CreateEvent, SetEvent, ResetEvent.
#include "win32/event.h"

#include "opennd/log.h"
#include "win32/common.h"

namespace opennd::win32 {

EventObject::EventObject(int fd, bool manual_reset, bool initial_state) : Object(kKind, fd), manual_reset_(manual_reset) {
    if (initial_state) {
        signalled_ = true;
        FdSignal(fd);
    }
}

void EventObject::Set() {
    std::lock_guard lock(mu_);
    if (!signalled_) {  // several sets before a wait are one signal
        signalled_ = true;
        FdSignal(fd());
    }
}

void EventObject::Reset() {
    std::lock_guard lock(mu_);
    ClearLocked();
}

void EventObject::ClearLocked() {
    if (signalled_) {
        signalled_ = false;
        FdDrain(fd());
    }
}

bool SignalEventHandle(HANDLE h) {
    std::shared_ptr<EventObject> ev = LookupAs<EventObject>(h, /*set_error=*/false);
    if (!ev) return false;
    ev->Set();
    return true;
}

namespace {

HANDLE NewEvent(BOOL manual_reset, BOOL initial_state, bool named) {
    if (named) {
        OPENND_LOG(Warn, "CreateEvent: named events are not supported");
        SetError(ERROR_NOT_SUPPORTED);
        return nullptr;
    }
    return CreateObject<EventObject>(nullptr, manual_reset != FALSE, initial_state != FALSE);
}

}  // namespace
}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

// Security attributes are accepted and ignored (there is nothing to inherit
// across exec: the eventfd is close-on-exec).
OPENND_API HANDLE CreateEventA(LPSECURITY_ATTRIBUTES lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
                               LPCSTR lpName) {
    (void)lpEventAttributes;
    return NewEvent(bManualReset, bInitialState, lpName && *lpName);
}

OPENND_API HANDLE CreateEventW(LPSECURITY_ATTRIBUTES lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
                               LPCWSTR lpName) {
    (void)lpEventAttributes;
    return NewEvent(bManualReset, bInitialState, lpName && *lpName);
}

OPENND_API BOOL SetEvent(HANDLE hEvent) {
    std::shared_ptr<EventObject> ev = LookupAs<EventObject>(hEvent);
    if (!ev) return FALSE;
    ev->Set();
    return TRUE;
}

OPENND_API BOOL ResetEvent(HANDLE hEvent) {
    std::shared_ptr<EventObject> ev = LookupAs<EventObject>(hEvent);
    if (!ev) return FALSE;
    ev->Reset();
    return TRUE;
}

}  // extern "C"
