// The handle table: fd -> shared_ptr<Object>, plus CloseHandle and
// OpenNdHandleFd, which act on any kind of object.
#include "win32/handle_table.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <shared_mutex>
#include <unordered_map>

#include "opennd/log.h"
#include "win32/common.h"

namespace opennd::win32 {
namespace {

// The table. Lookups (every call) take the lock shared; insert and close take
// it exclusive. Only map operations run under it: no object mutex, no
// syscall, no destructor (a removed entry is destroyed after unlocking).
struct Table {
    std::shared_mutex mu;
    std::unordered_map<int, std::shared_ptr<Object>> objects;
};

Table &GetTable() {
    // Never destroyed: handles may still be used from atexit handlers and
    // from threads that outlive main().
    static Table *table = new Table;
    return *table;
}

HANDLE EncodeHandle(int fd) {
    return reinterpret_cast<HANDLE>((static_cast<uintptr_t>(fd) + 1) << 2);
}

// -1 for anything that cannot be one of our handles.
int DecodeHandle(HANDLE h) {
    uintptr_t v = reinterpret_cast<uintptr_t>(h) & ~static_cast<uintptr_t>(1);
    if (v == 0 || (v & 3) != 0) return -1;  // NULL, INVALID_HANDLE_VALUE, odd garbage
    uintptr_t n = v >> 2;
    if (n > static_cast<uintptr_t>(INT_MAX)) return -1;
    return static_cast<int>(n - 1);
}

}  // namespace

Object::~Object() { ::close(fd_); }

int NewEventFd() { return ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void FdClose(int fd) { ::close(fd); }

void FdSignal(int fd) {
    uint64_t one = 1;
    // Cannot block or fail short of the counter reaching 2^64-2, and callers
    // keep it at 0 or 1 (events, ports) or drain it (overlapped files, by
    // the application). Retry only on EINTR.
    while (::write(fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

void FdDrain(int fd) {
    uint64_t value;
    while (::read(fd, &value, sizeof value) < 0 && errno == EINTR) {
    }
}

bool FdReadable(int fd) {
    pollfd p{fd, POLLIN, 0};
    int r;
    do {
        r = ::poll(&p, 1, 0);
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & POLLIN);
}

void SetInvalidHandleError() { SetError(ERROR_INVALID_HANDLE); }

void SetOutOfMemoryError(const char *what, int err) {
    OPENND_LOG(Warn, "cannot create a handle (%s): %s", what, std::strerror(err));
    SetError(ERROR_NOT_ENOUGH_MEMORY);
}

HANDLE InsertHandle(std::shared_ptr<Object> obj) {
    Table &t = GetTable();
    std::shared_ptr<Object> displaced;  // destroyed after unlocking
    try {
        std::unique_lock lock(t.mu);
        auto [it, inserted] = t.objects.try_emplace(obj->fd(), obj);
        if (!inserted) {
            // Only possible if someone closed an fd we own (e.g. the
            // application closed what OpenNdHandleFd returned) and the kernel
            // handed the number out again.
            OPENND_LOG(Warn, "handle table: fd %d reused while still open (closed behind our back?)", obj->fd());
            displaced = std::move(it->second);
            it->second = obj;
        }
    } catch (...) {
        SetOutOfMemoryError("handle table", ENOMEM);
        return nullptr;
    }
    return EncodeHandle(obj->fd());
}

std::shared_ptr<Object> LookupHandle(HANDLE h, bool set_error) {
    int fd = DecodeHandle(h);
    if (fd >= 0) {
        Table &t = GetTable();
        std::shared_lock lock(t.mu);
        auto it = t.objects.find(fd);
        if (it != t.objects.end()) return it->second;
    }
    if (set_error) SetInvalidHandleError();
    return nullptr;
}

std::shared_ptr<Object> RemoveHandle(HANDLE h) {
    int fd = DecodeHandle(h);
    if (fd < 0) return nullptr;
    Table &t = GetTable();
    std::unique_lock lock(t.mu);
    auto it = t.objects.find(fd);
    if (it == t.objects.end()) return nullptr;
    std::shared_ptr<Object> obj = std::move(it->second);
    t.objects.erase(it);
    return obj;
}

}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API BOOL CloseHandle(HANDLE hObject) {
    std::shared_ptr<Object> obj = RemoveHandle(hObject);
    if (!obj) {
        SetInvalidHandleError();
        return FALSE;
    }
    obj->OnHandleClosed();
    return TRUE;  // obj (and its eventfd, if this was the last reference) goes here
}

OPENND_API int OpenNdHandleFd(HANDLE h) {
    std::shared_ptr<Object> obj = LookupHandle(h);
    return obj ? obj->fd() : -1;
}

}  // extern "C"
