// GetSystemTimes, GetSystemInfo and the process heap.
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "win32/common.h"

namespace opennd::win32 {
namespace {

void SetFileTime(LPFILETIME ft, uint64_t value) {
    if (!ft) return;
    ft->dwLowDateTime = static_cast<DWORD>(value);
    ft->dwHighDateTime = static_cast<DWORD>(value >> 32);
}

// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct CpuTimes {
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
};

bool ReadCpuTimes(CpuTimes *t) {
    std::FILE *f = std::fopen("/proc/stat", "re");
    if (!f) return false;
    char line[512];
    bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    // Fields after idle appeared in Linux 2.5/2.6; older kernels just stop.
    return ok && std::sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu", &t->user, &t->nice, &t->system,
                             &t->idle, &t->iowait, &t->irq, &t->softirq) >= 4;
}

// Online processors 0..63 from /sys/devices/system/cpu/online ("0-3,6"), or
// the first sysconf(_SC_NPROCESSORS_ONLN) if that cannot be read.
DWORD_PTR OnlineProcessorMask() {
    DWORD_PTR mask = 0;
    if (std::FILE *f = std::fopen("/sys/devices/system/cpu/online", "re")) {
        char buf[1024];
        if (std::fgets(buf, sizeof buf, f)) {
            const char *p = buf;
            while (*p >= '0' && *p <= '9') {
                char *end;
                unsigned long lo = std::strtoul(p, &end, 10), hi = lo;
                p = end;
                if (*p == '-') {
                    hi = std::strtoul(p + 1, &end, 10);
                    p = end;
                }
                for (unsigned long c = lo; c <= hi && c < 64; ++c) mask |= DWORD_PTR{1} << c;
                if (*p != ',') break;
                ++p;
            }
        }
        std::fclose(f);
    }
    if (mask == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1) n = 1;
        mask = n >= 64 ? ~DWORD_PTR{0} : (DWORD_PTR{1} << n) - 1;
    }
    return mask;
}

void FillSystemInfo(LPSYSTEM_INFO si) {
    *si = SYSTEM_INFO{};
    long page = sysconf(_SC_PAGESIZE);
    si->dwPageSize = page > 0 ? static_cast<DWORD>(page) : 4096;
    si->dwAllocationGranularity = 64 * 1024;
    si->lpMinimumApplicationAddress = reinterpret_cast<LPVOID>(uintptr_t{0x10000});
    si->dwActiveProcessorMask = OnlineProcessorMask();
    si->dwNumberOfProcessors = static_cast<DWORD>(__builtin_popcountll(si->dwActiveProcessorMask));
#if defined(__x86_64__)
    si->wProcessorArchitecture = PROCESSOR_ARCHITECTURE_AMD64;
    si->dwProcessorType = PROCESSOR_AMD_X8664;
    // The highest user address under 4-level paging (47 bits) less the guard page.
    si->lpMaximumApplicationAddress = reinterpret_cast<LPVOID>((uintptr_t{1} << 47) - si->dwPageSize - 1);
#elif defined(__i386__)
    si->wProcessorArchitecture = PROCESSOR_ARCHITECTURE_INTEL;
    si->dwProcessorType = PROCESSOR_INTEL_PENTIUM;
    si->lpMaximumApplicationAddress = reinterpret_cast<LPVOID>(uintptr_t{0xBFFFFFFF});
#elif defined(__aarch64__)
    si->wProcessorArchitecture = PROCESSOR_ARCHITECTURE_ARM64;
    si->lpMaximumApplicationAddress = reinterpret_cast<LPVOID>((uintptr_t{1} << 48) - 1);
#elif defined(__arm__)
    si->wProcessorArchitecture = PROCESSOR_ARCHITECTURE_ARM;
    si->lpMaximumApplicationAddress = reinterpret_cast<LPVOID>(uintptr_t{0xBFFFFFFF});
#else
    si->wProcessorArchitecture = PROCESSOR_ARCHITECTURE_UNKNOWN;
    si->lpMaximumApplicationAddress = reinterpret_cast<LPVOID>(UINTPTR_MAX >> 1);
#endif
#if defined(__x86_64__) || defined(__i386__)
    // As Windows reports x86 processors: the family, and model << 8 | stepping
    // (extended family and model folded in as CPUID documents).
    unsigned eax, ebx, ecx, edx;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        unsigned family = (eax >> 8) & 0xF, model = (eax >> 4) & 0xF, stepping = eax & 0xF;
        if (family == 0xF) family += (eax >> 20) & 0xFF;
        if (family == 0x6 || family >= 0xF) model |= ((eax >> 16) & 0xF) << 4;
        si->wProcessorLevel = static_cast<WORD>(family);
        si->wProcessorRevision = static_cast<WORD>((model << 8) | stepping);
    }
#endif
}

// The process heap. Each block carries a 16-byte header (so blocks stay
// 16-byte aligned, as MEMORY_ALLOCATION_ALIGNMENT is on 64-bit Windows): the
// size asked for, for HeapSize and for HeapReAlloc's HEAP_ZERO_MEMORY, and a
// tag that lets HeapFree refuse what HeapAlloc did not return.
struct alignas(16) BlockHeader {
    SIZE_T size;
    uint64_t tag;
};
static_assert(sizeof(BlockHeader) == 16);

constexpr uint64_t kTagSeed = 0x4F70656E4E444870ull;  // "OpenNDHp"
// Any value whose bits 0-1 are not both clear is never an object handle.
const HANDLE kProcessHeap = reinterpret_cast<HANDLE>(uintptr_t{0x0EA90002});

