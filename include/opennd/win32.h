/* OpenND: the Win32 types and calls that NetworkDirect code is written against.
 *
 * ND applications and providers are written in Windows terms (HRESULT, ULONG,
 * OVERLAPPED, HANDLE, completion ports). This header gives them those names on
 * Linux with the Windows widths (ULONG and DWORD are 32 bits here too), and
 * declares the event and completion-port calls that libopennd implements,
 * plus the rest of what ND programs take for granted from <windows.h>:
 * NTSTATUS codes, memory and record macros, min/max, Interlocked*, threads,
 * the process heap, system information and WSAStringToAddress.
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
typedef LONG *PLONG, *LPLONG;
typedef CHAR *PCHAR;
typedef BYTE *PBYTE, *LPBYTE;
typedef USHORT *PUSHORT;
typedef LONG NTSTATUS;
typedef NTSTATUS *PNTSTATUS;
#ifndef NT_SUCCESS
#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)
#endif
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

/* SAL annotations (_In_, _Out_writes_(n) ...): defined to nothing. */
#include "opennd/sal.h"

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

/* ---- Winsock error codes (WSAGetLastError) ---- */
#define WSAEACCES 10013
#define WSAEFAULT 10014
#define WSAEINVAL 10022
#define WSAEWOULDBLOCK 10035
#define WSAEAFNOSUPPORT 10047
#define WSAEADDRINUSE 10048
#define WSAEADDRNOTAVAIL 10049
#define WSAENETDOWN 10050
#define WSAENETUNREACH 10051
#define WSAECONNABORTED 10053
#define WSAECONNRESET 10054
#define WSAENOBUFS 10055
#define WSAETIMEDOUT 10060
#define WSAECONNREFUSED 10061
#define WSAEHOSTUNREACH 10065
#define WSANOTINITIALISED 10093
#define WSAEPROVIDERFAILEDINIT 10106
#define WSASYSCALLFAILURE 10107
#define WSANO_RECOVERY 11003

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

/* STATUS_SUCCESS, STATUS_PENDING, STATUS_CANCELLED ... (NTSTATUS codes). */
#include "opennd/ntstatus.h"
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

/* ---- records, parameters and memory (winnt.h) ---- */
/* FIELD_OFFSET and CONTAINING_RECORD: in C with offsetof; in C++ for classes
 * that are not standard-layout too (a request class with virtual methods and
 * an OVERLAPPED member), where offsetof warns (-Winvalid-offsetof). With
 * Clang: the compiler's offsetof with that warning off for the expression
 * (Clang's -fsanitize=undefined reports Windows' form as a member access
 * through a null pointer). With GCC, which allows no _Pragma inside an
 * expression: as Windows writes them (through a null pointer), which GCC
 * folds to a constant, also under -fsanitize=undefined. */
#if defined(__cplusplus) && defined(__clang__)
#define OPENND_OFFSET_OF_(type, field)                                                            \
    (_Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Winvalid-offsetof\"") \
         __builtin_offsetof(type, field) _Pragma("clang diagnostic pop"))
#ifndef FIELD_OFFSET
#define FIELD_OFFSET(type, field) ((LONG)OPENND_OFFSET_OF_(type, field))
#endif
#ifndef CONTAINING_RECORD
#define CONTAINING_RECORD(address, type, field) ((type *)((PCHAR)(address) - OPENND_OFFSET_OF_(type, field)))
#endif
#elif defined(__cplusplus)
#ifndef FIELD_OFFSET
#define FIELD_OFFSET(type, field) ((LONG)(LONG_PTR)(&((type *)0)->field))
#endif
#ifndef CONTAINING_RECORD
#define CONTAINING_RECORD(address, type, field) \
    ((type *)((PCHAR)(address) - (ULONG_PTR)(&((type *)0)->field)))
#endif
#else
#ifndef FIELD_OFFSET
#define FIELD_OFFSET(type, field) ((LONG)offsetof(type, field))
#endif
#ifndef CONTAINING_RECORD
#define CONTAINING_RECORD(address, type, field) ((type *)((PCHAR)(address) - offsetof(type, field)))
#endif
#endif
#ifndef RTL_FIELD_SIZE
#define RTL_FIELD_SIZE(type, field) (sizeof(((type *)0)->field))
#endif
#ifndef ARRAYSIZE
#define ARRAYSIZE(A) (sizeof(A) / sizeof((A)[0]))
#endif
/* As Windows, but a cast to void rather than a bare (P), which GCC reports as
 * a statement with no effect. */
#ifndef UNREFERENCED_PARAMETER
#define UNREFERENCED_PARAMETER(P) ((void)(P))
#endif
#ifndef DBG_UNREFERENCED_PARAMETER
#define DBG_UNREFERENCED_PARAMETER(P) ((void)(P))
#endif
#ifndef DBG_UNREFERENCED_LOCAL_VARIABLE
#define DBG_UNREFERENCED_LOCAL_VARIABLE(V) ((void)(V))
#endif

