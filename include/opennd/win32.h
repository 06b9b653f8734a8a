/* OpenND: the Win32 types and calls that NetworkDirect code is written against.
 *
 * ND applications and providers are written in Windows terms (HRESULT, ULONG,
 * OVERLAPPED, HANDLE, completion ports). This header gives them those names on
 * Linux with the Windows widths (ULONG and DWORD are 32 bits here too), and
 * declares the event and completion-port calls that libopennd implements.
 * It is pulled in by <ndspi.h>, as <windows.h> and <winsock2.h> are on Windows.
 */
#ifndef OPENND_WIN32_H
#define OPENND_WIN32_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#ifdef __cplusplus
#define OPENND_EXTERN_C extern "C"
#define OPENND_EXTERN_C_BEGIN extern "C" {
#define OPENND_EXTERN_C_END }
#else
#define OPENND_EXTERN_C extern
#define OPENND_EXTERN_C_BEGIN
#define OPENND_EXTERN_C_END
#endif

#define OPENND_API __attribute__((visibility("default")))

/* ---- base types (Windows widths, LP64-safe) ---- */
typedef int32_t HRESULT;
typedef int32_t LONG;
typedef int INT;
typedef int32_t BOOL;
typedef uint8_t BOOLEAN;
typedef uint32_t ULONG, DWORD, UINT32, UINT;
typedef int32_t INT32;
typedef uint16_t USHORT, WORD, UINT16;
typedef int16_t SHORT, INT16;
typedef uint8_t BYTE, UCHAR, UINT8;
typedef int8_t INT8;
typedef uint64_t UINT64, ULONGLONG, DWORD64, ULONG64;
typedef int64_t INT64, LONGLONG, LONG64;
typedef size_t SIZE_T;
typedef intptr_t SSIZE_T, LONG_PTR, INT_PTR;
typedef uintptr_t ULONG_PTR, DWORD_PTR, UINT_PTR, KAFFINITY;
typedef char CHAR;
typedef wchar_t WCHAR;
typedef void *PVOID, *LPVOID;
typedef const void *LPCVOID;
typedef void *HANDLE;
typedef HANDLE *PHANDLE, *LPHANDLE;
typedef CHAR *LPSTR;
typedef const CHAR *LPCSTR;
typedef WCHAR *LPWSTR;
typedef const WCHAR *LPCWSTR;
typedef DWORD *LPDWORD, *PDWORD;
typedef ULONG *PULONG;
typedef ULONG_PTR *PULONG_PTR;
typedef BOOL *LPBOOL;
typedef INT *LPINT;
#ifndef VOID
#define VOID void
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#ifndef CONST
#define CONST const
#endif

/* SAL annotations: the new-style names only. The old __in/__out names would
 * break the C++ standard library and are deliberately not defined. */
#define _In_
#define _In_opt_
#define _Out_
#define _Out_opt_
#define _Inout_
#define _Inout_opt_
#define _In_reads_(n)
#define _In_reads_opt_(n)
#define _Out_writes_(n)
#define _Out_writes_opt_(n)
#define _Out_writes_bytes_(n)
#define _Out_writes_bytes_opt_(n)
#define _Inout_updates_bytes_opt_(n)
#define _In_reads_bytes_(n)
#define _In_reads_bytes_opt_(n)
#define _Outptr_
#define _Deref_out_range_(a, b)
#define _Success_(x)
#define _Check_return_
#define _Ret_range_(a, b)

/* ---- GUID / IID ---- */
typedef struct _GUID {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID, IID, CLSID;
typedef GUID *LPGUID;
typedef const GUID *LPCGUID;

#ifdef __cplusplus
typedef const GUID &REFGUID;
typedef const IID &REFIID;
typedef const CLSID &REFCLSID;
inline bool IsEqualGUID(REFGUID a, REFGUID b) { return memcmp(&a, &b, sizeof(GUID)) == 0; }
inline bool operator==(REFGUID a, REFGUID b) { return IsEqualGUID(a, b); }
inline bool operator!=(REFGUID a, REFGUID b) { return !IsEqualGUID(a, b); }
#define IsEqualIID(a, b) IsEqualGUID(a, b)
#define IsEqualCLSID(a, b) IsEqualGUID(a, b)
#else
typedef const GUID *REFGUID;
typedef const IID *REFIID;
typedef const CLSID *REFCLSID;
#define IsEqualGUID(a, b) (memcmp((a), (b), sizeof(GUID)) == 0)
#endif

/* Defines a GUID constant. Header-safe: each definition is an inline
 * (C++17) variable, so including it in many translation units is fine. */
#ifdef __cplusplus
#define OPENND_DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
    inline constexpr GUID name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}
