// The process-global handle table and the base class of every object a HANDLE
// can name (event, completion port, overlapped file, thread).
//
// Each object owns one Linux eventfd, readable exactly while the object is
// signalled, so any handle can be polled. The HANDLE value is
// ((fd + 1) << 2): never NULL, bits 0 and 1 always clear. Applications tag an
// OVERLAPPED's hEvent with bit 0, and then pass the tagged value back to us
// (CloseHandle, WaitForSingleObject), so every lookup ignores bit 0.
//
// Ownership: the table holds one std::shared_ptr per open handle. Calls take
// their own shared_ptr from Lookup and keep the object alive for the duration
// of the call even if another thread closes the handle meanwhile. The eventfd
// is closed by the object's destructor, i.e. when the last reference goes, so
// an fd number is never reused while a table entry or a caller still names it.
#pragma once

#include <cerrno>
#include <memory>
#include <mutex>

#include "opennd/win32.h"

namespace opennd::win32 {

enum class ObjectKind { Event, Port, File, Thread };

class Object {
public:
    Object(ObjectKind kind, int fd) : kind_(kind), fd_(fd) {}
    virtual ~Object();  // closes fd()
    Object(const Object &) = delete;
    Object &operator=(const Object &) = delete;

    ObjectKind kind() const { return kind_; }
    int fd() const { return fd_; }

    // Guards the object's signal state (and whatever state the subclass says).
    // Waits lock it to test and consume the signal atomically; WaitForMultiple
    // with bWaitAll locks several objects' mutexes, always in address order.
    // No code holds an object mutex while taking the table lock or calling out.
    std::mutex &mutex() { return mu_; }

    // With mutex() held: is the object signalled (== its eventfd readable)?
    virtual bool SignalledLocked() = 0;
    // With mutex() held, after SignalledLocked() returned true: a wait on the
    // object was satisfied. Auto-reset events clear themselves; others ignore.
    virtual void ConsumeLocked() {}
    // Called once when the handle is closed, after it left the table, with no
    // lock held. References held elsewhere keep the object alive afterwards.
    virtual void OnHandleClosed() {}

protected:
    std::mutex mu_;

private:
    const ObjectKind kind_;
    const int fd_;
};

// eventfd helpers (the fd is non-blocking and close-on-exec).
int NewEventFd();           // -1 with errno set on failure
void FdSignal(int fd);      // counter += 1
void FdDrain(int fd);       // counter = 0
bool FdReadable(int fd);    // counter != 0, without consuming
void FdClose(int fd);       // for an fd no object owns yet

// Adds obj to the table and returns its handle.
HANDLE InsertHandle(std::shared_ptr<Object> obj);
// The object a handle names (bit 0 ignored), or nullptr. With set_error, a
// miss sets ERROR_INVALID_HANDLE.
std::shared_ptr<Object> LookupHandle(HANDLE h, bool set_error = true);
// Takes the object out of the table (CloseHandle without OnHandleClosed);
// nullptr, and no error set, if h names no open object.
std::shared_ptr<Object> RemoveHandle(HANDLE h);
// As LookupHandle, but also nullptr (ERROR_INVALID_HANDLE) if the object is
// not of type T (T::kKind).
template <class T>
std::shared_ptr<T> LookupAs(HANDLE h, bool set_error = true);

// Creates an eventfd and a T around it (T(fd, args...)), inserts it and
// returns the handle, or NULL with ERROR_NOT_ENOUGH_MEMORY.
template <class T, class... Args>
HANDLE CreateObject(std::shared_ptr<T> *out, Args &&...args);

void SetInvalidHandleError();
void SetOutOfMemoryError(const char *what, int err);

template <class T>
std::shared_ptr<T> LookupAs(HANDLE h, bool set_error) {
    std::shared_ptr<Object> obj = LookupHandle(h, set_error);
    if (!obj || obj->kind() != T::kKind) {
        if (set_error) SetInvalidHandleError();
        return nullptr;
    }
    return std::static_pointer_cast<T>(std::move(obj));
}

template <class T, class... Args>
HANDLE CreateObject(std::shared_ptr<T> *out, Args &&...args) {
    int fd = NewEventFd();
    if (fd < 0) {
        SetOutOfMemoryError("eventfd", errno);
        return nullptr;
    }
    std::shared_ptr<T> obj;
    try {
        obj = std::make_shared<T>(fd, std::forward<Args>(args)...);
    } catch (...) {
        FdClose(fd);
        SetOutOfMemoryError("object", ENOMEM);
        return nullptr;
    }
    HANDLE h = InsertHandle(obj);
    if (h && out) *out = std::move(obj);
    return h;
}

}  // namespace opennd::win32
