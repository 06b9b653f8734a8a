// The definitions ND programs take for granted from the Windows headers:
// record and memory macros, NTSTATUS codes, SAL, min/max, the ND v1 names.
#include <ndsupport.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "win32_test_util.h"
#include "c_surface.h"

using namespace win32_test;

namespace {

// The ND pattern: a request class with virtual methods around an OVERLAPPED,
// found again from the OVERLAPPED a completion hands back.
class Request {
public:
    virtual ~Request() = default;
    virtual int Kind() const { return 1; }
    int id = 0;
    OVERLAPPED ov{};
    struct {
        char pad[3];
        ULONG values[4];
    } nested{};
};

struct Plain {
    char c;
    LONG64 x;
    ULONG arr[5];
};

}  // namespace

TEST(Surface, ContainingRecordRecoversTheOuterObject) {
    Request r;
    OVERLAPPED *ov = &r.ov;
    Request *back = CONTAINING_RECORD(ov, Request, ov);
    EXPECT_EQ(back, &r);
    EXPECT_EQ(back->Kind(), 1);
    EXPECT_EQ(CONTAINING_RECORD(&r.nested.values[2], Request, nested.values[2]), &r);
    const Request *cr = &r;
    EXPECT_EQ(CONTAINING_RECORD(&cr->ov, Request, ov), &r);

    Plain p;
    EXPECT_EQ(CONTAINING_RECORD(&p.x, Plain, x), &p);
    EXPECT_EQ(FIELD_OFFSET(Plain, x), static_cast<LONG>(offsetof(Plain, x)));
    EXPECT_EQ(FIELD_OFFSET(Plain, arr[2]), static_cast<LONG>(offsetof(Plain, arr) + 2 * sizeof(ULONG)));
    EXPECT_EQ(RTL_FIELD_SIZE(Plain, arr), 5 * sizeof(ULONG));
    EXPECT_EQ(ARRAYSIZE(p.arr), 5u);
    static_assert(std::is_same_v<decltype(CONTAINING_RECORD(ov, Request, ov)), Request *>);
}

namespace {
HRESULT Unused(int a, _In_opt_ void *b) {
    UNREFERENCED_PARAMETER(a);  // compiles warning-free under -Wall -Wextra -Werror
    UNREFERENCED_PARAMETER(b);
    return S_OK;
}
}  // namespace

TEST(Surface, MemoryMacros) {
    EXPECT_EQ(Unused(1, nullptr), S_OK);
    unsigned char a[16], b[16];
    std::memset(a, 0xFF, sizeof a);
    RtlZeroMemory(a, 8);
    EXPECT_EQ(a[7], 0);
    EXPECT_EQ(a[8], 0xFF);
    ZeroMemory(a, sizeof a);
    for (unsigned char c : a) EXPECT_EQ(c, 0);
    FillMemory(b, sizeof b, 0x5A);
    RtlFillMemory(b, 4, 0x11);
    EXPECT_EQ(b[3], 0x11);
    EXPECT_EQ(b[4], 0x5A);
    CopyMemory(a, b, sizeof a);
    EXPECT_TRUE(EqualMemory(a, b, sizeof a));
    RtlCopyMemory(a, "abcdefgh", 8);
    EXPECT_FALSE(RtlEqualMemory(a, b, sizeof a));
    MoveMemory(a + 1, a, 7);  // overlapping
    EXPECT_EQ(std::memcmp(a, "aabcdefg", 8), 0);
    RtlMoveMemory(a, a + 1, 7);
    EXPECT_EQ(std::memcmp(a, "abcdefgg", 8), 0);
    EXPECT_EQ(SecureZeroMemory(b, sizeof b), static_cast<PVOID>(b));
    for (unsigned char c : b) EXPECT_EQ(c, 0);
}

