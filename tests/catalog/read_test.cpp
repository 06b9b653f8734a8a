// Reading a catalog directory: order, bad files skipped with their reasons,
// hidden and temp files ignored, permission rules, and CheckProviderLibrary.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"

using namespace catalog_test;

namespace {

constexpr uid_t kStranger = 54321;  // a uid that is neither root nor us

std::string ProblemOf(const opennd::CatalogListing &l, const std::string &file) {
    for (const auto &p : l.problems)
        if (Basename(p.file) == file) return p.reason;
    return "<no problem reported for " + file + ">";
}

}  // namespace

TEST(CatalogRead, MissingDirectoryIsAnEmptyCatalog) {
    TempDir t;
    auto l = opennd::ReadCatalog(t / "does-not-exist");
    EXPECT_TRUE(l.entries.empty());
    EXPECT_TRUE(l.problems.empty()) << Problems(l);
}

TEST(CatalogRead, ReadsInFileNameOrderAndResolvesLibraries) {
    TempDir t;
    WriteFile(t / "50-b.conf", GoodText("b", TestGuid(2), "../lib/opennd/libb.so"));
    WriteFile(t / "10-c.conf", GoodText("c", TestGuid(3), "/abs/libc.so"));
    WriteFile(t / "50-a.conf", GoodText("a", TestGuid(1), "liba.so"));
    WriteFile(t / "README", "not a drop-in\n");
    WriteFile(t / "x.conf.disabled", GoodText("x", TestGuid(9)));
    auto l = opennd::ReadCatalog(t.path());
    EXPECT_TRUE(l.problems.empty()) << Problems(l);
    ASSERT_EQ(Names(l), "c,a,b");
    EXPECT_EQ(l.entries[0].file, t / "10-c.conf");
    EXPECT_EQ(l.entries[0].library_path, "/abs/libc.so");
    EXPECT_EQ(l.entries[1].library, "liba.so");
    EXPECT_EQ(l.entries[1].library_path, t / "liba.so");
    EXPECT_EQ(l.entries[2].library_path,
              std::filesystem::path(t.path()).parent_path().string() + "/lib/opennd/libb.so");
    EXPECT_EQ(l.entries[2].provider_id, TestGuid(2));
}

TEST(CatalogRead, BadFilesAreReportedAndSkippedGoodOnesStillLoad) {
    TempDir t;
    const std::string good = GoodText("p", TestGuid(5));
    WriteFile(t / "10-good.conf", GoodText("first", TestGuid(1)));
    WriteFile(t / "20-garbage.conf", "\x7f" "ELF\x02\x01\x01\xff\xfe\x80 binary junk\n");
    WriteFile(t / "30-truncated.conf", good.substr(0, good.find("version=") + 6));
    WriteFile(t / "31-half-written.conf", good.substr(0, good.find("address_family=")));
    std::string missing = good;
    missing.erase(missing.find("library="), missing.find("service_flags1=") - missing.find("library="));
    WriteFile(t / "40-missing.conf", missing);
    std::string badguid = good;
    badguid.replace(badguid.find("provider_id=") + 12, 38, "{not-a-guid}");
    WriteFile(t / "50-badguid.conf", badguid);
    std::string badnum = good;
    badnum.replace(badnum.find("protocol=0"), 10, "protocol=zero");
    WriteFile(t / "60-badnum.conf", badnum);
    WriteFile(t / "65-empty.conf", "");
    WriteFile(t / "70-big.conf", good + std::string(65 * 1024, '#') + "\n");
    std::filesystem::create_directory(t / "80-directory.conf");
    WriteFile(t / "90-last.conf", GoodText("last", TestGuid(2), "/l.so", "1"));

    auto l = opennd::ReadCatalog(t.path());
    EXPECT_EQ(Names(l), "first,last");
    EXPECT_EQ(l.problems.size(), 9u) << Problems(l);
    EXPECT_NE(ProblemOf(l, "20-garbage.conf").find("line 1: not valid UTF-8"), std::string::npos) << Problems(l);
    EXPECT_NE(ProblemOf(l, "30-truncated.conf").find("line 9: no newline at end of file"), std::string::npos);
    EXPECT_NE(ProblemOf(l, "31-half-written.conf").find("missing required key(s): address_family, socket_type"),
              std::string::npos);
    EXPECT_NE(ProblemOf(l, "40-missing.conf").find("missing required key(s): library"), std::string::npos);
    EXPECT_NE(ProblemOf(l, "50-badguid.conf").find("line 5: provider_id: '{not-a-guid}' is not a GUID"),
              std::string::npos);
    EXPECT_NE(ProblemOf(l, "60-badnum.conf").find("line 12: protocol: 'zero' is not a valid"), std::string::npos);
    EXPECT_NE(ProblemOf(l, "65-empty.conf").find("missing required key(s): format"), std::string::npos);
    EXPECT_NE(ProblemOf(l, "70-big.conf").find("larger than 65536 bytes"), std::string::npos);
    EXPECT_NE(ProblemOf(l, "80-directory.conf").find("not a regular file"), std::string::npos);
    for (const auto &p : l.problems) EXPECT_EQ(p.file.rfind(t.path() + "/", 0), 0u) << p.file;
}