#ifndef RtlEqualMemory
#define RtlEqualMemory(Destination, Source, Length) (!memcmp((Destination), (Source), (Length)))
#endif
#ifndef RtlMoveMemory
#define RtlMoveMemory(Destination, Source, Length) memmove((Destination), (Source), (Length))
#endif
#ifndef RtlCopyMemory
#define RtlCopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#endif
#ifndef RtlFillMemory
#define RtlFillMemory(Destination, Length, Fill) memset((Destination), (Fill), (Length))
#endif
#ifndef RtlZeroMemory
#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#endif
#ifndef EqualMemory
#define EqualMemory RtlEqualMemory
#endif
#ifndef MoveMemory
#define MoveMemory RtlMoveMemory
#endif
#ifndef CopyMemory
#define CopyMemory RtlCopyMemory
#endif
#ifndef FillMemory
#define FillMemory RtlFillMemory
#endif
#ifndef ZeroMemory
#define ZeroMemory RtlZeroMemory
#endif

#ifdef __cplusplus
#define OPENND_INLINE inline
#else
#define OPENND_INLINE static inline
#endif

OPENND_EXTERN_C_BEGIN
/* Zeroes memory with stores the compiler may not remove (for secrets). */
OPENND_INLINE PVOID RtlSecureZeroMemory(PVOID ptr, SIZE_T cnt) {
    volatile char *p = (volatile char *)ptr;
    while (cnt--) *p++ = 0;
    return ptr;
}
OPENND_EXTERN_C_END
#ifndef SecureZeroMemory
#define SecureZeroMemory RtlSecureZeroMemory
#endif

/* ---- min and max (windef.h), unless NOMINMAX ----
 * C gets Windows' macros. C++ gets function templates in the global namespace
 * instead: a function-like min/max macro would break std::min, std::max and
 * std::numeric_limits<T>::max() in any standard header included after this
 * one. min(a, b) is (a < b ? a : b) and max(a, b) is (a > b ? a : b) in the
 * arguments' common type, as the macros compute it; std::min and std::max are
 * untouched, and with `using namespace std` an unqualified call on two
 * arguments of one type picks std's (the more specialised template). */
#ifndef NOMINMAX
#ifdef __cplusplus
#include <type_traits>
#ifndef min
template <class A, class B>
constexpr typename std::common_type<A, B>::type min(const A &a, const B &b) {
    return (a < b) ? a : b;
}
#endif
#ifndef max
template <class A, class B>
constexpr typename std::common_type<A, B>::type max(const A &a, const B &b) {
    return (a > b) ? a : b;
}
#endif
#else
#ifndef min
#define min(a, b) (((a) < (b)) ? (a) : (b))
#endif
#ifndef max
#define max(a, b) (((a) > (b)) ? (a) : (b))
#endif
#endif
#endif /* NOMINMAX */

/* ---- Interlocked* (winnt.h) ----
 * Atomic read-modify-writes on LONG, LONG64 and pointers with full-barrier
 * semantics, as on Windows: no load or store moves across one in either
 * direction. On x86 the locked instruction is that barrier; elsewhere a
 * sequentially consistent fence follows the operation (as MSVC emits a DMB
 * after each on ARM64). Return values as Windows: Increment, Decrement and
 * Add return the new value; Exchange, ExchangeAdd, CompareExchange, Or, And
 * and Xor the old one. */
#if defined(__x86_64__) || defined(__i386__)
#define OPENND_INTERLOCKED_FENCE() ((void)0)
#else
#define OPENND_INTERLOCKED_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#define OPENND_INTERLOCKED_RMW(type, name, builtin)                  \
    OPENND_INLINE type name(type volatile *Target, type Value) {     \
        type r = builtin(Target, Value, __ATOMIC_SEQ_CST);           \
        OPENND_INTERLOCKED_FENCE();                                  \
        return r;                                                    \
    }

OPENND_EXTERN_C_BEGIN
OPENND_INTERLOCKED_RMW(LONG, InterlockedExchangeAdd, __atomic_fetch_add)
OPENND_INTERLOCKED_RMW(LONG, InterlockedAdd, __atomic_add_fetch)
OPENND_INTERLOCKED_RMW(LONG, InterlockedOr, __atomic_fetch_or)
OPENND_INTERLOCKED_RMW(LONG, InterlockedAnd, __atomic_fetch_and)
OPENND_INTERLOCKED_RMW(LONG, InterlockedXor, __atomic_fetch_xor)
OPENND_INTERLOCKED_RMW(LONG, InterlockedExchange, __atomic_exchange_n)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedExchangeAdd64, __atomic_fetch_add)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedAdd64, __atomic_add_fetch)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedOr64, __atomic_fetch_or)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedAnd64, __atomic_fetch_and)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedXor64, __atomic_fetch_xor)
OPENND_INTERLOCKED_RMW(LONG64, InterlockedExchange64, __atomic_exchange_n)
OPENND_INTERLOCKED_RMW(PVOID, InterlockedExchangePointer, __atomic_exchange_n)
#undef OPENND_INTERLOCKED_RMW

