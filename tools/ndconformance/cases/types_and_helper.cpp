// The status and structure definitions applications compile against
// (Types) and the helper library's Nd* functions (Helper).
#include <sys/un.h>

#include "ndsupport.h"
#include "suite.h"

namespace ndc {
namespace {

// ---------------------------------------------------------------------- Types

TEST(Types, StatusValuesR032) {
    struct Row {
        HRESULT value;
        uint32_t expected;
        const char *name;
    } rows[] = {
        {ND_SUCCESS, 0x00000000, "ND_SUCCESS"},
        {ND_TIMEOUT, 0x00000102, "ND_TIMEOUT"},
        {ND_PENDING, 0x00000103, "ND_PENDING"},
        {ND_BUFFER_OVERFLOW, 0x80000005, "ND_BUFFER_OVERFLOW"},
        {ND_DEVICE_BUSY, 0x80000011, "ND_DEVICE_BUSY"},
        {ND_NO_MORE_ENTRIES, 0x8000001A, "ND_NO_MORE_ENTRIES"},
        {ND_UNSUCCESSFUL, 0xC0000001, "ND_UNSUCCESSFUL"},
        {ND_ACCESS_VIOLATION, 0xC0000005, "ND_ACCESS_VIOLATION"},
        {ND_INVALID_HANDLE, 0xC0000008, "ND_INVALID_HANDLE"},
        {ND_INVALID_DEVICE_REQUEST, 0xC0000010, "ND_INVALID_DEVICE_REQUEST"},
        {ND_INVALID_PARAMETER, 0xC000000D, "ND_INVALID_PARAMETER"},
        {ND_NO_MEMORY, 0xC0000017, "ND_NO_MEMORY"},
        {ND_INVALID_PARAMETER_MIX, 0xC0000030, "ND_INVALID_PARAMETER_MIX"},
        {ND_DATA_OVERRUN, 0xC000003C, "ND_DATA_OVERRUN"},
        {ND_SHARING_VIOLATION, 0xC0000043, "ND_SHARING_VIOLATION"},
        {ND_INSUFFICIENT_RESOURCES, 0xC000009A, "ND_INSUFFICIENT_RESOURCES"},
        {ND_DEVICE_NOT_READY, 0xC00000A3, "ND_DEVICE_NOT_READY"},
        {ND_IO_TIMEOUT, 0xC00000B5, "ND_IO_TIMEOUT"},
        {ND_NOT_SUPPORTED, 0xC00000BB, "ND_NOT_SUPPORTED"},
        {ND_INTERNAL_ERROR, 0xC00000E5, "ND_INTERNAL_ERROR"},
        {ND_INVALID_PARAMETER_1, 0xC00000EF, "ND_INVALID_PARAMETER_1"},
        {ND_INVALID_PARAMETER_2, 0xC00000F0, "ND_INVALID_PARAMETER_2"},
        {ND_INVALID_PARAMETER_3, 0xC00000F1, "ND_INVALID_PARAMETER_3"},
        {ND_INVALID_PARAMETER_4, 0xC00000F2, "ND_INVALID_PARAMETER_4"},
        {ND_INVALID_PARAMETER_5, 0xC00000F3, "ND_INVALID_PARAMETER_5"},
        {ND_INVALID_PARAMETER_6, 0xC00000F4, "ND_INVALID_PARAMETER_6"},
        {ND_INVALID_PARAMETER_7, 0xC00000F5, "ND_INVALID_PARAMETER_7"},
        {ND_INVALID_PARAMETER_8, 0xC00000F6, "ND_INVALID_PARAMETER_8"},
        {ND_INVALID_PARAMETER_9, 0xC00000F7, "ND_INVALID_PARAMETER_9"},
        {ND_INVALID_PARAMETER_10, 0xC00000F8, "ND_INVALID_PARAMETER_10"},
        {ND_CANCELED, 0xC0000120, "ND_CANCELED"},
        {ND_REMOTE_ERROR, 0xC000013D, "ND_REMOTE_ERROR"},
        {ND_INVALID_ADDRESS, 0xC0000141, "ND_INVALID_ADDRESS"},
        {ND_INVALID_DEVICE_STATE, 0xC0000184, "ND_INVALID_DEVICE_STATE"},
        {ND_INVALID_BUFFER_SIZE, 0xC0000206, "ND_INVALID_BUFFER_SIZE"},
        {ND_TOO_MANY_ADDRESSES, 0xC0000209, "ND_TOO_MANY_ADDRESSES"},
        {ND_ADDRESS_ALREADY_EXISTS, 0xC000020A, "ND_ADDRESS_ALREADY_EXISTS"},
        {ND_CONNECTION_REFUSED, 0xC0000236, "ND_CONNECTION_REFUSED"},
        {ND_CONNECTION_INVALID, 0xC000023A, "ND_CONNECTION_INVALID"},
        {ND_CONNECTION_ACTIVE, 0xC000023B, "ND_CONNECTION_ACTIVE"},
        {ND_NETWORK_UNREACHABLE, 0xC000023C, "ND_NETWORK_UNREACHABLE"},
        {ND_HOST_UNREACHABLE, 0xC000023D, "ND_HOST_UNREACHABLE"},
        {ND_CONNECTION_ABORTED, 0xC0000241, "ND_CONNECTION_ABORTED"},
        {ND_DEVICE_REMOVED, 0xC00002B6, "ND_DEVICE_REMOVED"},
    };
    for (const Row &r : rows) EXPECT_EQ(static_cast<uint32_t>(r.value), r.expected) << r.name;
    EXPECT_EQ(ND_LOCAL_LENGTH, ND_DATA_OVERRUN);
    EXPECT_EQ(ND_INVALIDATION_ERROR, ND_INVALID_DEVICE_REQUEST);
    // Severity: success codes are SUCCEEDED, warnings and errors FAILED.
    EXPECT_TRUE(SUCCEEDED(ND_PENDING) && SUCCEEDED(ND_TIMEOUT));
    EXPECT_TRUE(FAILED(ND_BUFFER_OVERFLOW) && FAILED(ND_DEVICE_BUSY) && FAILED(ND_NO_MORE_ENTRIES));
}

TEST(Types, StructuresAndFlags) {  // §2.1, §2.4, §2.5 (binary layout applications rely on)
    EXPECT_EQ(sizeof(ND2_ADAPTER_INFO), 96u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, MaxRegistrationSize), 16u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, MaxInitiatorSge), 32u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, AdapterFlags), 92u);
    EXPECT_EQ(sizeof(ND2_SGE), 16u);
    EXPECT_EQ(offsetof(ND2_SGE, MemoryRegionToken), 12u);
    EXPECT_EQ(sizeof(ND2_RESULT), 32u);
    EXPECT_EQ(offsetof(ND2_RESULT, RequestType), 24u);
    EXPECT_EQ(sizeof(OVERLAPPED), 32u);
    EXPECT_EQ(sizeof(SOCKET_ADDRESS), 16u);
    EXPECT_EQ(offsetof(SOCKET_ADDRESS_LIST, Address), 8u);
    EXPECT_EQ(sizeof(ULONG), 4u);
    EXPECT_EQ(sizeof(HRESULT), 4u);
    EXPECT_EQ(ND_MR_FLAG_ALLOW_REMOTE_WRITE, 0x5u);
    EXPECT_EQ(ND_OP_FLAG_INLINE, 0x20u);
    EXPECT_EQ(ND_CQ_NOTIFY_SOLICITED, 2u);
    EXPECT_EQ(ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, 0x10000u);
    EXPECT_EQ(static_cast<int>(Nd2RequestTypeWrite), 5);
}