// The values Windows gives these names, and the ND codes they equal.
TEST(Surface, StatusCodes) {
    static_assert(std::is_same_v<NTSTATUS, HRESULT>);
    static_assert(std::is_same_v<decltype(STATUS_CANCELLED), NTSTATUS>);
    static_assert(STATUS_SUCCESS == 0 && ND_SUCCESS == STATUS_SUCCESS);
    static_assert(STATUS_PENDING == 0x103 && ND_PENDING == static_cast<HRESULT>(STATUS_PENDING));
    static_assert(STATUS_TIMEOUT == 0x102 && ND_TIMEOUT == STATUS_TIMEOUT);
    static_assert(static_cast<uint32_t>(STATUS_CANCELLED) == 0xC0000120u && ND_CANCELED == STATUS_CANCELLED);
    static_assert(static_cast<uint32_t>(STATUS_ADDRESS_ALREADY_ASSOCIATED) == 0xC0000238u);
    static_assert(static_cast<uint32_t>(STATUS_BAD_NETWORK_NAME) == 0xC00000CCu);
    static_assert(static_cast<uint32_t>(STATUS_CONNECTION_DISCONNECTED) == 0xC000020Cu);
    static_assert(static_cast<uint32_t>(STATUS_CONNECTION_RESET) == 0xC000020Du);
    static_assert(static_cast<uint32_t>(STATUS_CONNECTION_REFUSED) == 0xC0000236u &&
                  ND_CONNECTION_REFUSED == STATUS_CONNECTION_REFUSED);
    static_assert(static_cast<uint32_t>(STATUS_CONNECTION_ABORTED) == 0xC0000241u &&
                  ND_CONNECTION_ABORTED == STATUS_CONNECTION_ABORTED);
    static_assert(static_cast<uint32_t>(STATUS_CONNECTION_ACTIVE) == 0xC000023Bu &&
                  ND_CONNECTION_ACTIVE == STATUS_CONNECTION_ACTIVE);
    static_assert(static_cast<uint32_t>(STATUS_DATA_ERROR) == 0xC000003Eu);
    static_assert(ND_INVALID_PARAMETER == STATUS_INVALID_PARAMETER);
    static_assert(ND_INVALID_DEVICE_STATE == STATUS_INVALID_DEVICE_STATE);
    static_assert(ND_BUFFER_OVERFLOW == STATUS_BUFFER_OVERFLOW);
    static_assert(ND_IO_TIMEOUT == STATUS_IO_TIMEOUT);
    static_assert(ND_INSUFFICIENT_RESOURCES == STATUS_INSUFFICIENT_RESOURCES);
    static_assert(ND_ACCESS_VIOLATION == STATUS_ACCESS_VIOLATION);
    static_assert(ND_NETWORK_UNREACHABLE == STATUS_NETWORK_UNREACHABLE);
    static_assert(ND_HOST_UNREACHABLE == STATUS_HOST_UNREACHABLE);
    static_assert(ND_INVALID_ADDRESS == STATUS_INVALID_ADDRESS);
    static_assert(ND_NOT_SUPPORTED == STATUS_NOT_SUPPORTED);
    static_assert(ND_DEVICE_BUSY == STATUS_DEVICE_BUSY);
    static_assert(ND_INVALID_BUFFER_SIZE == STATUS_INVALID_BUFFER_SIZE);
    static_assert(ND_DATA_OVERRUN == STATUS_DATA_OVERRUN);
    static_assert(ND_UNSUCCESSFUL == STATUS_UNSUCCESSFUL);
    static_assert(ND_NO_MEMORY == STATUS_NO_MEMORY);
    static_assert(ND_INVALID_HANDLE == STATUS_INVALID_HANDLE);
    static_assert(ND_INVALID_DEVICE_REQUEST == STATUS_INVALID_DEVICE_REQUEST);
    static_assert(ND_INVALID_PARAMETER_MIX == STATUS_INVALID_PARAMETER_MIX);
    static_assert(ND_SHARING_VIOLATION == STATUS_SHARING_VIOLATION);
    static_assert(ND_NO_MORE_ENTRIES == STATUS_NO_MORE_ENTRIES);
    static_assert(ND_DEVICE_NOT_READY == STATUS_DEVICE_NOT_READY);
    static_assert(ND_INTERNAL_ERROR == STATUS_INTERNAL_ERROR);
    static_assert(ND_INVALID_PARAMETER_1 == STATUS_INVALID_PARAMETER_1);
    static_assert(ND_INVALID_PARAMETER_10 == STATUS_INVALID_PARAMETER_10);
    static_assert(ND_REMOTE_ERROR == STATUS_REMOTE_RESOURCES);
    static_assert(ND_TOO_MANY_ADDRESSES == STATUS_TOO_MANY_ADDRESSES);
    static_assert(ND_ADDRESS_ALREADY_EXISTS == STATUS_ADDRESS_ALREADY_EXISTS);
    static_assert(ND_CONNECTION_INVALID == STATUS_CONNECTION_INVALID);
    static_assert(ND_DEVICE_REMOVED == STATUS_DEVICE_REMOVED);
    static_assert(NT_SUCCESS(STATUS_SUCCESS) && NT_SUCCESS(STATUS_TIMEOUT) && !NT_SUCCESS(STATUS_CANCELLED));
    static_assert(STILL_ACTIVE == 259);

    // Compared with and switched on as HRESULTs (no sign-compare warning,
    // no narrowing in the case labels).
    auto classify = [](HRESULT hr) {
        switch (hr) {
        case STATUS_SUCCESS: return 0;
        case STATUS_PENDING: return 1;
        case STATUS_CANCELLED: return 2;
        case STATUS_CONNECTION_RESET:
        case STATUS_CONNECTION_DISCONNECTED: return 3;
        default: return -1;
        }
    };
    EXPECT_EQ(classify(ND_SUCCESS), 0);
    EXPECT_EQ(classify(ND_PENDING), 1);
    EXPECT_EQ(classify(ND_CANCELED), 2);
    EXPECT_EQ(classify(static_cast<HRESULT>(0xC000020Du)), 3);
    HRESULT hr = ND_CONNECTION_REFUSED;
    EXPECT_TRUE(hr == STATUS_CONNECTION_REFUSED);
    OVERLAPPED ov{};
    ov.Internal = STATUS_PENDING;
    EXPECT_FALSE(HasOverlappedIoCompleted(&ov));
    ov.Internal = static_cast<ULONG_PTR>(static_cast<ULONG>(STATUS_CANCELLED));
    EXPECT_TRUE(HasOverlappedIoCompleted(&ov));
}