TEST(CatalogRead, WrongVersionOrFlagsLoadButAreNoCandidates) {
    TempDir t;
    std::string flags = GoodText("flags", TestGuid(2));
    flags.replace(flags.find("provider_flags=0x00000014"), 25, "provider_flags=0x00000004");
    WriteFile(t / "10-version.conf", GoodText("version", TestGuid(1), "/l.so", "0x00010000"));
    WriteFile(t / "20-flags.conf", flags);
    WriteFile(t / "30-good.conf", GoodText("good", TestGuid(3)));
    auto l = opennd::ReadCatalog(t.path());
    ASSERT_EQ(Names(l), "version,flags,good");
    std::string why;
    EXPECT_FALSE(opennd::IsNdCandidate(l.entries[0], &why));
    EXPECT_NE(why.find("version 0x00010000"), std::string::npos) << why;
    EXPECT_FALSE(opennd::IsNdCandidate(l.entries[1], &why));
    EXPECT_NE(why.find("provider_flags 0x00000004 lacks 0x00000010"), std::string::npos) << why;
    EXPECT_TRUE(opennd::IsNdCandidate(l.entries[2], &why)) << why;
}

TEST(CatalogRead, HiddenAndTempFilesAreIgnored) {
    TempDir t;
    const std::string good = GoodText("p", TestGuid(5));
    WriteFile(t / "50-p.conf", good);
    WriteFile(t / ".50-q.conf.tmp.AbC123", good.substr(0, 40));  // an installer's half-written temp file
    WriteFile(t / ".hidden.conf", "garbage\n");
    WriteFile(t / ".lock", "");
    WriteFile(t / ".conf", "garbage\n");
    auto l = opennd::ReadCatalog(t.path());
    EXPECT_EQ(Names(l), "p");
    EXPECT_TRUE(l.problems.empty()) << Problems(l);
}

TEST(CatalogRead, WorldWritableDirectoryIsRefusedWhole) {
    TempDir t;
    std::string dir = t / "providers.d";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    WriteFile(dir + "/50-p.conf", GoodText("p", TestGuid(5)));
    ASSERT_EQ(opennd::ReadCatalog(dir).entries.size(), 1u);
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    auto l = opennd::ReadCatalog(dir);
    EXPECT_TRUE(l.entries.empty());
    ASSERT_EQ(l.problems.size(), 1u);
    EXPECT_EQ(l.problems[0].file, dir);
    EXPECT_NE(l.problems[0].reason.find("world-writable"), std::string::npos) << l.problems[0].reason;
    ASSERT_EQ(chmod(dir.c_str(), 01777), 0);  // the sticky bit does not make it safe
    EXPECT_TRUE(opennd::ReadCatalog(dir).entries.empty());
}

TEST(CatalogRead, WorldOrGroupWritableDropInIsRefused) {
    TempDir t;
    WriteFile(t / "10-open.conf", GoodText("open", TestGuid(1)), 0666);
    WriteFile(t / "20-fine.conf", GoodText("fine", TestGuid(2)), 0644);
    // Writable by a group other than root's (as root: made so; otherwise the
    // file has our own group, which is not root's either).
    WriteFile(t / "30-group.conf", GoodText("group", TestGuid(3)), 0664);
    if (geteuid() == 0) {
        ASSERT_EQ(chown((t / "30-group.conf").c_str(), static_cast<uid_t>(-1), kStranger), 0);
    }
    auto l = opennd::ReadCatalog(t.path());
    EXPECT_EQ(Names(l), "fine");
    ASSERT_EQ(l.problems.size(), 2u);
    EXPECT_EQ(l.problems[0].file, t / "10-open.conf");
    EXPECT_NE(l.problems[0].reason.find("world-writable"), std::string::npos) << l.problems[0].reason;
    EXPECT_EQ(l.problems[1].file, t / "30-group.conf");
    EXPECT_NE(l.problems[1].reason.find("writable by group"), std::string::npos) << l.problems[1].reason;
    if (geteuid() == 0) {  // root's group may write: only root is in it
        ASSERT_EQ(chown((t / "30-group.conf").c_str(), static_cast<uid_t>(-1), 0), 0);
        EXPECT_EQ(Names(opennd::ReadCatalog(t.path())), "fine,group");
    }
}

