// CreateThread and the calls on thread handles.
//
// A thread object is a handle-table object like an event: its eventfd becomes
// readable, once and for good, when the thread ends, so every wait (and
// OpenNdHandleFd) works on it unchanged. The thread itself holds a reference
// to its object, so closing the handle early (CloseHandle(CreateThread(...)))
// leaves the thread running and its object alive until it ends.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <new>

#include "opennd/log.h"
#include "win32/common.h"
#include "win32/handle_table.h"

namespace opennd::win32 {
namespace {

class ThreadObject final : public Object {
public:
    static constexpr ObjectKind kKind = ObjectKind::Thread;

    ThreadObject(int fd, LPTHREAD_START_ROUTINE start, LPVOID param, bool suspended)
        : Object(kKind, fd), start_(start), param_(param), suspend_count_(suspended ? 1 : 0) {}

    bool SignalledLocked() override { return exited_; }  // ends once; waits never consume it

    // The new thread's body: publish its id, wait while suspended, run the
    // start routine, then record the exit code and signal. The exit is
    // recorded by a destructor so a thread that leaves by unwinding
    // (pthread_exit, pthread_cancel) still signals its handle (exit code 0).
    void Run() {
        {
            std::unique_lock lock(mu_);
            tid_ = static_cast<DWORD>(gettid());
            cv_.notify_all();
            cv_.wait(lock, [&] { return suspend_count_ == 0; });
        }
        struct Exit {
            ThreadObject *thread;
            DWORD code = 0;
            ~Exit() { thread->Finish(code); }
        } exit{this};
        exit.code = start_(param_);
    }

    // The thread's id, once it has started (waits for that).
    DWORD Id() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return tid_ != 0; });
        return tid_;
    }

    DWORD ExitCode() {
        std::lock_guard lock(mu_);
        return exited_ ? exit_code_ : STILL_ACTIVE;
    }

    // ResumeThread: the previous suspend count.
    DWORD Resume() {
        std::lock_guard lock(mu_);
        DWORD previous = suspend_count_;
        if (suspend_count_ > 0 && --suspend_count_ == 0) cv_.notify_all();
        return previous;
    }

private:
    void Finish(DWORD code) {
        std::lock_guard lock(mu_);
        exit_code_ = code;
        exited_ = true;
        FdSignal(fd());
    }

    const LPTHREAD_START_ROUTINE start_;
    const LPVOID param_;
    std::condition_variable cv_;  // tid_ set, suspend_count_ reached 0
    DWORD suspend_count_;         // guarded by mu_
    DWORD tid_ = 0;               // guarded by mu_; 0 until the thread runs
    DWORD exit_code_ = 0;         // guarded by mu_; valid once exited_
    bool exited_ = false;         // guarded by mu_
};

void *ThreadMain(void *arg) {
    std::shared_ptr<ThreadObject> self = std::move(*static_cast<std::shared_ptr<ThreadObject> *>(arg));
    delete static_cast<std::shared_ptr<ThreadObject> *>(arg);
    self->Run();
    return nullptr;
}

// The stack a thread gets. Windows takes dwStackSize as the initial commit
// and reserves at least the executable's default (1 MiB) unless
// STACK_SIZE_PARAM_IS_A_RESERVATION says it is the reservation; Linux has
// only the reservation, so a commit size never shrinks the default stack.
size_t StackSize(const pthread_attr_t &attr, SIZE_T requested, bool is_reservation) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t def = 0;
    pthread_attr_getstacksize(&attr, &def);
    if (requested == 0) return def;
    size_t rounded = (requested + page - 1) / page * page;
    if (rounded < requested) return def;  // overflow: the default
    if (!is_reservation) return std::max(def, rounded);
    return std::max<size_t>({rounded, static_cast<size_t>(PTHREAD_STACK_MIN), 64 * 1024});
}

}  // namespace
}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API HANDLE CreateThread(LPSECURITY_ATTRIBUTES lpThreadAttributes, SIZE_T dwStackSize,
                               LPTHREAD_START_ROUTINE lpStartAddress, LPVOID lpParameter, DWORD dwCreationFlags,
                               LPDWORD lpThreadId) {
    (void)lpThreadAttributes;  // nothing to inherit: no handle crosses exec
    if (!lpStartAddress) {
        SetError(ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    std::shared_ptr<ThreadObject> thread;
    HANDLE h = CreateObject<ThreadObject>(&thread, lpStartAddress, lpParameter,
                                          (dwCreationFlags & CREATE_SUSPENDED) != 0);
    if (!h) return nullptr;  // error set

    auto *arg = new (std::nothrow) std::shared_ptr<ThreadObject>(thread);
    pthread_attr_t attr;
    int rc = arg ? pthread_attr_init(&attr) : ENOMEM;
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_attr_setstacksize(
            &attr, StackSize(attr, dwStackSize, (dwCreationFlags & STACK_SIZE_PARAM_IS_A_RESERVATION) != 0));
        pthread_t id;
        if (rc == 0) rc = pthread_create(&id, &attr, ThreadMain, arg);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        delete arg;
        RemoveHandle(h);
        OPENND_LOG(Warn, "CreateThread: cannot start a thread: %s", std::strerror(rc));
        SetError(rc == EINVAL ? ERROR_INVALID_PARAMETER : ERROR_NOT_ENOUGH_MEMORY);
        return nullptr;
    }
    if (lpThreadId) *lpThreadId = thread->Id();
    return h;
}

// (DWORD)-1 with ERROR_INVALID_HANDLE for a handle that is no thread.
OPENND_API DWORD ResumeThread(HANDLE hThread) {
    std::shared_ptr<ThreadObject> thread = LookupAs<ThreadObject>(hThread);
    if (!thread) return static_cast<DWORD>(-1);
    return thread->Resume();
}

OPENND_API BOOL GetExitCodeThread(HANDLE hThread, LPDWORD lpExitCode) {
    std::shared_ptr<ThreadObject> thread = LookupAs<ThreadObject>(hThread);
    if (!thread) return FALSE;
    if (!lpExitCode) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    *lpExitCode = thread->ExitCode();
    return TRUE;
}

// 0 with ERROR_INVALID_HANDLE for a handle that is no thread.
OPENND_API DWORD GetThreadId(HANDLE Thread) {
    std::shared_ptr<ThreadObject> thread = LookupAs<ThreadObject>(Thread);
    return thread ? thread->Id() : 0;
}

OPENND_API DWORD GetCurrentThreadId(void) { return static_cast<DWORD>(gettid()); }

}  // extern "C"
