// GetSystemTimes, GetSystemInfo and the process heap.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

namespace {

uint64_t Value(const FILETIME &ft) { return (uint64_t{ft.dwHighDateTime} << 32) | ft.dwLowDateTime; }

void Spin(int ms) {
    auto start = Clock::now();
    volatile uint64_t sink = 0;
    while (MsSince(start) < ms) sink = sink + 1;
}

}  // namespace

TEST(SystemTimes, IdleIsPartOfKernelAndTimesGrow) {
    FILETIME idle0, kernel0, user0;
    ASSERT_TRUE(GetSystemTimes(&idle0, &kernel0, &user0));
    EXPECT_LE(Value(idle0), Value(kernel0));  // kernel time includes idle time
    EXPECT_GT(Value(kernel0) + Value(user0), 0u);

    Spin(300);
    FILETIME idle1, kernel1, user1;
    ASSERT_TRUE(GetSystemTimes(&idle1, &kernel1, &user1));
    EXPECT_LE(Value(idle1), Value(kernel1));
    EXPECT_GE(Value(idle1), Value(idle0));
    EXPECT_GE(Value(kernel1), Value(kernel0));
    EXPECT_GE(Value(user1), Value(user0));
    // 300 ms of wall time passed on every processor; the sum counts them all
    // (100 ns units: 1 ms is 10000), less whatever a hypervisor stole.
    uint64_t grown = (Value(kernel1) + Value(user1)) - (Value(kernel0) + Value(user0));
    EXPECT_GE(grown, 100u * 10000u);
    EXPECT_LE(grown, 64u * 60000u * 10000u);  // under a minute per processor: the unit is 100 ns, not 1 ns
}

TEST(SystemTimes, EachOutputIsOptional) {
    FILETIME t{};
    EXPECT_TRUE(GetSystemTimes(nullptr, nullptr, nullptr));
    EXPECT_TRUE(GetSystemTimes(nullptr, &t, nullptr));
    EXPECT_GT(Value(t), 0u);
    EXPECT_TRUE(GetSystemTimes(&t, nullptr, nullptr));
    EXPECT_TRUE(GetSystemTimes(nullptr, nullptr, &t));
}

TEST(SystemInfo, Fields) {
    SYSTEM_INFO si;
    std::memset(&si, 0xCC, sizeof si);
    GetSystemInfo(&si);
    EXPECT_EQ(si.dwPageSize, static_cast<DWORD>(sysconf(_SC_PAGESIZE)));
    EXPECT_EQ(si.dwAllocationGranularity, 65536u);
    EXPECT_GE(si.dwNumberOfProcessors, 1u);
    EXPECT_EQ(si.dwNumberOfProcessors, static_cast<DWORD>(__builtin_popcountll(si.dwActiveProcessorMask)));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    EXPECT_EQ(si.dwNumberOfProcessors, static_cast<DWORD>(online > 64 ? 64 : online));
    EXPECT_LT(si.lpMinimumApplicationAddress, si.lpMaximumApplicationAddress);
    int local = 0;
    EXPECT_LT(static_cast<void *>(&local), si.lpMaximumApplicationAddress);  // the stack is user space
    EXPECT_GT(static_cast<void *>(&local), si.lpMinimumApplicationAddress);
#if defined(__x86_64__)
    EXPECT_EQ(si.wProcessorArchitecture, PROCESSOR_ARCHITECTURE_AMD64);
    EXPECT_EQ(si.dwProcessorType, static_cast<DWORD>(PROCESSOR_AMD_X8664));
    EXPECT_GE(si.wProcessorLevel, 5);  // a family, as Windows reports it (6, 0x17 ...)
#elif defined(__aarch64__)
    EXPECT_EQ(si.wProcessorArchitecture, PROCESSOR_ARCHITECTURE_ARM64);
#endif
    EXPECT_EQ(si.dwOemId & 0xFFFF, si.wProcessorArchitecture);  // the union, as on Windows

    SYSTEM_INFO native;
    GetNativeSystemInfo(&native);
    EXPECT_EQ(std::memcmp(&native, &si, sizeof si), 0);
}

TEST(SystemInfo, WindowsLayout) {
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
    static_assert(sizeof(SYSTEM_INFO) == 48, "x64 SYSTEM_INFO");
    static_assert(offsetof(SYSTEM_INFO, dwPageSize) == 4, "x64 SYSTEM_INFO");
    static_assert(offsetof(SYSTEM_INFO, dwActiveProcessorMask) == 24, "x64 SYSTEM_INFO");
    static_assert(offsetof(SYSTEM_INFO, dwNumberOfProcessors) == 32, "x64 SYSTEM_INFO");
    static_assert(offsetof(SYSTEM_INFO, dwAllocationGranularity) == 40, "x64 SYSTEM_INFO");
    static_assert(offsetof(SYSTEM_INFO, wProcessorRevision) == 46, "x64 SYSTEM_INFO");
#endif
    static_assert(sizeof(FILETIME) == 8, "FILETIME");
    SUCCEED();
}