namespace {
// Every SAL name OpenND defines, on a declaration that must compile.
_Success_(return == 0) _Check_return_ _Must_inspect_result_ int Annotated(
    _In_reads_(n) const int *in, _In_ size_t n, _Out_writes_(n) int *out, _Inout_ int *io, _In_opt_ void *opt,
    _Out_opt_ int *oopt, _Outptr_ void **pp, _Outptr_result_maybenull_ void **ppm, _Deref_out_ void **dpp,
    _In_reads_bytes_(n) const void *rb, _Out_writes_bytes_(n) void *wb, _Out_writes_to_(n, *io) int *wt,
    _Inout_updates_bytes_opt_(n) void *ub, _In_z_ const char *z, _In_bytecount_(n) const void *bc,
    _Out_bytecap_post_bytecount_(n, n) void *bcap, _In_range_(0, 10) int r, _Printf_format_string_ const char *fmt);

_Ret_maybenull_ _Ret_notnull_ void *Returns() { return nullptr; }
_Use_decl_annotations_ int Annotated(const int *in, size_t n, int *out, int *io, void *opt, int *oopt, void **pp,
                                     void **ppm, void **dpp, const void *rb, void *wb, int *wt, void *ub, const char *z,
                                     const void *bc, void *bcap, int r, const char *fmt) {
    for (size_t i = 0; i < n; ++i) out[i] = in[i] + *io;
    (void)opt, (void)oopt, (void)pp, (void)ppm, (void)dpp, (void)rb, (void)wb, (void)wt, (void)ub, (void)z;
    (void)bc, (void)bcap, (void)r, (void)fmt;
    return 0;
}
}  // namespace

TEST(Surface, SalAnnotationsExpandToNothing) {
    EXPECT_EQ(Returns(), nullptr);
    int in[2] = {1, 2}, out[2] = {}, io = 10, wt = 0;
    void *p = nullptr;
    EXPECT_EQ(Annotated(in, 2, out, &io, nullptr, nullptr, &p, &p, &p, in, out, &wt, nullptr, "", in, out, 3, "%d"),
              0);
    EXPECT_EQ(out[1], 12);
}

