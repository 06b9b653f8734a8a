// The Nd* helpers over a private catalog of loopback providers:
// started checks, address list merge and sizing, validation, routing.
#include <gtest/gtest.h>

#include <vector>

#include "ndsupport.h"
#include "support/test_catalog.h"

using namespace testing_support;

namespace {

class NdSupport : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(NdStartup(), S_OK); }
    void TearDown() override { EXPECT_EQ(NdCleanup(), S_OK); }
    TempCatalog catalog;
};

std::vector<std::string> QueryAll(DWORD flags) {
    SIZE_T cb = 0;
    HRESULT hr = NdQueryAddressList(flags, nullptr, &cb);
    if (hr == ND_SUCCESS) return {};
    EXPECT_EQ(hr, ND_BUFFER_OVERFLOW);
    std::vector<char> buf(cb);
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    EXPECT_EQ(NdQueryAddressList(flags, list, &cb), ND_SUCCESS);
    std::vector<std::string> out;
    for (int i = 0; i < list->iAddressCount; ++i) {
        // Every pointer lands inside the caller's buffer.
        const char *p = reinterpret_cast<const char *>(list->Address[i].lpSockaddr);
        EXPECT_GE(p, buf.data());
        EXPECT_LE(p + list->Address[i].iSockaddrLength, buf.data() + buf.size());
        out.push_back(opennd::net::ToString(list->Address[i].lpSockaddr));
    }
    return out;
}

TEST(NdSupportLifecycle, CleanupWithoutStartupIsNotReady) {
    EXPECT_EQ(NdCleanup(), ND_DEVICE_NOT_READY);  // R154
    ASSERT_EQ(NdStartup(), S_OK);
    ASSERT_EQ(NdStartup(), S_OK);
    EXPECT_EQ(NdCleanup(), S_OK);
    EXPECT_EQ(NdCleanup(), S_OK);
    EXPECT_EQ(NdCleanup(), ND_DEVICE_NOT_READY);
}

TEST(NdSupportLifecycle, CallsBeforeStartupAreNotReady) {  // R155
    SIZE_T cb = 0;
    EXPECT_EQ(NdQueryAddressList(0, nullptr, &cb), ND_DEVICE_NOT_READY);
    auto a = Ip("127.0.0.1");
    sockaddr_storage out{};
    SIZE_T outlen = sizeof out;
    EXPECT_EQ(NdResolveAddress(a.sa(), a.length(), reinterpret_cast<sockaddr *>(&out), &outlen), ND_DEVICE_NOT_READY);
    EXPECT_EQ(NdCheckAddress(a.sa(), a.length()), ND_DEVICE_NOT_READY);
    void *adapter = nullptr;
    EXPECT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), &adapter), ND_DEVICE_NOT_READY);
    EXPECT_EQ(adapter, nullptr);
}

TEST_F(NdSupport, EmptyCatalogGivesEmptyListWithoutTouchingTheBuffer) {  // R156, D16
    char buf[64];
    memset(buf, 0xAB, sizeof buf);
    SIZE_T cb = sizeof buf;
    EXPECT_EQ(NdQueryAddressList(0, reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf), &cb), ND_SUCCESS);
    EXPECT_EQ(cb, 0u);
    for (char c : buf) ASSERT_EQ(static_cast<unsigned char>(c), 0xAB);
}

TEST_F(NdSupport, ListsEveryAddressWithTheSizingProtocol) {
    catalog.AddLoopback(10, 1);
    SIZE_T cb = 0;
    ASSERT_EQ(NdQueryAddressList(0, nullptr, &cb), ND_BUFFER_OVERFLOW);
    // 8 + 3 entries of 16 + two sockaddr_in (16) + one sockaddr_in6 (28)
    EXPECT_EQ(cb, 8u + 3 * 16 + 2 * 16 + 28);
    // One byte short: overflow again, same size, buffer untouched.
    std::vector<char> small(cb - 1, 0x5A);
    SIZE_T smallcb = small.size();
    EXPECT_EQ(NdQueryAddressList(0, reinterpret_cast<SOCKET_ADDRESS_LIST *>(small.data()), &smallcb), ND_BUFFER_OVERFLOW);
    EXPECT_EQ(smallcb, cb);
    for (char c : small) ASSERT_EQ(c, 0x5A);
    EXPECT_EQ(QueryAll(0), (std::vector<std::string>{"127.0.0.1", "::1", "127.0.0.2"}));
}

TEST_F(NdSupport, ExcludeFlags) {
    catalog.AddLoopback(10, 1);
    EXPECT_TRUE(QueryAll(ND_QUERY_EXCLUDE_NDv2_ADDRESSES).empty());
    EXPECT_EQ(QueryAll(ND_QUERY_EXCLUDE_NDv1_ADDRESSES).size(), 3u);
    EXPECT_EQ(QueryAll(ND_QUERY_EXCLUDE_EMULATOR_ADDRESSES).size(), 3u);  // ignored, as in the reference (D17)
}

