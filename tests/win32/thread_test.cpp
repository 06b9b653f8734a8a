// CreateThread: a waitable handle that is signalled when the thread ends, the
// exit code, thread ids, CREATE_SUSPENDED and stack sizes.
#include <poll.h>
#include <pthread.h>

#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

namespace {

struct Gate {
    HANDLE go;        // the thread waits for it
    HANDLE running;   // the thread sets it when it starts
    DWORD seen_id = 0;
    DWORD seen_last_error = 0xDEAD;
};

DWORD WINAPI WaitThenReturn42(LPVOID param) {
    auto *g = static_cast<Gate *>(param);
    g->seen_id = GetCurrentThreadId();
    g->seen_last_error = GetLastError();
    SetLastError(1234);  // the thread's own
    SetEvent(g->running);
    WaitForSingleObject(g->go, INFINITE);
    return 42;
}

DWORD WINAPI ReturnParam(LPVOID param) { return static_cast<DWORD>(reinterpret_cast<uintptr_t>(param)); }

}  // namespace

TEST(Thread, HandleIsSignalledWhenTheThreadReturnsWithItsExitCode) {
    Handle go(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle running(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Gate g{go, running};
    DWORD tid = 0;
    SetLastError(77);
    Handle t(CreateThread(nullptr, 0, WaitThenReturn42, &g, 0, &tid));
    ASSERT_NE(t.get(), nullptr);
    ASSERT_EQ(WaitForSingleObject(running, 10000), WAIT_OBJECT_0);

    // Running: the wait times out after its timeout, the exit code is STILL_ACTIVE.
    auto start = Clock::now();
    EXPECT_EQ(WaitForSingleObject(t, 100), WAIT_TIMEOUT);
    EXPECT_GE(MsSince(start), 100);
    DWORD code = 0;
    ASSERT_TRUE(GetExitCodeThread(t, &code));
    EXPECT_EQ(code, static_cast<DWORD>(STILL_ACTIVE));
    EXPECT_EQ(code, 259u);

    // The id the caller got is the thread's own, not the caller's.
    EXPECT_EQ(tid, g.seen_id);
    EXPECT_EQ(GetThreadId(t), tid);
    EXPECT_NE(tid, GetCurrentThreadId());
    EXPECT_EQ(GetCurrentThreadId(), static_cast<DWORD>(ThreadId()));
    EXPECT_EQ(g.seen_last_error, 0u);  // a new thread starts with no error
    EXPECT_EQ(GetLastError(), 77u);    // and does not change ours

    ASSERT_TRUE(SetEvent(go));
    EXPECT_EQ(WaitForSingleObject(t, 10000), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(t, 0), WAIT_OBJECT_0);  // stays signalled
    ASSERT_TRUE(GetExitCodeThread(t, &code));
    EXPECT_EQ(code, 42u);
    EXPECT_EQ(WaitForSingleObjectEx(t, 0, TRUE), WAIT_OBJECT_0);
}

TEST(Thread, ExitCodeIsTheReturnValue) {
    for (uintptr_t value : {uintptr_t{0}, uintptr_t{1}, uintptr_t{0xFFFFFFFF}}) {
        Handle t(CreateThread(nullptr, 0, ReturnParam, reinterpret_cast<LPVOID>(value), 0, nullptr));
        ASSERT_NE(t.get(), nullptr);
        ASSERT_EQ(WaitForSingleObject(t, 10000), WAIT_OBJECT_0);
        DWORD code = 0xDEAD;
        ASSERT_TRUE(GetExitCodeThread(t, &code));
        EXPECT_EQ(code, static_cast<DWORD>(value));
    }
}

// Each thread adds 100000 with InterlockedIncrement; a wait-all on their
// handles returns once all have ended.
TEST(Thread, WaitForAllThreads) {
    constexpr int kThreads = 4;
    static LONG count;
    count = 0;
    auto body = [](LPVOID) -> DWORD {
        for (int i = 0; i < 100000; ++i) InterlockedIncrement(&count);
        return 0;
    };
    std::vector<Handle> threads;
    HANDLE hs[kThreads];
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back(CreateThread(nullptr, 0, body, nullptr, 0, nullptr));
        ASSERT_NE(threads.back().get(), nullptr);
        hs[i] = threads.back();
    }
    EXPECT_EQ(WaitForMultipleObjects(kThreads, hs, TRUE, 30000), WAIT_OBJECT_0);
    EXPECT_EQ(count, kThreads * 100000);
    // Wait-any on ended threads: the lowest index, every time (not consumed).
    EXPECT_EQ(WaitForMultipleObjects(kThreads, hs, FALSE, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForMultipleObjects(kThreads, hs, FALSE, 0), WAIT_OBJECT_0);
}

TEST(Thread, ClosingTheHandleLeavesTheThreadRunning) {
    Handle go(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle running(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle finished(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    struct Args {
        Gate gate;
        HANDLE finished;
    } args{{go, running}, finished};
    auto body = [](LPVOID p) -> DWORD {
        auto *a = static_cast<Args *>(p);
        WaitThenReturn42(&a->gate);
        SetEvent(a->finished);
        return 0;
    };
    HANDLE t = CreateThread(nullptr, 0, body, &args, 0, nullptr);
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(CloseHandle(t));
    EXPECT_FALSE(CloseHandle(t));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    ASSERT_EQ(WaitForSingleObject(running, 10000), WAIT_OBJECT_0);
    ASSERT_TRUE(SetEvent(go));
    EXPECT_EQ(WaitForSingleObject(finished, 10000), WAIT_OBJECT_0);
}

TEST(Thread, CreateSuspendedRunsOnlyAfterResume) {
    Handle go(CreateEventA(nullptr, TRUE, TRUE, nullptr));
    Handle running(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Gate g{go, running};
    DWORD tid = 0;
    Handle t(CreateThread(nullptr, 0, WaitThenReturn42, &g, CREATE_SUSPENDED, &tid));
    ASSERT_NE(t.get(), nullptr);
    EXPECT_NE(tid, 0u);  // the id is known before it runs
    EXPECT_EQ(WaitForSingleObject(running, 200), WAIT_TIMEOUT);
    DWORD code = 0;
    ASSERT_TRUE(GetExitCodeThread(t, &code));
    EXPECT_EQ(code, static_cast<DWORD>(STILL_ACTIVE));
    EXPECT_EQ(ResumeThread(t), 1u);  // the previous suspend count
    EXPECT_EQ(WaitForSingleObject(t, 10000), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(running, 0), WAIT_OBJECT_0);
    EXPECT_EQ(g.seen_id, tid);
    EXPECT_EQ(ResumeThread(t), 0u);  // not suspended
    ASSERT_TRUE(GetExitCodeThread(t, &code));
    EXPECT_EQ(code, 42u);
}

namespace {

DWORD WINAPI ReportStackSize(LPVOID param) {
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
    }
    *static_cast<size_t *>(param) = size;
    return 0;
}

size_t StackOfThread(SIZE_T stack, DWORD flags) {
    size_t size = 0;
    Handle t(CreateThread(nullptr, stack, ReportStackSize, &size, flags, nullptr));
    if (!t.get() || WaitForSingleObject(t, 10000) != WAIT_OBJECT_0) return 0;
    return size;
}

}  // namespace

// dwStackSize is a commit size unless STACK_SIZE_PARAM_IS_A_RESERVATION: a
// small commit size still gets the default stack (Windows reserves at least
// 1 MiB), a reservation gets what it asks for.
TEST(Thread, StackSize) {
    size_t def = StackOfThread(0, 0);
    EXPECT_GE(def, 1024u * 1024u);
    EXPECT_GE(StackOfThread(4096, 0), def);
    EXPECT_GE(StackOfThread(16u << 20, 0), 16u << 20);
    size_t reserved = StackOfThread(256 * 1024, STACK_SIZE_PARAM_IS_A_RESERVATION);
    EXPECT_GE(reserved, 256u * 1024u);
    EXPECT_LT(reserved, def);
}

TEST(Thread, Errors) {
    SetLastError(0);
    EXPECT_EQ(CreateThread(nullptr, 0, nullptr, nullptr, 0, nullptr), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));

    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    DWORD code = 0;
    SetLastError(0);
    EXPECT_FALSE(GetExitCodeThread(ev, &code));  // an event is no thread
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    EXPECT_EQ(ResumeThread(ev), static_cast<DWORD>(-1));
    EXPECT_EQ(GetThreadId(ev), 0u);
    EXPECT_FALSE(GetExitCodeThread(nullptr, &code));

    Handle t(CreateThread(nullptr, 0, ReturnParam, nullptr, 0, nullptr));
    ASSERT_NE(t.get(), nullptr);
    SetLastError(0);
    EXPECT_FALSE(GetExitCodeThread(t, nullptr));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_EQ(WaitForSingleObject(t, 10000), WAIT_OBJECT_0);
}

TEST(Thread, HandleIsPollable) {
    Handle go(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle running(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Gate g{go, running};
    Handle t(CreateThread(nullptr, 0, WaitThenReturn42, &g, 0, nullptr));
    ASSERT_NE(t.get(), nullptr);
    int fd = OpenNdHandleFd(t);
    ASSERT_GE(fd, 0);
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0);
    ASSERT_TRUE(SetEvent(go));
    EXPECT_EQ(poll(&p, 1, 10000), 1);
    EXPECT_EQ(WaitForSingleObject(t, 0), WAIT_OBJECT_0);
}