// Without NOMINMAX, min and max as Windows gives them; std::min, std::max and
// numeric_limits<T>::max() are unaffected.
TEST(Surface, MinMax) {
    EXPECT_EQ(min(3, 5), 3);
    EXPECT_EQ(max(3, 5), 5);
    EXPECT_EQ(min(-1, 2L), -1L);  // mixed types, as the macro's ?: computes them
    static_assert(std::is_same_v<decltype(min(1, 2L)), long>);
    static_assert(std::is_same_v<decltype(max(1u, 2u)), unsigned>);
    EXPECT_EQ(max(2.5, 1), 2.5);
    static_assert(max(3, 4) == 4 && min(3, 4) == 3, "constant expressions, as the macros are");
    ULONG a = 7;
    SIZE_T b = 9;
    EXPECT_EQ(min(a, b), 7u);

    EXPECT_EQ(std::min(3, 5), 3);
    EXPECT_EQ(std::max({1, 9, 4}), 9);
    EXPECT_EQ((std::max)(1, 2), 2);
    EXPECT_EQ(std::numeric_limits<int>::max(), INT32_MAX);
    EXPECT_EQ(std::numeric_limits<LONG64>::min(), INT64_MIN);
    EXPECT_EQ(std::clamp(15, 0, 10), 10);
    {
        using namespace std;
        int x = 1, y = 2;
        // One type: std's is the more specialised template and is chosen.
        static_assert(std::is_same_v<decltype(min(x, y)), const int &>);
        EXPECT_EQ(min(x, y), 1);
        EXPECT_EQ(max(x, 3L), 3L);  // mixed: only ours applies
    }
}

TEST(Surface, BarriersAndSpinHints) {
    MemoryBarrier();
    YieldProcessor();
    SUCCEED();
}

TEST(Surface, NdV1Names) {
    INDAdapter *adapter = reinterpret_cast<INDAdapter *>(uintptr_t{1});
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(NdOpenV1Adapter(reinterpret_cast<const sockaddr *>(&a), sizeof a, &adapter), ND_NOT_SUPPORTED);
    EXPECT_EQ(adapter, nullptr);
    EXPECT_EQ(NdOpenV1Adapter(nullptr, 0, nullptr), ND_NOT_SUPPORTED);

    constexpr GUID v1_adapter = {0xA023C5A0, 0x5B73, 0x43BC, {0x8D, 0x20, 0x33, 0xAA, 0x07, 0xE9, 0x51, 0x0F}};
    constexpr GUID v1_provider = {0x0C5DD316, 0x5FDF, 0x47E6, {0xB2, 0xD0, 0x2A, 0x6E, 0xDA, 0x8D, 0x39, 0xDD}};
    EXPECT_TRUE(IsEqualIID(IID_INDAdapter, v1_adapter));
    EXPECT_TRUE(IsEqualIID(IID_INDProvider, v1_provider));
    EXPECT_FALSE(IsEqualIID(IID_INDAdapter, IID_IND2Adapter));
    EXPECT_FALSE(IsEqualIID(IID_INDProvider, IID_IND2Provider));
    for (const GUID *g : {&IID_INDOverlapped, &IID_INDCompletionQueue, &IID_INDMemoryWindow, &IID_INDEndpoint,
                          &IID_INDConnector, &IID_INDListen})
        EXPECT_FALSE(IsEqualIID(*g, IID_INDAdapter));
    INDProvider *provider = nullptr;
    INDConnector *connector = nullptr;
    INDEndpoint *endpoint = nullptr;
    INDCompletionQueue *cq = nullptr;
    INDListen *listen = nullptr;
    INDMemoryWindow *mw = nullptr;
    INDOverlapped *ovl = nullptr;
    EXPECT_EQ(provider, nullptr);
    (void)connector, (void)endpoint, (void)cq, (void)listen, (void)mw, (void)ovl;
}

// The C translation unit (c_surface.c) sees the same definitions.
TEST(Surface, FromC) {
    EXPECT_EQ(Win32CMin(3, -2), -2);
    EXPECT_EQ(Win32CMax(3, -2), 3);
    EXPECT_EQ(Win32CContainingRecord(), 1);
    EXPECT_EQ(Win32CInterlocked(), 1);
    EXPECT_EQ(Win32CStatus(ND_SUCCESS), 0);
    EXPECT_EQ(Win32CStatus(ND_CANCELED), 2);
    EXPECT_EQ(Win32CStatus(STATUS_CONNECTION_RESET), 3);
    EXPECT_EQ(Win32CStatus(ND_UNSUCCESSFUL), -1);
    EXPECT_EQ(Win32CCalls(), 1);
    EXPECT_EQ(Win32CSizeOfSystemInfo(), sizeof(SYSTEM_INFO));
}