// --------------------------------------------------------------------- Helper
// The helper library (libopennd's Nd* functions) over the catalog; only
// with --provider (the provider must be in the catalog).

TEST(Helper, StartupCleanupCountedR154R155) {
    // Balanced pairs on top of the suite's own startup keep it started.
    ASSERT_ND(S_OK, NdStartup());
    ASSERT_ND(S_OK, NdStartup());
    EXPECT_ND(S_OK, NdCleanup());
    EXPECT_ND(S_OK, NdCleanup());
    IpAddress a = PrimaryAddress();
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
    // Drop the suite's own reference: now every call reports not started.
    ASSERT_ND(S_OK, NdCleanup());
    EXPECT_ND(ND_DEVICE_NOT_READY, NdCleanup()) << "NdCleanup without NdStartup";
    SIZE_T cb = 0;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdQueryAddressList(0, nullptr, &cb));
    sockaddr_storage local{};
    SIZE_T lcb = sizeof local;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdResolveAddress(a.sa(), a.length(), reinterpret_cast<sockaddr *>(&local), &lcb));
    EXPECT_ND(ND_DEVICE_NOT_READY, NdCheckAddress(a.sa(), a.length()));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.put_void()));
    ASSERT_ND(S_OK, NdStartup());  // restore the suite's reference
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
}

