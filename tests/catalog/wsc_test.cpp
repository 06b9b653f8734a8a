// The Winsock catalog calls on the drop-in catalog ($OPENND_CATALOG points
// at a private directory): install, enumerate (with WSAENOBUFS sizing), get
// the path, remove.
#include <gtest/gtest.h>

#include <cwchar>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"
#include "ws2spi.h"

using namespace catalog_test;

namespace {

WSAPROTOCOL_INFOW NdInfo(const wchar_t *name, int family) {
    WSAPROTOCOL_INFOW p;
    memset(&p, 0, sizeof p);
    p.dwServiceFlags1 = XP1_GUARANTEED_DELIVERY | XP1_GUARANTEED_ORDER | XP1_MESSAGE_ORIENTED | XP1_CONNECT_DATA;
    p.dwProviderFlags = PFL_HIDDEN | PFL_NETWORKDIRECT_PROVIDER;
    p.iVersion = 0x20000;
    p.iAddressFamily = family;
    p.iSocketType = -1;
    wcsncpy(p.szProtocol, name, WSAPROTOCOL_LEN);
    return p;
}

class Wsc : public ::testing::Test {
protected:
    TempDir t;
    ScopedEnv env{"OPENND_CATALOG", t / "providers.d"};

    std::vector<WSAPROTOCOL_INFOW> Enum() {
        DWORD len = 0;
        int err = 0;
        int n = WSCEnumProtocols(nullptr, nullptr, &len, &err);
        if (n == 0) return {};
        EXPECT_EQ(n, SOCKET_ERROR);
        EXPECT_EQ(err, WSAENOBUFS);
        EXPECT_EQ(len % sizeof(WSAPROTOCOL_INFOW), 0u);
        std::vector<WSAPROTOCOL_INFOW> v(len / sizeof(WSAPROTOCOL_INFOW));
        n = WSCEnumProtocols(nullptr, v.data(), &len, &err);
        EXPECT_EQ(n, static_cast<int>(v.size()));
        return v;
    }
};

}  // namespace

