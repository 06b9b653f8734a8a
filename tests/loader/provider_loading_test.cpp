// Loading providers from the catalog: every kind of broken provider is
// skipped with a reason while the good ones keep working, libraries stay
// loaded while their objects live, and two providers may claim one address.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "ndsupport.h"
#include "opennd/log.h"
#include "support/test_catalog.h"

using namespace testing_support;
namespace fs = std::filesystem;

namespace {

class ProviderLoading : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(NdStartup(), S_OK); }
    void TearDown() override { EXPECT_EQ(NdCleanup(), S_OK); }

    // The VendorId (= loopback mode) of the provider that opens `text`, or 0.
    int OpenedBy(const char *text, HRESULT *hr_out = nullptr) {
        auto a = Ip(text);
        IND2Adapter *adapter = nullptr;
        HRESULT hr = NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), reinterpret_cast<void **>(&adapter));
        if (hr_out) *hr_out = hr;
        if (FAILED(hr)) return 0;
        ND2_ADAPTER_INFO info{};
        info.InfoVersion = 1;
        ULONG cb = sizeof info;
        EXPECT_EQ(adapter->Query(&info, &cb), ND_SUCCESS);
        adapter->Release();
        return info.VendorId;
    }
    size_t AddressCount() {
        SIZE_T cb = 0;
        if (NdQueryAddressList(0, nullptr, &cb) == ND_SUCCESS) return 0;
        std::vector<char> buf(cb);
        EXPECT_EQ(NdQueryAddressList(0, reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()), &cb), ND_SUCCESS);
        return reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data())->iAddressCount;
    }
    static bool IsLoaded(const std::string &path) {
        void *h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (h) dlclose(h);
        return h != nullptr;
    }
    TempCatalog catalog;
};

