// ndinstall end to end: the built binary ($OPENND_TEST_BUILD_DIR/bin/ndinstall)
// run against private catalog directories.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"

using namespace catalog_test;

namespace {

const char kGuid[] = "{0DC0FFEE-1234-0001-0102-030405060708}";

std::string NdInstall() {
    const char *build = getenv("OPENND_TEST_BUILD_DIR");
    if (build && *build) return std::string(build) + "/bin/ndinstall";
    return CATALOG_TEST_NDINSTALL;
}

struct Result {
    int code = -1;
    std::string out, err;
};

// Runs ndinstall with args; env entries "NAME=value" are added to its environment.
Result RunTool(const std::vector<std::string> &args, const std::vector<std::string> &env = {}) {
    TempDir io;
    std::string out = io / "out", err = io / "err";
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        for (const auto &kv : env) putenv(const_cast<char *>(kv.c_str()));
        std::string tool = NdInstall();
        std::vector<char *> argv{tool.data()};
        for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(tool.c_str(), argv.data());
        _exit(127);
    }
    Result r;
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.code = WEXITSTATUS(status);
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
}

std::string Describe(const Result &r) {
    return "exit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

class NdInstallTool : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(access(NdInstall().c_str(), X_OK), 0) << "no ndinstall at " << NdInstall();
    }
    TempDir t;
    std::string dir = t / "providers.d";
};

}  // namespace