TEST_F(Wsc, InstallEnumeratePathRemoveRoundTrip) {
    GUID a = TestGuid(1), b = TestGuid(2);
    WSAPROTOCOL_INFOW info = NdInfo(L"wsc-ä", AF_INET6);
    int err = 0;
    ASSERT_EQ(WSCInstallProvider(&a, L"/opt/nd/libwsc-a.so", &info, 1, &err), 0) << err;
    WSAPROTOCOL_INFOW two[2] = {NdInfo(L"wsc-b4", AF_INET), NdInfo(L"wsc-b6", AF_INET6)};
    ASSERT_EQ(WSCInstallProvider(&b, L"/opt/nd/libwsc-b.so", two, 2, &err), 0) << err;

    // Sizing: no buffer, then one byte short.
    DWORD len = 0;
    err = 0;
    EXPECT_EQ(WSCEnumProtocols(nullptr, nullptr, &len, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAENOBUFS);
    ASSERT_EQ(len, 3 * sizeof(WSAPROTOCOL_INFOW));
    std::vector<WSAPROTOCOL_INFOW> buf(3);
    DWORD shorter = len - 1;
    err = 0;
    EXPECT_EQ(WSCEnumProtocols(nullptr, buf.data(), &shorter, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAENOBUFS);
    EXPECT_EQ(shorter, len);
    ASSERT_EQ(WSCEnumProtocols(nullptr, buf.data(), &len, &err), 3);

    const wchar_t *names[] = {L"wsc-ä", L"wsc-b4", L"wsc-b6"};
    const int families[] = {AF_INET6, AF_INET, AF_INET6};
    for (int i = 0; i < 3; ++i) {
        const WSAPROTOCOL_INFOW &p = buf[static_cast<size_t>(i)];
        EXPECT_EQ(p.ProviderId, i == 0 ? a : b);
        EXPECT_EQ(p.dwServiceFlags1, 0x8Eu);
        EXPECT_EQ(p.dwProviderFlags, 0x14u);
        EXPECT_EQ(p.dwCatalogEntryId, static_cast<DWORD>(i + 1));
        EXPECT_EQ(p.ProtocolChain.ChainLen, BASE_PROTOCOL);
        EXPECT_EQ(p.iVersion, 0x20000);
        EXPECT_EQ(p.iAddressFamily, families[i]);
        EXPECT_EQ(p.iMaxSockAddr, static_cast<int>(sizeof(sockaddr_in6)));
        EXPECT_EQ(p.iMinSockAddr, static_cast<int>(sizeof(sockaddr_in)));
        EXPECT_EQ(p.iSocketType, -1);
        EXPECT_EQ(p.iProtocol, 0);
        EXPECT_EQ(p.iProtocolMaxOffset, 0);
        EXPECT_EQ(wcscmp(p.szProtocol, names[i]), 0) << i;
    }
    // The same through the C++ API.
    auto l = opennd::ReadCatalog(t / "providers.d");
    EXPECT_EQ(Names(l), "wsc-ä,wsc-b4,wsc-b6");

    // WSCGetProviderPath: too small, then right.
    WCHAR path[64];
    int path_len = 5;
    EXPECT_EQ(WSCGetProviderPath(&b, path, &path_len, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEFAULT);
    EXPECT_EQ(path_len, static_cast<int>(wcslen(L"/opt/nd/libwsc-b.so") + 1));
    path_len = 64;
    ASSERT_EQ(WSCGetProviderPath(&b, path, &path_len, &err), 0);
    EXPECT_EQ(wcscmp(path, L"/opt/nd/libwsc-b.so"), 0);
    GUID unknown = TestGuid(77);
    EXPECT_EQ(WSCGetProviderPath(&unknown, path, &path_len, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);

    // Reinstalling a GUID replaces its entries.
    ASSERT_EQ(WSCInstallProvider(&b, L"/opt/nd/libwsc-b2.so", &two[1], 1, &err), 0) << err;
    auto v = Enum();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(wcscmp(v[1].szProtocol, L"wsc-b6"), 0);
    path_len = 64;
    ASSERT_EQ(WSCGetProviderPath(&b, path, &path_len, &err), 0);
    EXPECT_EQ(wcscmp(path, L"/opt/nd/libwsc-b2.so"), 0);

    // Remove.
    ASSERT_EQ(WSCDeinstallProvider(&a, &err), 0) << err;
    err = 0;
    EXPECT_EQ(WSCDeinstallProvider(&a, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    v = Enum();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].ProviderId, b);
    EXPECT_EQ(v[0].dwCatalogEntryId, 1u);
    ASSERT_EQ(WSCDeinstallProvider(&b, &err), 0) << err;
    len = 0;
    EXPECT_EQ(WSCEnumProtocols(nullptr, nullptr, &len, &err), 0);
}

TEST_F(Wsc, RefusesBadArguments) {
    GUID a = TestGuid(1);
    WSAPROTOCOL_INFOW info = NdInfo(L"x", AF_INET6);
    int err = 0;
    EXPECT_EQ(WSCInstallProvider(&a, L"relative/lib.so", &info, 1, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    err = 0;
    EXPECT_EQ(WSCInstallProvider(nullptr, L"/lib.so", &info, 1, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    err = 0;
    EXPECT_EQ(WSCInstallProvider(&a, L"/lib.so", &info, 0, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    err = 0;
    WSAPROTOCOL_INFOW windows_family = NdInfo(L"x", 23);  // AF_INET6 on Windows, not a Linux family
    EXPECT_EQ(WSCInstallProvider(&a, L"/lib.so", &windows_family, 1, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    err = 0;
    WSAPROTOCOL_INFOW unnamed = NdInfo(L"", AF_INET6);
    EXPECT_EQ(WSCInstallProvider(&a, L"/lib.so", &unnamed, 1, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEINVAL);
    EXPECT_EQ(WSCEnumProtocols(nullptr, nullptr, nullptr, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEFAULT);
    DWORD len = 0;
    EXPECT_EQ(WSCEnumProtocols(nullptr, nullptr, &len, &err), 0);  // nothing was installed
}

TEST_F(Wsc, UntrustedCatalogDirectoryIsAccessDenied) {
    std::string dir = t / "providers.d";
    ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    GUID a = TestGuid(1);
    WSAPROTOCOL_INFOW info = NdInfo(L"x", AF_INET6);
    int err = 0;
    EXPECT_EQ(WSCInstallProvider(&a, L"/lib.so", &info, 1, &err), SOCKET_ERROR);
    EXPECT_EQ(err, WSAEACCES);
}