#else
#define OPENND_DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
    static const GUID name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}
#endif
#ifndef DEFINE_GUID
#define DEFINE_GUID OPENND_DEFINE_GUID
#endif

/* ---- HRESULT helpers and generic codes ---- */
#define SUCCEEDED(hr) (((HRESULT)(hr)) >= 0)
#define FAILED(hr) (((HRESULT)(hr)) < 0)
#define S_OK ((HRESULT)0x00000000L)
#define S_FALSE ((HRESULT)0x00000001L)
#define E_NOTIMPL ((HRESULT)0x80004001L)
#define E_NOINTERFACE ((HRESULT)0x80004002L)
#define E_POINTER ((HRESULT)0x80004003L)
#define E_FAIL ((HRESULT)0x80004005L)
#define E_OUTOFMEMORY ((HRESULT)0x8007000EL)
#define E_INVALIDARG ((HRESULT)0x80070057L)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111L)
#define HRESULT_FROM_WIN32(x) \
    ((HRESULT)(x) <= 0 ? ((HRESULT)(x)) : ((HRESULT)(((x) & 0x0000FFFF) | (7 << 16) | 0x80000000)))

/* ---- Win32 error codes used by the calls below (GetLastError) ---- */
#define ERROR_SUCCESS 0L
#define NO_ERROR 0L
#define ERROR_INVALID_FUNCTION 1L
#define ERROR_FILE_NOT_FOUND 2L
#define ERROR_ACCESS_DENIED 5L
#define ERROR_INVALID_HANDLE 6L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define ERROR_BAD_FORMAT 11L
#define ERROR_INVALID_DATA 13L
#define ERROR_OUTOFMEMORY 14L
#define ERROR_BAD_COMMAND 22L
#define ERROR_GEN_FAILURE 31L
#define ERROR_SHARING_VIOLATION 32L
#define ERROR_NOT_SUPPORTED 50L
#define ERROR_NETNAME_DELETED 64L
#define ERROR_INVALID_PARAMETER 87L
#define ERROR_SEM_TIMEOUT 121L
#define ERROR_INSUFFICIENT_BUFFER 122L
#define ERROR_MOD_NOT_FOUND 126L
#define ERROR_PROC_NOT_FOUND 127L
#define ERROR_BUSY 170L
#define ERROR_ALREADY_EXISTS 183L
#define ERROR_MORE_DATA 234L
#define ERROR_NO_MORE_ITEMS 259L
#define ERROR_MR_MID_NOT_FOUND 317L
#define ERROR_ABANDONED_WAIT_0 735L
#define ERROR_OPERATION_ABORTED 995L
#define ERROR_IO_INCOMPLETE 996L
#define ERROR_IO_PENDING 997L
#define ERROR_NOACCESS 998L
#define ERROR_CONNECTION_REFUSED 1225L
#define ERROR_ADDRESS_ALREADY_ASSOCIATED 1227L
#define ERROR_CONNECTION_INVALID 1229L
#define ERROR_NETWORK_UNREACHABLE 1231L
#define ERROR_HOST_UNREACHABLE 1232L
#define ERROR_CONNECTION_ABORTED 1236L
#define ERROR_INTERNAL_ERROR 1359L
#define ERROR_NO_SYSTEM_RESOURCES 1450L
#define ERROR_TIMEOUT 1460L
#define ERROR_INVALID_USER_BUFFER 1784L

/* ---- waits ---- */
#define INFINITE 0xFFFFFFFFu
#define WAIT_OBJECT_0 0x00000000u
#define WAIT_ABANDONED 0x00000080u
#define WAIT_IO_COMPLETION 0x000000C0u
#define WAIT_TIMEOUT 0x00000102u
#define WAIT_FAILED 0xFFFFFFFFu
#define MAXIMUM_WAIT_OBJECTS 64
#define INVALID_HANDLE_VALUE ((HANDLE)(LONG_PTR)-1)