TEST(CatalogRead, FilesAndDirectoriesOfOtherUsersAreRefused) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
    TempDir t;
    std::string dir = t / "providers.d";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    WriteFile(dir + "/10-other.conf", GoodText("other", TestGuid(1)));
    WriteFile(dir + "/20-mine.conf", GoodText("mine", TestGuid(2)));
    ASSERT_EQ(chown((dir + "/10-other.conf").c_str(), kStranger, kStranger), 0);
    auto l = opennd::ReadCatalog(dir);
    EXPECT_EQ(Names(l), "mine");
    EXPECT_NE(ProblemOf(l, "10-other.conf").find("owned by uid 54321"), std::string::npos) << Problems(l);
    ASSERT_EQ(chown(dir.c_str(), kStranger, kStranger), 0);
    l = opennd::ReadCatalog(dir);
    EXPECT_TRUE(l.entries.empty());
    ASSERT_EQ(l.problems.size(), 1u);
    EXPECT_NE(l.problems[0].reason.find("owned by uid 54321"), std::string::npos) << l.problems[0].reason;
}

TEST(CatalogRead, SymlinksAreFollowedAndBrokenOnesReported) {
    TempDir t;
    std::string dir = t / "providers.d";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    WriteFile(t / "real.conf", GoodText("linked", TestGuid(1)));
    ASSERT_EQ(symlink((t / "real.conf").c_str(), (dir + "/10-linked.conf").c_str()), 0);
    ASSERT_EQ(symlink((t / "nowhere.conf").c_str(), (dir + "/20-broken.conf").c_str()), 0);
    auto l = opennd::ReadCatalog(dir);
    EXPECT_EQ(Names(l), "linked");
    EXPECT_EQ(l.entries[0].file, dir + "/10-linked.conf");
    EXPECT_NE(ProblemOf(l, "20-broken.conf").find("broken symbolic link"), std::string::npos) << Problems(l);
}

TEST(CatalogRead, FifoDoesNotHangTheReader) {
    TempDir t;
    ASSERT_EQ(mkfifo((t / "50-fifo.conf").c_str(), 0644), 0);
    auto l = opennd::ReadCatalog(t.path());
    ASSERT_EQ(l.problems.size(), 1u);
    EXPECT_NE(l.problems[0].reason.find("not a regular file"), std::string::npos);
}

TEST(CatalogDirectory, EnvironmentOverridesAndDefaultIsAbsolute) {
    {
        ScopedEnv env("OPENND_CATALOG", "/some/where/providers.d");
        EXPECT_EQ(opennd::CatalogDirectory(), "/some/where/providers.d");
    }
    ScopedEnv env("OPENND_CATALOG", "");
    std::string dir = opennd::CatalogDirectory();
    ASSERT_FALSE(dir.empty());
    EXPECT_EQ(dir[0], '/');
    EXPECT_TRUE(dir.ends_with("opennd/providers.d")) << dir;
    EXPECT_EQ(dir.find("/../"), std::string::npos) << dir;
}

