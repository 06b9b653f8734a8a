/* <ndspi.h> compiled as C (C17, -Wall -Wextra -Werror): Windows' min/max
 * macros, CONTAINING_RECORD, the memory macros, Interlocked*, STATUS_* and
 * the Win32 calls are usable from C as they are from C++. */
#include <ndspi.h>

#include "c_surface.h"

struct Outer {
    char c;
    OVERLAPPED ov;
    ULONG values[4];
};

int Win32CMin(int a, int b) { return min(a, b); }
int Win32CMax(int a, int b) { return max(a, b); }

int Win32CContainingRecord(void) {
    struct Outer o;
    OVERLAPPED *ov = &o.ov;
    ZeroMemory(&o, sizeof o);
    return CONTAINING_RECORD(ov, struct Outer, ov) == &o &&
           CONTAINING_RECORD(&o.values[2], struct Outer, values[2]) == &o &&
           FIELD_OFFSET(struct Outer, values) == (LONG)offsetof(struct Outer, values) &&
           RTL_FIELD_SIZE(struct Outer, values) == 4 * sizeof(ULONG) && ARRAYSIZE(o.values) == 4;
}

int Win32CInterlocked(void) {
    LONG v = 1;
    LONG64 v64 = 0;
    PVOID p = NULL;
    int x = 0;
    return InterlockedIncrement(&v) == 2 && InterlockedExchangeAdd(&v, 3) == 2 && v == 5 &&
           InterlockedCompareExchange(&v, 9, 5) == 5 && v == 9 && InterlockedOr(&v, 16) == 9 &&
           InterlockedIncrement64(&v64) == 1 && InterlockedExchangePointer(&p, &x) == NULL && p == &x &&
           InterlockedCompareExchangePointer(&p, NULL, &x) == &x && p == NULL;
}

int Win32CStatus(HRESULT hr) {
    switch (hr) {
    case STATUS_SUCCESS: return 0;
    case STATUS_PENDING: return 1;
    case STATUS_CANCELLED: return 2;
    case STATUS_CONNECTION_RESET: return 3;
    default: return -1;
    }
}

static DWORD WINAPI Square(LPVOID param) {
    DWORD v = (DWORD)(ULONG_PTR)param;
    return v * v;
}

static int Unused(int a, _In_opt_ void *b) {
    UNREFERENCED_PARAMETER(a);
    UNREFERENCED_PARAMETER(b);
    return 1;
}

int Win32CCalls(void) {
    SYSTEM_INFO si;
    FILETIME idle, kernel, user;
    DWORD code = 0, tid = 0;
    HANDLE t;
    char text[] = "[::1]:80";
    struct sockaddr_in6 sin6;
    INT len = sizeof sin6;
    unsigned char *mem = (unsigned char *)HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, 32);
    int ok = mem != NULL && mem[31] == 0 && HeapFree(GetProcessHeap(), 0, mem);

    GetSystemInfo(&si);
    ok = ok && si.dwNumberOfProcessors >= 1 && si.dwAllocationGranularity == 65536;
    ok = ok && GetSystemTimes(&idle, &kernel, &user);
    t = CreateThread(NULL, 0, Square, (LPVOID)(ULONG_PTR)7, 0, &tid);
    ok = ok && t != NULL && WaitForSingleObject(t, 10000) == WAIT_OBJECT_0 && GetExitCodeThread(t, &code) &&
         code == 49 && tid != 0 && CloseHandle(t);
    ok = ok && WSAStringToAddressA(text, AF_INET6, NULL, (LPSOCKADDR)&sin6, &len) == 0 && ntohs(sin6.sin6_port) == 80;
    return ok && Unused(0, NULL);
}

size_t Win32CSizeOfSystemInfo(void) { return sizeof(SYSTEM_INFO); }

_Static_assert(sizeof(FILETIME) == 8, "FILETIME");
_Static_assert(sizeof(NTSTATUS) == 4 && (NTSTATUS)STATUS_DATA_ERROR == (NTSTATUS)0xC000003Eu, "NTSTATUS");