/* ---- OVERLAPPED ---- */
typedef struct _OVERLAPPED {
    ULONG_PTR Internal;     /* final status (an ND HRESULT / NTSTATUS) */
    ULONG_PTR InternalHigh; /* bytes transferred */
    union {
        struct {
            DWORD Offset;
            DWORD OffsetHigh;
        };
        PVOID Pointer;
    };
    HANDLE hEvent; /* bit 0 set: signal the event only, post no completion packet */
} OVERLAPPED, *LPOVERLAPPED;

typedef struct _OVERLAPPED_ENTRY {
    ULONG_PTR lpCompletionKey;
    LPOVERLAPPED lpOverlapped;
    ULONG_PTR Internal;
    DWORD dwNumberOfBytesTransferred;
} OVERLAPPED_ENTRY, *LPOVERLAPPED_ENTRY;

#define STATUS_PENDING ((DWORD)0x00000103L)
#define HasOverlappedIoCompleted(lpOverlapped) (((DWORD)(lpOverlapped)->Internal) != STATUS_PENDING)

typedef struct _SECURITY_ATTRIBUTES {
    DWORD nLength;
    LPVOID lpSecurityDescriptor;
    BOOL bInheritHandle;
} SECURITY_ATTRIBUTES, *LPSECURITY_ATTRIBUTES;

typedef union _LARGE_INTEGER {
    struct {
        DWORD LowPart;
        LONG HighPart;
    };
    LONGLONG QuadPart;
} LARGE_INTEGER;

/* ---- sockets (Winsock names over the BSD types) ---- */
typedef struct sockaddr SOCKADDR, *PSOCKADDR, *LPSOCKADDR;
typedef struct sockaddr_in SOCKADDR_IN, *PSOCKADDR_IN;
typedef struct sockaddr_in6 SOCKADDR_IN6, *PSOCKADDR_IN6;
typedef struct sockaddr_storage SOCKADDR_STORAGE, *PSOCKADDR_STORAGE;
typedef int SOCKET;
#define INVALID_SOCKET (-1)
#define SOCKET_ERROR (-1)

typedef struct _SOCKET_ADDRESS {
    LPSOCKADDR lpSockaddr;
    INT iSockaddrLength;
} SOCKET_ADDRESS, *PSOCKET_ADDRESS, *LPSOCKET_ADDRESS;

typedef struct _SOCKET_ADDRESS_LIST {
    INT iAddressCount;
    SOCKET_ADDRESS Address[1];
} SOCKET_ADDRESS_LIST, *PSOCKET_ADDRESS_LIST, *LPSOCKET_ADDRESS_LIST;

#define WSADESCRIPTION_LEN 256
#define WSASYS_STATUS_LEN 128
typedef struct WSAData {
    WORD wVersion;
    WORD wHighVersion;
    unsigned short iMaxSockets;
    unsigned short iMaxUdpDg;
    char *lpVendorInfo;
    char szDescription[WSADESCRIPTION_LEN + 1];
    char szSystemStatus[WSASYS_STATUS_LEN + 1];
} WSADATA, *LPWSADATA;
#ifndef MAKEWORD
#define MAKEWORD(a, b) ((WORD)(((BYTE)(a)) | ((WORD)((BYTE)(b))) << 8))
#endif

#ifdef __cplusplus
/* ---- COM-lite ---- */
#define STDMETHODCALLTYPE
#define STDMETHOD(method) virtual HRESULT STDMETHODCALLTYPE method
#define STDMETHOD_(type, method) virtual type STDMETHODCALLTYPE method
#define STDMETHODIMP HRESULT STDMETHODCALLTYPE
#define STDMETHODIMP_(type) type STDMETHODCALLTYPE
#define PURE = 0
#define STDAPI extern "C" HRESULT
#define WINAPI
#define CALLBACK
#define interface struct

OPENND_DEFINE_GUID(IID_IUnknown, 0x00000000, 0x0000, 0x0000, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46);
OPENND_DEFINE_GUID(IID_IClassFactory, 0x00000001, 0x0000, 0x0000, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46);

/* No virtual destructor and nothing else virtual: slots 0-2 exactly as COM. */
struct IUnknown {
    STDMETHOD(QueryInterface)(REFIID riid, void **ppvObject) PURE;
    STDMETHOD_(ULONG, AddRef)() PURE;
    STDMETHOD_(ULONG, Release)() PURE;
};
typedef IUnknown *LPUNKNOWN;
#else
#define WINAPI
#define CALLBACK
#endif