TEST_F(NdInstallTool, HelpExplainsEveryOption) {
    Result r = RunTool({"--help"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    for (const char *opt : {"-l", "--list", "-i", "--install", "-r", "--remove", "--name", "--guid", "--description",
                            "--order", "--catalog", "-h", "--help", "Exit status"})
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
    EXPECT_EQ(RunTool({"-h"}).code, 0);
}

TEST_F(NdInstallTool, UsageErrorsExitTwoWithAMessage) {
    const std::vector<std::vector<std::string>> bad = {
        {},
        {"--bogus"},
        {"-l", "-r", "x"},
        {"-i"},
        {"-l", "extra"},
        {"-l", "--name", "x"},
        {"-i", CATALOG_TEST_PROVIDER, "--guid", kGuid},
        {"-i", CATALOG_TEST_PROVIDER, "--name", "x"},
        {"-i", CATALOG_TEST_PROVIDER, "--name", "x", "--guid", "not-a-guid"},
        {"-i", CATALOG_TEST_PROVIDER, "--name", "x", "--guid", kGuid, "--order", "5"},
    };
    for (auto args : bad) {
        args.insert(args.begin(), {"--catalog", dir});
        Result r = RunTool(args);
        EXPECT_EQ(r.code, 2) << Describe(r);
        EXPECT_NE(r.err.find("ndinstall: "), std::string::npos) << Describe(r);
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST_F(NdInstallTool, InstallListRemoveALibrary) {
    Result r = RunTool({"--catalog", dir, "-l"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_NE(r.out.find("No providers installed"), std::string::npos) << r.out;

    r = RunTool({"--catalog", dir, "-i", CATALOG_TEST_PROVIDER, "--name", "tool-test", "--guid", kGuid, "--description",
             "installed by the test"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    auto l = opennd::ReadCatalog(dir);
    ASSERT_EQ(l.entries.size(), 1u) << Problems(l);
    EXPECT_EQ(Basename(l.entries[0].file), "50-tool-test.conf");
    char *real = realpath(CATALOG_TEST_PROVIDER, nullptr);
    EXPECT_EQ(l.entries[0].library, real);
    free(real);
    EXPECT_EQ(opennd::FormatGuid(l.entries[0].provider_id), kGuid);
    EXPECT_EQ(l.entries[0].description, "installed by the test");
    std::string why;
    EXPECT_TRUE(opennd::IsNdCandidate(l.entries[0], &why)) << why;

    r = RunTool({"--catalog", dir, "--list"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    for (const std::string &s : {std::string("tool-test"), std::string(kGuid), l.entries[0].library,
                                 std::string("0x00020000"), std::string("valid")})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;

    // Through $OPENND_CATALOG instead of --catalog, removing by name.
    r = RunTool({"-r", "tool-test"}, {"OPENND_CATALOG=" + dir});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_TRUE(opennd::ReadCatalog(dir).entries.empty());
    r = RunTool({"--catalog", dir, "-r", "tool-test"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("not installed"), std::string::npos) << Describe(r);

    // Again, with an order, removed by GUID (without braces, lower case).
    r = RunTool(
        {"--catalog", dir, "-i", CATALOG_TEST_PROVIDER, "--name", "tool-test", "--guid", kGuid, "--order", "20"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_TRUE(std::filesystem::exists(dir + "/20-tool-test.conf"));
    r = RunTool({"--catalog", dir, "-r", "0dc0ffee-1234-0001-0102-030405060708"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_TRUE(opennd::ReadCatalog(dir).entries.empty());
}

TEST_F(NdInstallTool, RefusesBadLibraries) {
    Result r = RunTool({"--catalog", dir, "-i", CATALOG_TEST_PROVIDER_NOUNLOAD, "--name", "x", "--guid", kGuid});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("does not export DllCanUnloadNow"), std::string::npos) << Describe(r);
    EXPECT_EQ(r.err.find("DllGetClassObject"), std::string::npos) << Describe(r);

    r = RunTool({"--catalog", dir, "-i", t / "missing.so", "--name", "x", "--guid", kGuid});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("missing.so"), std::string::npos) << Describe(r);

    std::string open_dir = t / "open";
    ASSERT_EQ(mkdir(open_dir.c_str(), 0755), 0);
    std::filesystem::copy_file(CATALOG_TEST_PROVIDER, open_dir + "/libp.so");
    ASSERT_EQ(chmod((open_dir + "/libp.so").c_str(), 0755), 0);
    r = RunTool({"--catalog", dir, "-i", open_dir + "/libp.so", "--name", "x", "--guid", kGuid});
    ASSERT_EQ(r.code, 0) << Describe(r);  // the copy itself is fine
    ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
    r = RunTool({"--catalog", dir, "-i", open_dir + "/libp.so", "--name", "y", "--guid", kGuid});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("world-writable"), std::string::npos) << Describe(r);
    ASSERT_EQ(chmod(open_dir.c_str(), 0755), 0);
    ASSERT_EQ(chmod((open_dir + "/libp.so").c_str(), 0777), 0);
    r = RunTool({"--catalog", dir, "-i", open_dir + "/libp.so", "--name", "y", "--guid", kGuid});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("world-writable"), std::string::npos) << Describe(r);

    // Only the first, good installation is there.
    EXPECT_EQ(Names(opennd::ReadCatalog(dir)), "x");
}

TEST_F(NdInstallTool, InstallsEntryFilesAndListsProblems) {
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    std::string conf = t / "20-from-file.conf";
    WriteFile(conf, GoodText("from-file", TestGuid(1), CATALOG_TEST_PROVIDER));
    Result r = RunTool({"--catalog", dir, "-i", conf});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_TRUE(std::filesystem::exists(dir + "/20-from-file.conf"));

    std::string missing_key = GoodText("bad", TestGuid(2), CATALOG_TEST_PROVIDER);
    missing_key.erase(missing_key.find("version="), missing_key.find("address_family=") - missing_key.find("version="));
    WriteFile(t / "bad.conf", missing_key);
    r = RunTool({"--catalog", dir, "-i", t / "bad.conf"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("missing required key(s): version"), std::string::npos) << Describe(r);

    WriteFile(t / "v3.conf", GoodText("v3", TestGuid(3), CATALOG_TEST_PROVIDER, "3"));
    r = RunTool({"--catalog", dir, "-i", t / "v3.conf"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("not an ND provider entry: version 0x00000003"), std::string::npos) << Describe(r);

    WriteFile(t / "nolib.conf", GoodText("nolib", TestGuid(4), "relative/missing.so"));
    r = RunTool({"--catalog", dir, "-i", t / "nolib.conf"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find(dir + "/relative/missing.so does not exist"), std::string::npos) << Describe(r);

    r = RunTool({"--catalog", dir, "-i", t / "absent.conf"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_NE(r.err.find("cannot open"), std::string::npos) << Describe(r);

    // Problems in the catalog are listed with their reasons; so are non-candidates.
    WriteFile(dir + "/30-junk.conf", "junk\n");
    WriteFile(dir + "/40-v3.conf", GoodText("v3", TestGuid(3), CATALOG_TEST_PROVIDER, "3"));
    r = RunTool({"--catalog", dir, "-l"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    EXPECT_NE(r.out.find(dir + "/30-junk.conf: line 1: expected key=value"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("INVALID, not an ND provider: version 0x00000003"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("from-file"), std::string::npos) << r.out;
    EXPECT_EQ(Names(opennd::ReadCatalog(dir)), "from-file,v3");
}