OPENND_INLINE LONG InterlockedIncrement(LONG volatile *Addend) { return InterlockedAdd(Addend, 1); }
OPENND_INLINE LONG InterlockedDecrement(LONG volatile *Addend) { return InterlockedAdd(Addend, -1); }
OPENND_INLINE LONG64 InterlockedIncrement64(LONG64 volatile *Addend) { return InterlockedAdd64(Addend, 1); }
OPENND_INLINE LONG64 InterlockedDecrement64(LONG64 volatile *Addend) { return InterlockedAdd64(Addend, -1); }

/* Stores ExChange if *Destination == Comperand; returns the initial value. */
OPENND_INLINE LONG InterlockedCompareExchange(LONG volatile *Destination, LONG ExChange, LONG Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    OPENND_INTERLOCKED_FENCE();
    return Comperand;
}
OPENND_INLINE LONG64 InterlockedCompareExchange64(LONG64 volatile *Destination, LONG64 ExChange, LONG64 Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, ExChange, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    OPENND_INTERLOCKED_FENCE();
    return Comperand;
}
OPENND_INLINE PVOID InterlockedCompareExchangePointer(PVOID volatile *Destination, PVOID Exchange, PVOID Comperand) {
    __atomic_compare_exchange_n(Destination, &Comperand, Exchange, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    OPENND_INTERLOCKED_FENCE();
    return Comperand;
}
OPENND_EXTERN_C_END

/* A full memory barrier, and the pause of a spin-wait loop. Under
 * ThreadSanitizer, which does not model fences, a sequentially consistent
 * read-modify-write (also a full barrier) stands in for the fence. */
#if defined(__SANITIZE_THREAD__)
#define OPENND_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPENND_TSAN 1
#endif
#endif
#ifndef MemoryBarrier
#ifdef OPENND_TSAN
OPENND_INLINE void OpenNdMemoryBarrier(void) {
    static volatile long fence_word;
    __atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
}
#define MemoryBarrier() OpenNdMemoryBarrier()
#else
#define MemoryBarrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#endif
#ifndef YieldProcessor
#if defined(__x86_64__) || defined(__i386__)
#define YieldProcessor() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define YieldProcessor() __asm__ __volatile__("yield" ::: "memory")
#else
#define YieldProcessor() ((void)0)
#endif
#endif

/* ---- system information and times ---- */
/* A count of 100-nanosecond intervals in two halves. */
typedef struct _FILETIME {
    DWORD dwLowDateTime;
    DWORD dwHighDateTime;
} FILETIME, *PFILETIME, *LPFILETIME;

#define PROCESSOR_ARCHITECTURE_INTEL 0
#define PROCESSOR_ARCHITECTURE_ARM 5
#define PROCESSOR_ARCHITECTURE_AMD64 9
#define PROCESSOR_ARCHITECTURE_ARM64 12
#define PROCESSOR_ARCHITECTURE_UNKNOWN 0xFFFF
#define PROCESSOR_INTEL_PENTIUM 586
#define PROCESSOR_AMD_X8664 8664

typedef struct _SYSTEM_INFO {
    union {
        DWORD dwOemId; /* obsolete */
        struct {
            WORD wProcessorArchitecture; /* PROCESSOR_ARCHITECTURE_* */
            WORD wReserved;
        };
    };
    DWORD dwPageSize;
    LPVOID lpMinimumApplicationAddress;
    LPVOID lpMaximumApplicationAddress;
    DWORD_PTR dwActiveProcessorMask; /* online processors 0..63 */
    DWORD dwNumberOfProcessors;      /* bits set in dwActiveProcessorMask */
    DWORD dwProcessorType;           /* PROCESSOR_AMD_X8664 ..., 0 if none fits */
    DWORD dwAllocationGranularity;   /* 64 KiB, as on Windows */
    WORD wProcessorLevel;            /* x86: the family */
    WORD wProcessorRevision;         /* x86: model << 8 | stepping */
} SYSTEM_INFO, *LPSYSTEM_INFO;

/* ---- process heap ---- */
#define HEAP_NO_SERIALIZE 0x00000001
#define HEAP_GROWABLE 0x00000002
#define HEAP_GENERATE_EXCEPTIONS 0x00000004
#define HEAP_ZERO_MEMORY 0x00000008
#define HEAP_REALLOC_IN_PLACE_ONLY 0x00000010

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

/* ---- threads ---- */
typedef DWORD(WINAPI *PTHREAD_START_ROUTINE)(LPVOID lpThreadParameter);
typedef PTHREAD_START_ROUTINE LPTHREAD_START_ROUTINE;
#define CREATE_SUSPENDED 0x00000004
#define STACK_SIZE_PARAM_IS_A_RESERVATION 0x00010000
/* GetExitCodeThread's answer while the thread runs. */
#define STILL_ACTIVE STATUS_PENDING

/* WSAPROTOCOL_INFOA is only named (WSAStringToAddressA ignores it);
 * WSAPROTOCOL_INFOW is defined in <ws2spi.h>. */
typedef struct _WSAPROTOCOL_INFOA WSAPROTOCOL_INFOA, *LPWSAPROTOCOL_INFOA;
struct _WSAPROTOCOL_INFOW;

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

/* Idle, kernel and user time of all processors together since boot, in
 * 100 ns units (from /proc/stat). As on Windows the kernel time includes the
 * idle time. Any of the three may be NULL. */
OPENND_API BOOL GetSystemTimes(LPFILETIME lpIdleTime, LPFILETIME lpKernelTime, LPFILETIME lpUserTime);
OPENND_API void GetSystemInfo(LPSYSTEM_INFO lpSystemInfo);
OPENND_API void GetNativeSystemInfo(LPSYSTEM_INFO lpSystemInfo);

/* The process heap: malloc underneath, 16-byte aligned blocks. HeapAlloc
 * honours HEAP_ZERO_MEMORY (also HeapReAlloc, for the bytes it adds) and gives
 * a valid, distinct pointer for 0 bytes. Failures return NULL / FALSE; a
 * block not from HeapAlloc is refused with ERROR_INVALID_PARAMETER. */
OPENND_API HANDLE GetProcessHeap(void);
OPENND_API LPVOID HeapAlloc(HANDLE hHeap, DWORD dwFlags, SIZE_T dwBytes);
OPENND_API LPVOID HeapReAlloc(HANDLE hHeap, DWORD dwFlags, LPVOID lpMem, SIZE_T dwBytes);
OPENND_API BOOL HeapFree(HANDLE hHeap, DWORD dwFlags, LPVOID lpMem);
OPENND_API SIZE_T HeapSize(HANDLE hHeap, DWORD dwFlags, LPCVOID lpMem);

/* Threads. The handle is signalled when the thread ends (returns from its
 * start routine), so WaitForSingleObject/WaitForMultipleObjects wait for it;
 * CloseHandle does not stop the thread. CREATE_SUSPENDED holds the thread
 * before its start routine until ResumeThread (SuspendThread is not
 * provided). Security attributes are ignored. Thread ids are Linux thread ids
 * (gettid). */
OPENND_API HANDLE CreateThread(LPSECURITY_ATTRIBUTES lpThreadAttributes, SIZE_T dwStackSize,
                               LPTHREAD_START_ROUTINE lpStartAddress, LPVOID lpParameter, DWORD dwCreationFlags,
                               LPDWORD lpThreadId);
OPENND_API DWORD ResumeThread(HANDLE hThread);
OPENND_API BOOL GetExitCodeThread(HANDLE hThread, LPDWORD lpExitCode);
OPENND_API DWORD GetThreadId(HANDLE Thread);
OPENND_API DWORD GetCurrentThreadId(void);

/* "1.2.3.4", "1.2.3.4:80" (AF_INET; also "127.1" and octal/hex parts, as
 * Winsock's non-strict parse), "::1", "[::1]:80", "[fe80::1%2]:80"
 * (AF_INET6). 0, or SOCKET_ERROR with WSAEINVAL (another family, or not an
 * address of this one) or WSAEFAULT (*lpAddressLength too small, checked
 * first: set to the size needed). lpProtocolInfo is ignored. */
OPENND_API INT WSAStringToAddressA(LPSTR AddressString, INT AddressFamily, LPWSAPROTOCOL_INFOA lpProtocolInfo,
                                   LPSOCKADDR lpAddress, LPINT lpAddressLength);
OPENND_API INT WSAStringToAddressW(LPWSTR AddressString, INT AddressFamily, struct _WSAPROTOCOL_INFOW *lpProtocolInfo,
                                   LPSOCKADDR lpAddress, LPINT lpAddressLength);
#define WSAStringToAddress WSAStringToAddressA

/* OpenND extensions for handles. */
/* The file descriptor behind a handle (an eventfd that becomes readable when
 * the object is signalled, or a completion is delivered through an overlapped
 * file), for poll/epoll. -1 with ERROR_INVALID_HANDLE for a bad handle. */
OPENND_API int OpenNdHandleFd(HANDLE h);

OPENND_EXTERN_C_END

#endif /* OPENND_WIN32_H */
