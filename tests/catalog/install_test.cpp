// Installing and removing providers in one process: file names and order,
// replacement by GUID, removal by GUID and by name, refusals.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"

using namespace catalog_test;
using opennd::CatalogEntry;

namespace {

CatalogEntry Entry(const std::string &name, uint32_t n, const std::string &library = "/opt/nd/lib.so") {
    CatalogEntry e;
    e.name = name;
    e.description = "provider " + name;
    e.provider_id = TestGuid(n);
    e.library = library;
    return e;
}

void Install(const std::string &dir, const CatalogEntry &e) {
    std::string error;
    ASSERT_TRUE(opennd::InstallProvider(dir, e, &error)) << error;
}

// The *.conf names of dir.
std::string ConfNames(const std::string &dir) {
    std::string s;
    for (const auto &n : DirNames(dir))
        if (n.ends_with(".conf")) s += (s.empty() ? "" : ",") + n;
    return s;
}

}  // namespace

TEST(CatalogInstall, CreatesTheDirectoryAndWritesOneFile) {
    TempDir t;
    std::string dir = t / "etc/opennd/providers.d";
    mode_t old = umask(077);
    std::string error;
    bool ok = opennd::InstallProvider(dir, Entry("alpha", 1), &error);
    umask(old);
    ASSERT_TRUE(ok) << error;
    struct stat st;
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    ASSERT_EQ(stat((dir + "/50-alpha.conf").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(DirNames(dir), (std::vector<std::string>{".lock", "50-alpha.conf"}));

    auto l = opennd::ReadCatalog(dir);
    ASSERT_EQ(l.entries.size(), 1u) << Problems(l);
    const CatalogEntry &e = l.entries[0];
    EXPECT_EQ(e.file, dir + "/50-alpha.conf");
    EXPECT_EQ(e.name, "alpha");
    EXPECT_EQ(e.description, "provider alpha");
    EXPECT_EQ(e.provider_id, TestGuid(1));
    EXPECT_EQ(e.library_path, "/opt/nd/lib.so");
    EXPECT_TRUE(opennd::IsNdCandidate(e, &error)) << error;
}

TEST(CatalogInstall, NewProvidersGoLastAndReplacementsKeepTheirPlace) {
    TempDir t;
    Install(t.path(), Entry("zeta", 1));
    Install(t.path(), Entry("alpha", 2));  // "50-alpha" would sort first: it becomes 51-alpha
    Install(t.path(), Entry("mid", 3));
    EXPECT_EQ(ConfNames(t.path()), "50-zeta.conf,51-alpha.conf,51-mid.conf");
    EXPECT_EQ(Names(opennd::ReadCatalog(t.path())), "zeta,alpha,mid");

    // Same GUID: replaced in place, also under a new name.
    CatalogEntry again = Entry("zeta", 1, "/opt/nd/zeta2.so");
    Install(t.path(), again);
    CatalogEntry renamed = Entry("alpha-renamed", 2);
    Install(t.path(), renamed);
    EXPECT_EQ(ConfNames(t.path()), "50-zeta.conf,51-alpha-renamed.conf,51-mid.conf");
    auto l = opennd::ReadCatalog(t.path());
    EXPECT_EQ(Names(l), "zeta,alpha-renamed,mid");
    EXPECT_EQ(l.entries[0].library, "/opt/nd/zeta2.so");
}

// A provider that serves every address (ndsoft, order 90) stays last: one
// installed after it, without an order, is tried first.
TEST(CatalogInstall, NewProvidersGoBeforeTheFallbackOrders) {
    TempDir t;
    CatalogEntry fallback = Entry("soft", 1);
    fallback.file = "90-soft.conf";
    Install(t.path(), fallback);
    Install(t.path(), Entry("nic", 2));
    Install(t.path(), Entry("nic2", 3));
    EXPECT_EQ(ConfNames(t.path()), "50-nic.conf,50-nic2.conf,90-soft.conf");
    EXPECT_EQ(Names(opennd::ReadCatalog(t.path())), "nic,nic2,soft");
    // Every order below 90 taken by names that sort late: 89, still first.
    TempDir full;
    CatalogEntry late = Entry("zz", 4);
    late.file = "89-zz.conf";
    Install(full.path(), late);
    Install(full.path(), fallback);
    Install(full.path(), Entry("aa", 5));
    EXPECT_EQ(ConfNames(full.path()), "89-aa.conf,89-zz.conf,90-soft.conf");
}

TEST(CatalogInstall, EntryNamesItsOwnOrderAndNamesAreSanitised) {
    TempDir t;
    Install(t.path(), Entry("late", 1));
    CatalogEntry e = Entry("my provider/v2 ü", 2);
    e.file = "/elsewhere/20-whatever.conf";
    Install(t.path(), e);
    EXPECT_EQ(ConfNames(t.path()), "20-my_provider_v2___.conf,50-late.conf");
    auto l = opennd::ReadCatalog(t.path());
    EXPECT_EQ(Names(l), "my provider/v2 ü,late");
}

TEST(CatalogInstall, SeveralEntriesOfOneProvider) {
    TempDir t;
    CatalogEntry v4 = Entry("dual", 1), v6 = Entry("dual", 1);
    v4.address_family = AF_INET;
    std::string error;
    ASSERT_TRUE(opennd::InstallProvider(t.path(), std::vector<CatalogEntry>{v4, v6}, &error)) << error;
    EXPECT_EQ(ConfNames(t.path()), "50-dual-01.conf,50-dual-02.conf");
    auto l = opennd::ReadCatalog(t.path());
    ASSERT_EQ(l.entries.size(), 2u);
    EXPECT_EQ(l.entries[0].address_family, AF_INET);
    EXPECT_EQ(l.entries[1].address_family, AF_INET6);
    // Mixed GUIDs are refused.
    EXPECT_FALSE(opennd::InstallProvider(t.path(), std::vector<CatalogEntry>{v4, Entry("x", 2)}, &error));
    EXPECT_NE(error.find("share one provider_id"), std::string::npos) << error;
    // Reinstalling with one entry replaces both files.
    Install(t.path(), v6);
    EXPECT_EQ(ConfNames(t.path()), "50-dual.conf");
}

TEST(CatalogInstall, RemoveByGuidAndByName) {
    TempDir t;
    Install(t.path(), Entry("a", 1));
    Install(t.path(), Entry("b", 2));
    std::string error;
    EXPECT_TRUE(opennd::RemoveProvider(t.path(), TestGuid(1), &error)) << error;
    EXPECT_EQ(Names(opennd::ReadCatalog(t.path())), "b");
    EXPECT_FALSE(opennd::RemoveProvider(t.path(), TestGuid(1), &error));
    EXPECT_NE(error.find("not installed"), std::string::npos) << error;
    EXPECT_TRUE(opennd::RemoveProviderByName(t.path(), "b", &error)) << error;
    EXPECT_FALSE(opennd::RemoveProviderByName(t.path(), "b", &error));
    EXPECT_NE(error.find("not installed"), std::string::npos) << error;
    EXPECT_FALSE(opennd::RemoveProvider(t / "missing", TestGuid(1), &error));
    EXPECT_NE(error.find("not installed"), std::string::npos) << error;
    EXPECT_EQ(ConfNames(t.path()), "");
}

TEST(CatalogInstall, RemovesARefusedFileOfTheProviderToo) {
    TempDir t;
    Install(t.path(), Entry("a", 1));
    ASSERT_EQ(chmod((t / "50-a.conf").c_str(), 0666), 0);
    ASSERT_TRUE(opennd::ReadCatalog(t.path()).entries.empty());
    std::string error;
    EXPECT_TRUE(opennd::RemoveProvider(t.path(), TestGuid(1), &error)) << error;
    EXPECT_EQ(ConfNames(t.path()), "");
}

TEST(CatalogInstall, RefusesWhatCannotBeStoredOrWouldClobber) {
    TempDir t;
    std::string error;
    CatalogEntry bad = Entry("bad", 1);
    bad.address_family = 23;
    EXPECT_FALSE(opennd::InstallProvider(t.path(), bad, &error));
    EXPECT_NE(error.find("address family 23"), std::string::npos) << error;
    bad = Entry("", 1);
    EXPECT_FALSE(opennd::InstallProvider(t.path(), bad, &error));
    EXPECT_NE(error.find("name is empty"), std::string::npos) << error;

    // Another provider's file already has the name.
    CatalogEntry first = Entry("same", 1), second = Entry("same", 2);
    first.file = second.file = "50-same.conf";
    Install(t.path(), first);
    EXPECT_FALSE(opennd::InstallProvider(t.path(), second, &error));
    EXPECT_NE(error.find("belongs to provider " + opennd::FormatGuid(TestGuid(1))), std::string::npos) << error;
    // A bad file is not overwritten either.
    WriteFile(t / "60-junk.conf", "junk\n");
    CatalogEntry junk = Entry("junk", 3);
    junk.file = "60-junk.conf";
    EXPECT_FALSE(opennd::InstallProvider(t.path(), junk, &error));
    EXPECT_NE(error.find("not a valid entry"), std::string::npos) << error;
    EXPECT_EQ(ReadFile(t / "60-junk.conf"), "junk\n");
}

TEST(CatalogInstall, RefusesAnUntrustedDirectory) {
    TempDir t;
    std::string dir = t / "open";
    ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    std::string error;
    EXPECT_FALSE(opennd::InstallProvider(dir, Entry("a", 1), &error));
    EXPECT_NE(error.find("world-writable"), std::string::npos) << error;
    EXPECT_EQ(ConfNames(dir), "");
}

TEST(CatalogInstall, CleansUpTempFilesOfDeadInstallers) {
    TempDir t;
    WriteFile(t / ".50-a.conf.tmp.Xy12Z3", "format=1\nname=");
    WriteFile(t / ".keep-me", "");
    Install(t.path(), Entry("a", 1));
    EXPECT_EQ(DirNames(t.path()), (std::vector<std::string>{".keep-me", ".lock", "50-a.conf"}));
}