// What a removed (not purged) provider package leaves: its entry, no
// library. Skipped without a warning (only at OPENND_LOG=3 and up).
TEST_F(ProviderLoading, MissingLibraryIsSkippedQuietly) {
    catalog.Add(10, "missing", loopback::ProviderGuid(5), "/nonexistent/libnd.so");
    catalog.AddLoopback(20, 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(AddressCount(), 3u);
    EXPECT_EQ(OpenedBy("127.0.0.1"), 1);
    const std::string said = ::testing::internal::GetCapturedStderr();
    if (!opennd::LogEnabled(opennd::LogLevel::Info)) {
        EXPECT_EQ(said.find("missing"), std::string::npos) << said;
    }
}

// A library that is there but refused is still warned about.
TEST_F(ProviderLoading, RefusedLibraryIsWarnedAbout) {
    const std::string not_elf = catalog.dir() + "/notnd.so";
    {
        std::ofstream(not_elf) << "not a library\n";
    }
    catalog.Add(10, "notnd", loopback::ProviderGuid(5), not_elf);
    catalog.AddLoopback(20, 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(OpenedBy("127.0.0.1"), 1);
    const std::string said = ::testing::internal::GetCapturedStderr();
    if (opennd::LogEnabled(opennd::LogLevel::Warn)) {
        EXPECT_NE(said.find("notnd"), std::string::npos) << said;
    }
}

TEST_F(ProviderLoading, LibraryWithoutDllCanUnloadNowIsSkipped) {
    catalog.Add(10, "nounload", loopback::ProviderGuid(5), NoUnloadLibrary());
    catalog.AddLoopback(20, 1);
    EXPECT_EQ(AddressCount(), 3u);
    EXPECT_EQ(OpenedBy("127.0.0.1"), 1);
    EXPECT_FALSE(IsLoaded(NoUnloadLibrary()));
}

TEST_F(ProviderLoading, FailingDllGetClassObjectIsSkipped) {
    catalog.AddLoopback(10, 2);
    EXPECT_EQ(AddressCount(), 0u);
    catalog.AddLoopback(20, 1);
    EXPECT_EQ(AddressCount(), 3u);
}

TEST_F(ProviderLoading, FailingQueryAddressListIsSkipped) {
    catalog.AddLoopback(10, 4);
    catalog.AddLoopback(20, 5);
    EXPECT_EQ(AddressCount(), 1u);
    EXPECT_EQ(OpenedBy("127.0.0.1"), 5);
}

TEST_F(ProviderLoading, NotANetworkDirectLibraryIsSkipped) {
    catalog.Add(10, "libc", loopback::ProviderGuid(5), "/lib/x86_64-linux-gnu/libm.so.6");
    catalog.AddLoopback(20, 1);
    EXPECT_EQ(AddressCount(), 3u);
}

// Two entries with one provider GUID (a reinstall in progress, a leftover
// file): the first in catalog order is the provider, as in Winsock and as
// WSCGetProviderPath reports it; the later one is not loaded.
TEST_F(ProviderLoading, OfTwoEntriesWithOneGuidTheFirstCounts) {
    catalog.AddLoopback(10, 1);
    catalog.Add(20, "shadow", loopback::ProviderGuid(1), "/lib/x86_64-linux-gnu/libm.so.6");
    EXPECT_EQ(AddressCount(), 3u);
    EXPECT_EQ(OpenedBy("127.0.0.1"), 1);
}

TEST_F(ProviderLoading, TwoProvidersClaimOneAddressAndTheFirstThatOpensWins) {
    catalog.AddLoopback(10, 3);  // claims 127.0.0.1 but cannot open it
    catalog.AddLoopback(20, 5);  // claims 127.0.0.1 and opens it
    catalog.AddLoopback(30, 1);
    EXPECT_EQ(OpenedBy("127.0.0.1"), 5);
    EXPECT_EQ(OpenedBy("::1"), 1);
}

TEST_F(ProviderLoading, LastFailureIsReturnedWhenNoProviderCanOpen) {
    catalog.AddLoopback(10, 3);
    HRESULT hr = S_OK;
    EXPECT_EQ(OpenedBy("127.0.0.1", &hr), 0);
    EXPECT_EQ(hr, ND_INSUFFICIENT_RESOURCES);
}

TEST_F(ProviderLoading, LibraryInAWorldWritableDirectoryIsRefused) {
    fs::path dir = fs::path(catalog.dir()).parent_path() / ("opennd-ww-" + std::to_string(getpid()));
    fs::create_directories(dir);
    fs::copy_file(LoopbackLibrary(), dir / "libndloopback.so", fs::copy_options::overwrite_existing);
    chmod(dir.c_str(), 0777);
    catalog.Add(10, "unsafe", loopback::ProviderGuid(1), (dir / "libndloopback.so").string());
    EXPECT_EQ(AddressCount(), 0u);
    EXPECT_FALSE(IsLoaded((dir / "libndloopback.so").string()));
    fs::remove_all(dir);
}

TEST_F(ProviderLoading, LibraryStaysLoadedWhileItsObjectsLive) {  // R009, R010
    catalog.AddLoopback(10, 1);
    auto a = Ip("127.0.0.1");
    IND2Adapter *adapter = nullptr;
    ASSERT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), reinterpret_cast<void **>(&adapter)), ND_SUCCESS);
    HANDLE file = nullptr;
    ASSERT_EQ(adapter->CreateOverlappedFile(&file), ND_SUCCESS);
    IND2CompletionQueue *cq = nullptr;
    ASSERT_EQ(adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, 16, 0, 0, reinterpret_cast<void **>(&cq)),
              ND_SUCCESS);
    adapter->Release();  // the CQ keeps the adapter, and the library, alive
    NdFlushProviders();
    EXPECT_TRUE(IsLoaded(LoopbackLibrary()));
    EXPECT_EQ(cq->Resize(32), ND_SUCCESS);
    cq->Release();
    CloseHandle(file);
    NdFlushProviders();
    EXPECT_FALSE(IsLoaded(LoopbackLibrary()));
}

TEST_F(ProviderLoading, RepeatedProviderRequestsAreIndependent) {  // R008
    catalog.AddLoopback(10, 1);
    void *h = dlopen(LoopbackLibrary().c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr);
    auto get = reinterpret_cast<DLLGETCLASSOBJECT>(dlsym(h, "DllGetClassObject"));
    auto can_unload = reinterpret_cast<DLLCANUNLOADNOW>(dlsym(h, "DllCanUnloadNow"));
    ASSERT_TRUE(get && can_unload);
    EXPECT_EQ(can_unload(), S_OK);
    IND2Provider *p1 = nullptr, *p2 = nullptr;
    ASSERT_EQ(get(loopback::ProviderGuid(1), IID_IND2Provider, reinterpret_cast<void **>(&p1)), S_OK);
    ASSERT_EQ(get(loopback::ProviderGuid(1), IID_IND2Provider, reinterpret_cast<void **>(&p2)), S_OK);
    EXPECT_NE(p1, p2);
    EXPECT_EQ(can_unload(), S_FALSE);
    p1->Release();
    UINT64 id = 0;
    auto a = Ip("::1");
    EXPECT_EQ(p2->ResolveAddress(a.sa(), a.length(), &id), ND_SUCCESS);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(can_unload(), S_FALSE);
    p2->Release();
    EXPECT_EQ(can_unload(), S_OK);
    void *bad = reinterpret_cast<void *>(1);
    EXPECT_EQ(get(IID_IND2Provider, IID_IND2Provider, &bad), CLASS_E_CLASSNOTAVAILABLE);
    EXPECT_EQ(bad, nullptr);
    dlclose(h);
}

}  // namespace