// Every directory above the library counts: one that others may write
// could have the library's directory renamed away and another put in its
// place between the check and the load. A sticky one (like /tmp) cannot.
TEST(CatalogLibrary, DirectoriesAboveTheLibraryCount) {
    TempDir t;
    std::string above = t / "above", libdir = above + "/lib", lib = libdir + "/libp.so";
    ASSERT_EQ(mkdir(above.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(libdir.c_str(), 0755), 0);
    WriteFile(lib, "not ELF\n", 0644);
    EXPECT_EQ(opennd::CheckProviderLibrary(lib), "");
    ASSERT_EQ(chmod(above.c_str(), 0777), 0);
    std::string why = opennd::CheckProviderLibrary(lib);
    EXPECT_NE(why.find("directory " + above + " above library"), std::string::npos) << why;
    EXPECT_NE(why.find("world-writable"), std::string::npos) << why;
    ASSERT_EQ(chmod(above.c_str(), 01777), 0);
    EXPECT_EQ(opennd::CheckProviderLibrary(lib), "");
    ASSERT_EQ(chmod(above.c_str(), 0775), 0);
    if (geteuid() == 0) {
        ASSERT_EQ(chown(above.c_str(), static_cast<uid_t>(-1), kStranger), 0);
    }
    why = opennd::CheckProviderLibrary(lib);
    EXPECT_NE(why.find("writable by group"), std::string::npos) << why;
    ASSERT_EQ(chmod(above.c_str(), 0755), 0);
    // The library's own directory: not even sticky makes it safe.
    ASSERT_EQ(chmod(libdir.c_str(), 01777), 0);
    why = opennd::CheckProviderLibrary(lib);
    EXPECT_NE(why.find("the directory " + libdir), std::string::npos) << why;
}

// LoadProviderLibrary loads a library the check allows, and nothing else.
TEST(CatalogLibrary, LoadsOnlyWhatTheCheckAllows) {
    TempDir t;
    std::string libdir = t / "lib", lib = libdir + "/libprovider.so";
    ASSERT_EQ(mkdir(libdir.c_str(), 0755), 0);
    std::filesystem::copy_file(CATALOG_TEST_PROVIDER, lib);
    ASSERT_EQ(chmod(lib.c_str(), 0644), 0);
    std::string why;
    void *dl = opennd::LoadProviderLibrary(lib, RTLD_NOW | RTLD_LOCAL, &why);
    ASSERT_NE(dl, nullptr) << why;
    EXPECT_NE(dlsym(dl, "DllGetClassObject"), nullptr);
    dlclose(dl);
    ASSERT_EQ(chmod(lib.c_str(), 0666), 0);
    EXPECT_EQ(opennd::LoadProviderLibrary(lib, RTLD_NOW | RTLD_LOCAL, &why), nullptr);
    EXPECT_NE(why.find("world-writable"), std::string::npos) << why;
    ASSERT_EQ(chmod(lib.c_str(), 0644), 0);
    WriteFile(libdir + "/libnotelf.so", "not ELF\n", 0644);
    EXPECT_EQ(opennd::LoadProviderLibrary(libdir + "/libnotelf.so", RTLD_NOW | RTLD_LOCAL, &why), nullptr);
    EXPECT_NE(why.find("cannot load"), std::string::npos) << why;
}

TEST(CatalogLibrary, ChecksPathFileDirectoryAndOwner) {
    TempDir t;
    std::string libdir = t / "lib";
    ASSERT_EQ(mkdir(libdir.c_str(), 0755), 0);
    std::string lib = libdir + "/libp.so";
    WriteFile(lib, "not really ELF, the check does not load it\n", 0644);
    EXPECT_EQ(opennd::CheckProviderLibrary(lib), "");
    EXPECT_EQ(opennd::CheckProviderLibrary(libdir + "/../lib/./libp.so"), "");

    EXPECT_NE(opennd::CheckProviderLibrary("libp.so").find("not absolute"), std::string::npos);
    EXPECT_NE(opennd::CheckProviderLibrary("").find("no library"), std::string::npos);
    EXPECT_NE(opennd::CheckProviderLibrary(libdir + "/missing.so").find("does not exist"), std::string::npos);
    EXPECT_NE(opennd::CheckProviderLibrary(libdir).find("not a regular file"), std::string::npos);

    ASSERT_EQ(chmod(lib.c_str(), 0666), 0);
    std::string why = opennd::CheckProviderLibrary(lib);
    EXPECT_NE(why.find("world-writable"), std::string::npos) << why;
    EXPECT_NE(why.find(lib), std::string::npos) << why;
    ASSERT_EQ(chmod(lib.c_str(), 0755), 0);

    ASSERT_EQ(chmod(libdir.c_str(), 0777), 0);
    why = opennd::CheckProviderLibrary(lib);
    EXPECT_NE(why.find("directory " + libdir), std::string::npos) << why;
    EXPECT_NE(why.find("world-writable"), std::string::npos) << why;
    // Through a symlink from a safe place: the real location counts.
    std::string safe = t / "safe";
    ASSERT_EQ(mkdir(safe.c_str(), 0755), 0);
    ASSERT_EQ(symlink(lib.c_str(), (safe + "/libp.so").c_str()), 0);
    why = opennd::CheckProviderLibrary(safe + "/libp.so");
    EXPECT_NE(why.find("world-writable"), std::string::npos) << why;
    ASSERT_EQ(chmod(libdir.c_str(), 0755), 0);
    EXPECT_EQ(opennd::CheckProviderLibrary(safe + "/libp.so"), "");

    if (geteuid() == 0) {
        ASSERT_EQ(chown(lib.c_str(), kStranger, kStranger), 0);
        why = opennd::CheckProviderLibrary(lib);
        EXPECT_NE(why.find("owned by uid 54321"), std::string::npos) << why;
        ASSERT_EQ(chown(lib.c_str(), 0, 0), 0);
        ASSERT_EQ(chown(libdir.c_str(), kStranger, kStranger), 0);
        why = opennd::CheckProviderLibrary(lib);
        EXPECT_NE(why.find("owned by uid 54321"), std::string::npos) << why;
    }
}
