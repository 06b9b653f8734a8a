// Last error, time, process id, Winsock start-up.
#include <unistd.h>

#include <thread>

#include "win32_test_util.h"

using namespace win32_test;

TEST(Misc, LastErrorIsPerThread) {
    SetLastError(42);
    DWORD seen_in_thread = 0xDEAD, after_set = 0;
    std::thread t([&] {
        seen_in_thread = GetLastError();
        SetLastError(7);
        after_set = GetLastError();
    });
    t.join();
    EXPECT_EQ(seen_in_thread, 0u);
    EXPECT_EQ(after_set, 7u);
    EXPECT_EQ(GetLastError(), 42u);
    WSASetLastError(10054);
    EXPECT_EQ(GetLastError(), 10054u);  // shared with Winsock's
    SetLastError(5);
    EXPECT_EQ(WSAGetLastError(), 5);
}

TEST(Misc, Clocks) {
    LARGE_INTEGER f, a, b;
    ASSERT_TRUE(QueryPerformanceFrequency(&f));
    EXPECT_EQ(f.QuadPart, 1000000000);
    ASSERT_TRUE(QueryPerformanceCounter(&a));
    ULONGLONG t0 = GetTickCount64();
    DWORD t32 = GetTickCount();
    Sleep(20);
    ASSERT_TRUE(QueryPerformanceCounter(&b));
    EXPECT_GE(b.QuadPart - a.QuadPart, 20 * 1000000LL);
    EXPECT_GE(GetTickCount64() - t0, 19u);  // ms ticks: allow the truncation
    EXPECT_GE(static_cast<DWORD>(GetTickCount() - t32), 19u);
    EXPECT_FALSE(QueryPerformanceCounter(nullptr));
    Sleep(0);
}

TEST(Misc, ProcessId) { EXPECT_EQ(GetCurrentProcessId(), static_cast<DWORD>(getpid())); }

TEST(Misc, WsaStartup) {
    WSADATA data;
    memset(&data, 0xFF, sizeof data);
    EXPECT_EQ(WSAStartup(MAKEWORD(2, 2), &data), 0);
    EXPECT_EQ(data.wVersion, MAKEWORD(2, 2));
    EXPECT_EQ(data.wHighVersion, MAKEWORD(2, 2));
    EXPECT_LT(strlen(data.szDescription), sizeof data.szDescription);
    EXPECT_EQ(WSACleanup(), 0);
}