TEST(Heap, ZeroMemoryFlagZeroes) {
    HANDLE heap = GetProcessHeap();
    ASSERT_NE(heap, nullptr);
    // Dirty blocks of the size first, so the allocator has dirty memory to
    // hand back and only the flag can zero it.
    for (int round = 0; round < 4; ++round) {
        auto *dirty = static_cast<unsigned char *>(HeapAlloc(heap, 0, 1000));
        ASSERT_NE(dirty, nullptr);
        std::memset(dirty, 0xAB, 1000);
        ASSERT_TRUE(HeapFree(heap, 0, dirty));
        auto *p = static_cast<unsigned char *>(HeapAlloc(heap, HEAP_ZERO_MEMORY, 1000));
        ASSERT_NE(p, nullptr);
        for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
        EXPECT_EQ(HeapSize(heap, 0, p), 1000u);
        EXPECT_TRUE(HeapFree(heap, 0, p));
    }
}

TEST(Heap, ZeroBytesGivesDistinctValidBlocks) {
    HANDLE heap = GetProcessHeap();
    void *a = HeapAlloc(heap, 0, 0);
    void *b = HeapAlloc(heap, HEAP_ZERO_MEMORY, 0);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(HeapSize(heap, 0, a), 0u);
    EXPECT_TRUE(HeapFree(heap, 0, a));
    EXPECT_TRUE(HeapFree(heap, 0, b));
}

TEST(Heap, BlocksAreSixteenByteAligned) {
    HANDLE heap = GetProcessHeap();
    std::vector<void *> blocks;
    for (SIZE_T n : {1, 3, 8, 15, 16, 17, 100, 4096, 65537}) {
        void *p = HeapAlloc(heap, 0, n);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
        std::memset(p, 0x5A, n);  // the whole block is writable
        blocks.push_back(p);
    }
    for (void *p : blocks) EXPECT_TRUE(HeapFree(heap, 0, p));
}

TEST(Heap, ReAllocKeepsContentsAndZeroesWhatItAdds) {
    HANDLE heap = GetProcessHeap();
    auto *p = static_cast<unsigned char *>(HeapAlloc(heap, 0, 10));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 10; ++i) p[i] = static_cast<unsigned char>(i + 1);
    auto *q = static_cast<unsigned char *>(HeapReAlloc(heap, HEAP_ZERO_MEMORY, p, 5000));
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(HeapSize(heap, 0, q), 5000u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(q[i], i + 1);
    for (int i = 10; i < 5000; ++i) ASSERT_EQ(q[i], 0) << "byte " << i;
    // Shrinking in place always works; growing in place past what the block
    // has fails and leaves the block as it was.
    auto *r = static_cast<unsigned char *>(HeapReAlloc(heap, HEAP_REALLOC_IN_PLACE_ONLY, q, 20));
    EXPECT_EQ(r, q);
    EXPECT_EQ(HeapSize(heap, 0, q), 20u);
    EXPECT_EQ(HeapReAlloc(heap, HEAP_REALLOC_IN_PLACE_ONLY, q, 1u << 30), nullptr);
    EXPECT_EQ(HeapSize(heap, 0, q), 20u);
    EXPECT_EQ(q[9], 10);
    EXPECT_TRUE(HeapFree(heap, 0, q));
}

TEST(Heap, Errors) {
    HANDLE heap = GetProcessHeap();
    EXPECT_TRUE(HeapFree(heap, 0, nullptr));  // nothing to free
    auto *p = static_cast<char *>(HeapAlloc(heap, HEAP_ZERO_MEMORY, 64));
    ASSERT_NE(p, nullptr);
    // A pointer HeapAlloc did not return (inside a block) is refused.
    SetLastError(0);
    EXPECT_FALSE(HeapFree(heap, 0, p + 32));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_FALSE(HeapFree(heap, 0, p + 1));
    EXPECT_EQ(HeapSize(heap, 0, p + 32), static_cast<SIZE_T>(-1));
    EXPECT_EQ(HeapReAlloc(heap, 0, p + 32, 10), nullptr);
    // Only the process heap is a heap.
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    SetLastError(0);
    EXPECT_EQ(HeapAlloc(ev, 0, 10), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    EXPECT_FALSE(HeapFree(ev, 0, p));
    EXPECT_EQ(HeapAlloc(heap, 0, static_cast<SIZE_T>(-1)), nullptr);  // too large
    // The heap is no waitable object.
    EXPECT_EQ(WaitForSingleObject(heap, 0), WAIT_FAILED);
    EXPECT_TRUE(HeapFree(heap, 0, p));
}