TEST(Helper, QueryAddressListFlagsR156) {
    SIZE_T cb = 0;
    ASSERT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(0, nullptr, &cb));
    std::vector<uint8_t> buf(cb);
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    ASSERT_ND(ND_SUCCESS, NdQueryAddressList(0, list, &cb));
    std::vector<IpAddress> all = AddressListOf(list);
    for (const auto &a : TestAddresses()) EXPECT_TRUE(Contains(all, ParseIp(a))) << a;
    // The emulator flag is ignored; excluding v1 changes nothing (OpenND
    // loads no v1 providers); excluding v2 leaves nothing: ND_SUCCESS, size 0,
    // buffer untouched.
    SIZE_T cb_e = 0, cb_v1 = 0;
    EXPECT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(ND_QUERY_EXCLUDE_EMULATOR_ADDRESSES, nullptr, &cb_e));
    EXPECT_EQ(cb_e, cb);
    EXPECT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(ND_QUERY_EXCLUDE_NDv1_ADDRESSES, nullptr, &cb_v1));
    EXPECT_EQ(cb_v1, cb);
    std::vector<uint8_t> untouched(64, 0xCD);
    SIZE_T cb_v2 = untouched.size();
    EXPECT_ND(ND_SUCCESS, NdQueryAddressList(ND_QUERY_EXCLUDE_NDv2_ADDRESSES,
                                             reinterpret_cast<SOCKET_ADDRESS_LIST *>(untouched.data()), &cb_v2));
    EXPECT_EQ(cb_v2, 0u);
    for (uint8_t b : untouched) ASSERT_EQ(b, 0xCD);
}

TEST(Helper, CheckAddressAndOpenAdapterValidationR157) {
    IpAddress a = PrimaryAddress();
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
    EXPECT_ND(ND_INVALID_PARAMETER_2, NdCheckAddress(a.sa(), sizeof(sockaddr) - 1));
    if (a.family() == AF_INET6) {
        EXPECT_ND(ND_INVALID_PARAMETER_2, NdCheckAddress(a.sa(), sizeof(sockaddr_in6) - 1));
    }
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    EXPECT_ND(ND_INVALID_ADDRESS, NdCheckAddress(reinterpret_cast<sockaddr *>(&un), sizeof un));
    IpAddress unknown = UnservedAddress(a.family());
    EXPECT_ND(ND_INVALID_ADDRESS, NdCheckAddress(unknown.sa(), unknown.length()));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_INVALID_PARAMETER_2, NdOpenAdapter(IID_IND2Adapter, a.sa(), sizeof(sockaddr) - 1, adapter.put_void()));
    EXPECT_ND(ND_INVALID_ADDRESS,
              NdOpenAdapter(IID_IND2Adapter, reinterpret_cast<sockaddr *>(&un), sizeof un, adapter.put_void()));
    EXPECT_ND(ND_INVALID_ADDRESS, NdOpenAdapter(IID_IND2Adapter, unknown.sa(), unknown.length(), adapter.put_void()));
    EXPECT_ND(ND_SUCCESS, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.put_void()));
}

TEST(Helper, ResolveAddressGivesLocalAddressWithPortZero) {  // COMPAT
    for (const auto &text : TestAddresses()) {
        IpAddress remote = WithPort(ParseIp(text), 4567);
        sockaddr_storage local{};
        SIZE_T cb = sizeof local;
        ASSERT_ND(ND_SUCCESS, NdResolveAddress(remote.sa(), remote.length(), reinterpret_cast<sockaddr *>(&local), &cb))
            << text;
        IpAddress l;
        ASSERT_TRUE(opennd::net::FromSockaddr(reinterpret_cast<sockaddr *>(&local), cb, &l));
        EXPECT_TRUE(opennd::net::SameIp(l.sa(), remote.sa())) << IpText(l);
        EXPECT_EQ(PortOf(l), 0) << "NdResolveAddress must return port 0";
    }
}

TEST(Helper, OpenAdapterRoutesByVersionR158) {
    IpAddress a = PrimaryAddress();
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_SUCCESS, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.put_void()));
    // IID_INDAdapter goes to v1 providers only; none serves this address.
    Ref<IUnknown> v1;
    EXPECT_ND(ND_INVALID_ADDRESS, NdOpenAdapter(IID_INDAdapter, a.sa(), a.length(), v1.put_void()));
}

}  // namespace
}  // namespace ndc