uint64_t TagFor(const BlockHeader *h) { return kTagSeed ^ reinterpret_cast<uintptr_t>(h); }

BlockHeader *HeaderOf(LPCVOID mem) {
    if (!mem || (reinterpret_cast<uintptr_t>(mem) & 15) != 0) return nullptr;
    auto *h = reinterpret_cast<BlockHeader *>(const_cast<char *>(static_cast<const char *>(mem)) - sizeof(BlockHeader));
    return h->tag == TagFor(h) ? h : nullptr;
}

bool CheckHeap(HANDLE heap) {
    if (heap == kProcessHeap) return true;
    SetError(ERROR_INVALID_HANDLE);
    return false;
}

LPVOID Publish(BlockHeader *h, SIZE_T size) {
    h->size = size;
    h->tag = TagFor(h);
    return h + 1;
}

constexpr SIZE_T kMaxBlock = PTRDIFF_MAX - sizeof(BlockHeader);

}  // namespace
}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API BOOL GetSystemTimes(LPFILETIME lpIdleTime, LPFILETIME lpKernelTime, LPFILETIME lpUserTime) {
    CpuTimes t;
    long hz = sysconf(_SC_CLK_TCK);
    if (!ReadCpuTimes(&t) || hz <= 0) {
        SetError(ERROR_GEN_FAILURE);
        return FALSE;
    }
    auto to100ns = [hz](unsigned long long ticks) {
        return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 10000000u / static_cast<unsigned>(hz));
    };
    // Idle includes time waiting for I/O; kernel time includes the idle time,
    // as on Windows; user time includes niced processes (and guests, which
    // Linux already counts in user and nice). Steal time is neither.
    unsigned long long idle = t.idle + t.iowait;
    SetFileTime(lpIdleTime, to100ns(idle));
    SetFileTime(lpKernelTime, to100ns(t.system + t.irq + t.softirq + idle));
    SetFileTime(lpUserTime, to100ns(t.user + t.nice));
    return TRUE;
}

OPENND_API void GetSystemInfo(LPSYSTEM_INFO lpSystemInfo) {
    if (lpSystemInfo) FillSystemInfo(lpSystemInfo);
}

OPENND_API void GetNativeSystemInfo(LPSYSTEM_INFO lpSystemInfo) {
    if (lpSystemInfo) FillSystemInfo(lpSystemInfo);
}

OPENND_API HANDLE GetProcessHeap(void) { return kProcessHeap; }

// As on Windows, a failed allocation returns NULL without touching the last
// error (HEAP_GENERATE_EXCEPTIONS cannot raise an exception here).
OPENND_API LPVOID HeapAlloc(HANDLE hHeap, DWORD dwFlags, SIZE_T dwBytes) {
    if (!CheckHeap(hHeap) || dwBytes > kMaxBlock) return nullptr;
    void *p = (dwFlags & HEAP_ZERO_MEMORY) ? std::calloc(1, sizeof(BlockHeader) + dwBytes)
                                            : std::malloc(sizeof(BlockHeader) + dwBytes);
    return p ? Publish(static_cast<BlockHeader *>(p), dwBytes) : nullptr;
}

OPENND_API LPVOID HeapReAlloc(HANDLE hHeap, DWORD dwFlags, LPVOID lpMem, SIZE_T dwBytes) {
    if (!CheckHeap(hHeap)) return nullptr;
    BlockHeader *h = HeaderOf(lpMem);
    if (!h) {
        SetError(ERROR_INVALID_PARAMETER);
        return nullptr;
    }
    if (dwBytes > kMaxBlock) return nullptr;
    SIZE_T old_size = h->size;
    if (dwFlags & HEAP_REALLOC_IN_PLACE_ONLY) {
        if (dwBytes > malloc_usable_size(h) - sizeof(BlockHeader)) return nullptr;
    } else {
        h->tag = 0;  // the old address stops being a block if realloc moves it
        auto *moved = static_cast<BlockHeader *>(std::realloc(h, sizeof(BlockHeader) + dwBytes));
        if (!moved) {
            h->tag = TagFor(h);  // unchanged on failure
            return nullptr;
        }
        h = moved;
    }
    if ((dwFlags & HEAP_ZERO_MEMORY) && dwBytes > old_size)
        std::memset(reinterpret_cast<char *>(h + 1) + old_size, 0, dwBytes - old_size);
    return Publish(h, dwBytes);
}

// NULL is accepted (nothing to free), as on Windows.
OPENND_API BOOL HeapFree(HANDLE hHeap, DWORD dwFlags, LPVOID lpMem) {
    (void)dwFlags;
    if (!CheckHeap(hHeap)) return FALSE;
    if (!lpMem) return TRUE;
    BlockHeader *h = HeaderOf(lpMem);
    if (!h) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    h->tag = 0;  // a stale pointer is then likely refused (freeing twice is still an error, as on Windows)
    std::free(h);
    return TRUE;
}

// (SIZE_T)-1 for a block not from HeapAlloc.
OPENND_API SIZE_T HeapSize(HANDLE hHeap, DWORD dwFlags, LPCVOID lpMem) {
    (void)dwFlags;
    if (!CheckHeap(hHeap)) return static_cast<SIZE_T>(-1);
    const BlockHeader *h = HeaderOf(lpMem);
    if (!h) {
        SetError(ERROR_INVALID_PARAMETER);
        return static_cast<SIZE_T>(-1);
    }
    return h->size;
}

}  // extern "C"
