// WaitForSingleObject(Ex) and WaitForMultipleObjects(Ex).
//
// A wait alternates two steps until it succeeds or the deadline passes:
//  1. test (and, if satisfied, consume) the objects' signal state under their
//     mutexes;
//  2. block in ppoll on the eventfds of the objects that were not signalled.
// A readable fd only means "test again": another waiter may have taken an
// auto-reset event's signal first, and then its fd is no longer readable.
// EINTR just goes round again with the time left on the monotonic clock.
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>

#include "opennd/log.h"
#include "win32/common.h"
#include "win32/handle_table.h"

namespace opennd::win32 {
namespace {

using ObjectArray = std::array<std::shared_ptr<Object>, MAXIMUM_WAIT_OBJECTS>;

// Wait-any step 1: the lowest index that is signalled now, consuming it; -1
// if none, with every fd added to fds.
int TryAcquireAny(const ObjectArray &objs, DWORD n, pollfd *fds, nfds_t *nfds) {
    *nfds = 0;
    for (DWORD i = 0; i < n; ++i) {
        std::lock_guard lock(objs[i]->mutex());
        if (objs[i]->SignalledLocked()) {
            objs[i]->ConsumeLocked();
            return static_cast<int>(i);
        }
        fds[(*nfds)++] = pollfd{objs[i]->fd(), POLLIN, 0};
    }
    return -1;
}

// Wait-all step 1: with every object's mutex held (in address order, the one
// global lock order), either all are signalled and all are consumed, or
// nothing is consumed and the fds of the unsignalled ones go to fds.
bool TryAcquireAll(const ObjectArray &objs, DWORD n, pollfd *fds, nfds_t *nfds) {
    std::array<Object *, MAXIMUM_WAIT_OBJECTS> order;
    for (DWORD i = 0; i < n; ++i) order[i] = objs[i].get();
    std::sort(order.begin(), order.begin() + n, std::less<Object *>());
    std::array<std::unique_lock<std::mutex>, MAXIMUM_WAIT_OBJECTS> locks;
    for (DWORD i = 0; i < n; ++i) locks[i] = std::unique_lock(order[i]->mutex());

    *nfds = 0;
    for (DWORD i = 0; i < n; ++i)
        if (!order[i]->SignalledLocked()) fds[(*nfds)++] = pollfd{order[i]->fd(), POLLIN, 0};
    if (*nfds != 0) return false;
    for (DWORD i = 0; i < n; ++i) order[i]->ConsumeLocked();
    return true;
}

bool HasDuplicates(const ObjectArray &objs, DWORD n) {
    for (DWORD i = 0; i < n; ++i)
        for (DWORD j = i + 1; j < n; ++j)
            if (objs[i] == objs[j]) return true;
    return false;
}

}  // namespace

DWORD WaitHandles(DWORD count, const HANDLE *handles, bool wait_all, DWORD milliseconds) {
    if (count == 0 || count > MAXIMUM_WAIT_OBJECTS || !handles) {
        SetError(ERROR_INVALID_PARAMETER);
        return WAIT_FAILED;
    }
    // Our own references: a handle closed during the wait keeps its object
    // (and its fd) alive until we return, as a kernel wait would.
    ObjectArray objs;
    for (DWORD i = 0; i < count; ++i) {
        objs[i] = LookupHandle(handles[i]);
        if (!objs[i]) return WAIT_FAILED;  // ERROR_INVALID_HANDLE set
    }
    // As Windows: waiting for all of one object twice is a caller error.
    if (wait_all && HasDuplicates(objs, count)) {
        SetError(ERROR_INVALID_PARAMETER);
        return WAIT_FAILED;
    }

    const Deadline deadline(milliseconds);
    std::array<pollfd, MAXIMUM_WAIT_OBJECTS> fds;
    for (;;) {
        nfds_t nfds = 0;
        if (wait_all) {
            if (TryAcquireAll(objs, count, fds.data(), &nfds)) return WAIT_OBJECT_0;
        } else {
            int index = TryAcquireAny(objs, count, fds.data(), &nfds);
            if (index >= 0) return WAIT_OBJECT_0 + static_cast<DWORD>(index);
        }
        timespec left;
        if (!deadline.infinite() && !deadline.Remaining(&left)) return WAIT_TIMEOUT;
        if (ppoll(fds.data(), nfds, deadline.infinite() ? nullptr : &left, nullptr) < 0 && errno != EINTR) {
            OPENND_LOG(Warn, "WaitForMultipleObjects: ppoll failed: %s", std::strerror(errno));
            SetError(ERROR_INVALID_HANDLE);
            return WAIT_FAILED;
        }
    }
}

}  // namespace opennd::win32

using opennd::win32::WaitHandles;

extern "C" {

// bAlertable is accepted and ignored: there are no APCs, so a wait never
// returns WAIT_IO_COMPLETION.
OPENND_API DWORD WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds) {
    return WaitHandles(1, &hHandle, false, dwMilliseconds);
}

OPENND_API DWORD WaitForSingleObjectEx(HANDLE hHandle, DWORD dwMilliseconds, BOOL bAlertable) {
    (void)bAlertable;
    return WaitHandles(1, &hHandle, false, dwMilliseconds);
}

OPENND_API DWORD WaitForMultipleObjects(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll, DWORD dwMilliseconds) {
    return WaitHandles(nCount, lpHandles, bWaitAll != FALSE, dwMilliseconds);
}

OPENND_API DWORD WaitForMultipleObjectsEx(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll, DWORD dwMilliseconds,
                                          BOOL bAlertable) {
    (void)bAlertable;
    return WaitHandles(nCount, lpHandles, bWaitAll != FALSE, dwMilliseconds);
}

}  // extern "C"