/* ---- calls implemented by libopennd ---- */
OPENND_EXTERN_C_BEGIN

OPENND_API DWORD GetLastError(void);
OPENND_API void SetLastError(DWORD dwErrCode);

OPENND_API HANDLE CreateEventA(LPSECURITY_ATTRIBUTES lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
                               LPCSTR lpName);
OPENND_API HANDLE CreateEventW(LPSECURITY_ATTRIBUTES lpEventAttributes, BOOL bManualReset, BOOL bInitialState,
                               LPCWSTR lpName);
#define CreateEvent CreateEventA
OPENND_API BOOL SetEvent(HANDLE hEvent);
OPENND_API BOOL ResetEvent(HANDLE hEvent);
OPENND_API DWORD WaitForSingleObject(HANDLE hHandle, DWORD dwMilliseconds);
OPENND_API DWORD WaitForSingleObjectEx(HANDLE hHandle, DWORD dwMilliseconds, BOOL bAlertable);
OPENND_API DWORD WaitForMultipleObjects(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll, DWORD dwMilliseconds);
OPENND_API DWORD WaitForMultipleObjectsEx(DWORD nCount, const HANDLE *lpHandles, BOOL bWaitAll,
                                          DWORD dwMilliseconds, BOOL bAlertable);
OPENND_API BOOL CloseHandle(HANDLE hObject);

OPENND_API HANDLE CreateIoCompletionPort(HANDLE FileHandle, HANDLE ExistingCompletionPort, ULONG_PTR CompletionKey,
                                         DWORD NumberOfConcurrentThreads);
OPENND_API BOOL GetQueuedCompletionStatus(HANDLE CompletionPort, LPDWORD lpNumberOfBytesTransferred,
                                          PULONG_PTR lpCompletionKey, LPOVERLAPPED *lpOverlapped,
                                          DWORD dwMilliseconds);
OPENND_API BOOL GetQueuedCompletionStatusEx(HANDLE CompletionPort, LPOVERLAPPED_ENTRY lpCompletionPortEntries,
                                            ULONG ulCount, PULONG ulNumEntriesRemoved, DWORD dwMilliseconds,
                                            BOOL fAlertable);
OPENND_API BOOL PostQueuedCompletionStatus(HANDLE CompletionPort, DWORD dwNumberOfBytesTransferred,
                                           ULONG_PTR dwCompletionKey, LPOVERLAPPED lpOverlapped);
/* Win32 GetOverlappedResult on an OVERLAPPED (the ND objects' own method is
 * IND2Overlapped::GetOverlappedResult, which is what ND code should call). */
OPENND_API BOOL GetOverlappedResult(HANDLE hFile, LPOVERLAPPED lpOverlapped, LPDWORD lpNumberOfBytesTransferred,
                                    BOOL bWait);
#define FILE_SKIP_COMPLETION_PORT_ON_SUCCESS 0x1
#define FILE_SKIP_SET_EVENT_ON_HANDLE 0x2
OPENND_API BOOL SetFileCompletionNotificationModes(HANDLE FileHandle, UCHAR Flags);

OPENND_API void Sleep(DWORD dwMilliseconds);
OPENND_API DWORD GetTickCount(void);
OPENND_API ULONGLONG GetTickCount64(void);
OPENND_API BOOL QueryPerformanceCounter(LARGE_INTEGER *lpPerformanceCount);
OPENND_API BOOL QueryPerformanceFrequency(LARGE_INTEGER *lpFrequency);
OPENND_API DWORD GetCurrentProcessId(void);

OPENND_API int WSAStartup(WORD wVersionRequested, LPWSADATA lpWSAData);
OPENND_API int WSACleanup(void);
OPENND_API int WSAGetLastError(void);
OPENND_API void WSASetLastError(int iError);

/* OpenND extensions for handles. */
/* The file descriptor behind a handle (an eventfd that becomes readable when
 * the object is signalled, or a completion is delivered through an overlapped
 * file), for poll/epoll. -1 with ERROR_INVALID_HANDLE for a bad handle. */
OPENND_API int OpenNdHandleFd(HANDLE h);

OPENND_EXTERN_C_END

#endif /* OPENND_WIN32_H */