TEST_F(NdSupport, MergeKeepsDuplicatesInCatalogOrder) {
    catalog.AddLoopback(20, 1);
    catalog.AddLoopback(10, 5);
    EXPECT_EQ(QueryAll(0), (std::vector<std::string>{"127.0.0.1", "127.0.0.1", "::1", "127.0.0.2"}));
}

TEST_F(NdSupport, CheckAddressValidation) {  // R157
    catalog.AddLoopback(10, 1);
    auto v4 = Ip("127.0.0.1"), v6 = Ip("::1"), other = Ip("127.0.0.9");
    EXPECT_EQ(NdCheckAddress(v4.sa(), v4.length()), ND_SUCCESS);
    EXPECT_EQ(NdCheckAddress(v6.sa(), v6.length()), ND_SUCCESS);
    EXPECT_EQ(NdCheckAddress(other.sa(), other.length()), ND_INVALID_ADDRESS);
    EXPECT_EQ(NdCheckAddress(v4.sa(), 8), ND_INVALID_PARAMETER_2);
    EXPECT_EQ(NdCheckAddress(v6.sa(), sizeof(sockaddr_in)), ND_INVALID_PARAMETER_2);
    EXPECT_EQ(NdCheckAddress(nullptr, 16), ND_INVALID_PARAMETER_2);
    sockaddr_storage unix_addr{};
    unix_addr.ss_family = AF_UNIX;
    EXPECT_EQ(NdCheckAddress(reinterpret_cast<sockaddr *>(&unix_addr), sizeof unix_addr), ND_INVALID_ADDRESS);
}

TEST_F(NdSupport, OpenAdapterPicksTheAdapterThatOwnsTheAddress) {
    catalog.AddLoopback(10, 1);
    for (const char *text : {"127.0.0.1", "::1", "127.0.0.2"}) {
        auto a = Ip(text);
        opennd::net::SetPort(a.sa(), 7471);  // ports are ignored
        IND2Adapter *adapter = nullptr;
        ASSERT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), reinterpret_cast<void **>(&adapter)), ND_SUCCESS)
            << text;
        ND2_ADAPTER_INFO info{};
        info.InfoVersion = ND_VERSION_2;
        ULONG cb = sizeof info;
        ASSERT_EQ(adapter->Query(&info, &cb), ND_SUCCESS);
        EXPECT_EQ(info.VendorId, 1);
        EXPECT_EQ(info.AdapterId, std::string(text) == "127.0.0.2" ? 2u : 1u);
        EXPECT_EQ(info.InfoVersion, static_cast<ULONG>(ND_VERSION_2));
        adapter->Release();
    }
    auto a = Ip("127.0.0.9");
    void *adapter = nullptr;
    EXPECT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), &adapter), ND_INVALID_ADDRESS);
    EXPECT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), 4, &adapter), ND_INVALID_PARAMETER_2);
    // A length past ND's 32-bit ULONG is refused, not cut down to a valid one.
    const SIZE_T huge = (SIZE_T(1) << 32) + a.length();
    EXPECT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), huge, &adapter), ND_INVALID_PARAMETER_2);
    EXPECT_EQ(NdCheckAddress(a.sa(), huge), ND_INVALID_PARAMETER_2);
}

TEST_F(NdSupport, OpenAdapterUnknownIidIsRefusedByTheProvider) {
    catalog.AddLoopback(10, 1);
    auto a = Ip("127.0.0.1");
    void *p = reinterpret_cast<void *>(1);
    EXPECT_EQ(NdOpenAdapter(IID_IND2QueuePair, a.sa(), a.length(), &p), E_NOINTERFACE);
    EXPECT_EQ(p, nullptr);
}

TEST_F(NdSupport, ResolveAddressGivesTheLocalAddressWithPortZero) {
    catalog.AddLoopback(10, 1);
    for (const char *text : {"127.0.0.1:5000", "[::1]:5000"}) {
        auto remote = Ip(text);
        SIZE_T cb = 0;
        EXPECT_EQ(NdResolveAddress(remote.sa(), remote.length(), nullptr, &cb), ND_BUFFER_OVERFLOW);
        EXPECT_EQ(cb, remote.length());
        sockaddr_storage local{};
        cb = sizeof local;
        ASSERT_EQ(NdResolveAddress(remote.sa(), remote.length(), reinterpret_cast<sockaddr *>(&local), &cb), S_OK);
        EXPECT_EQ(cb, remote.length());
        EXPECT_TRUE(opennd::net::SameIp(reinterpret_cast<sockaddr *>(&local), remote.sa()));
        EXPECT_EQ(opennd::net::Port(reinterpret_cast<sockaddr *>(&local)), 0);
    }
}

TEST_F(NdSupport, ResolveAddressOfARouteNotServedByAnyProvider) {
    catalog.AddLoopback(10, 5);  // 127.0.0.1 only: no IPv6
    auto remote = Ip("::1");
    sockaddr_storage local{};
    SIZE_T cb = sizeof local;
    EXPECT_EQ(NdResolveAddress(remote.sa(), remote.length(), reinterpret_cast<sockaddr *>(&local), &cb),
              ND_INVALID_ADDRESS);
}

}  // namespace
