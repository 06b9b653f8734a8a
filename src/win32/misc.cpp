// Per-thread last error, status -> Win32 error mapping, time, process id and
// the Winsock start-up calls (sockets need no initialisation on Linux).
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include "ndstatus.h"
#include "win32/common.h"

namespace opennd::win32 {
namespace {

thread_local DWORD t_last_error = ERROR_SUCCESS;

uint64_t MonotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

DWORD GetError() { return t_last_error; }
void SetError(DWORD error) { t_last_error = error; }

// What RtlNtStatusToDosError gives for the statuses ND requests complete
// with; anything else is ERROR_MR_MID_NOT_FOUND, as on Windows.
DWORD Win32ErrorFromStatus(uint32_t status) {
    if (status >= 0xC00000EFu && status <= 0xC00000FAu) return ERROR_INVALID_PARAMETER;  // ND_INVALID_PARAMETER_1..12
    static constexpr struct {
        HRESULT status;
        DWORD error;
    } kMap[] = {
        {ND_CANCELED, ERROR_OPERATION_ABORTED},
        {ND_IO_TIMEOUT, ERROR_SEM_TIMEOUT},
        {ND_CONNECTION_REFUSED, ERROR_CONNECTION_REFUSED},
        {ND_CONNECTION_ABORTED, ERROR_CONNECTION_ABORTED},
        {ND_CONNECTION_INVALID, ERROR_CONNECTION_INVALID},
        {ND_BUFFER_OVERFLOW, ERROR_MORE_DATA},
        {ND_UNSUCCESSFUL, ERROR_GEN_FAILURE},
        {ND_ACCESS_VIOLATION, ERROR_NOACCESS},
        {ND_INVALID_PARAMETER, ERROR_INVALID_PARAMETER},
        {ND_NO_MEMORY, ERROR_NOT_ENOUGH_MEMORY},
        {ND_INSUFFICIENT_RESOURCES, ERROR_NO_SYSTEM_RESOURCES},
        {ND_NOT_SUPPORTED, ERROR_NOT_SUPPORTED},
        {STATUS_BUFFER_TOO_SMALL, ERROR_INSUFFICIENT_BUFFER},
        {ND_INVALID_BUFFER_SIZE, ERROR_INVALID_USER_BUFFER},
        {ND_INVALID_DEVICE_REQUEST, ERROR_INVALID_FUNCTION},
        {ND_INVALID_DEVICE_STATE, ERROR_BAD_COMMAND},
        {ND_INTERNAL_ERROR, ERROR_INTERNAL_ERROR},
        {ND_DEVICE_BUSY, ERROR_BUSY},
        {ND_NO_MORE_ENTRIES, ERROR_NO_MORE_ITEMS},
        {ND_SHARING_VIOLATION, ERROR_SHARING_VIOLATION},
        {STATUS_ADDRESS_ALREADY_ASSOCIATED, ERROR_ADDRESS_ALREADY_ASSOCIATED},  // COMPAT: Bind to a port in use
        {STATUS_CONNECTION_DISCONNECTED, ERROR_NETNAME_DELETED},
        {STATUS_CONNECTION_RESET, ERROR_NETNAME_DELETED},
        {ND_NETWORK_UNREACHABLE, ERROR_NETWORK_UNREACHABLE},
        {ND_HOST_UNREACHABLE, ERROR_HOST_UNREACHABLE},
    };
    for (const auto &m : kMap)
        if (static_cast<uint32_t>(m.status) == status) return m.error;
    return ERROR_MR_MID_NOT_FOUND;
}

}  // namespace opennd::win32

using namespace opennd::win32;

extern "C" {

OPENND_API DWORD GetLastError(void) { return GetError(); }
OPENND_API void SetLastError(DWORD dwErrCode) { SetError(dwErrCode); }
OPENND_API int WSAGetLastError(void) { return static_cast<int>(GetError()); }
OPENND_API void WSASetLastError(int iError) { SetError(static_cast<DWORD>(iError)); }

OPENND_API void Sleep(DWORD dwMilliseconds) {
    if (dwMilliseconds == 0) {
        sched_yield();  // as Windows: give up the rest of the time slice
        return;
    }
    if (dwMilliseconds == INFINITE) {
        for (;;) pause();
    }
    timespec left{static_cast<time_t>(dwMilliseconds / 1000), static_cast<long>(dwMilliseconds % 1000) * 1000000L};
    while (nanosleep(&left, &left) < 0 && errno == EINTR) {
    }
}

OPENND_API ULONGLONG GetTickCount64(void) { return MonotonicNs() / 1000000u; }
OPENND_API DWORD GetTickCount(void) { return static_cast<DWORD>(GetTickCount64()); }

// Nanosecond ticks: the frequency is 1e9.
OPENND_API BOOL QueryPerformanceCounter(LARGE_INTEGER *lpPerformanceCount) {
    if (!lpPerformanceCount) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    lpPerformanceCount->QuadPart = static_cast<LONGLONG>(MonotonicNs());
    return TRUE;
}

OPENND_API BOOL QueryPerformanceFrequency(LARGE_INTEGER *lpFrequency) {
    if (!lpFrequency) {
        SetError(ERROR_INVALID_PARAMETER);
        return FALSE;
    }
    lpFrequency->QuadPart = 1000000000;
    return TRUE;
}

OPENND_API DWORD GetCurrentProcessId(void) { return static_cast<DWORD>(getpid()); }

OPENND_API int WSAStartup(WORD wVersionRequested, LPWSADATA lpWSAData) {
    (void)wVersionRequested;
    if (!lpWSAData) return WSAEFAULT;
    *lpWSAData = WSADATA{};
    lpWSAData->wVersion = MAKEWORD(2, 2);
    lpWSAData->wHighVersion = MAKEWORD(2, 2);
    std::snprintf(lpWSAData->szDescription, sizeof lpWSAData->szDescription, "OpenND Winsock over BSD sockets");
    std::snprintf(lpWSAData->szSystemStatus, sizeof lpWSAData->szSystemStatus, "Running");
    return 0;
}

OPENND_API int WSACleanup(void) { return 0; }

}  // extern "C"
