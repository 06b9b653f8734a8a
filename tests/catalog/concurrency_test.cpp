// Installers and removers in several processes at once: the flock on
// <dir>/.lock serialises them and rename keeps every file whole, so readers
// never see a problem and the end state is exactly what the last operations say.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"

using namespace catalog_test;
using opennd::CatalogEntry;

namespace {

constexpr int kChildren = 8;
constexpr int kOperations = 200;
const GUID kShared = TestGuid(999);

GUID OwnGuid(int child) { return TestGuid(100 + static_cast<uint32_t>(child)); }

CatalogEntry Own(int child, int op) {
    CatalogEntry e;
    e.name = "own-" + std::to_string(child);
    e.description = "operation " + std::to_string(op);
    e.provider_id = OwnGuid(child);
    e.library = "/opt/nd/own-" + std::to_string(child) + ".so";
    return e;
}

CatalogEntry Shared(int child, int op) {
    CatalogEntry e;
    e.name = "shared";
    e.description = "child " + std::to_string(child) + " operation " + std::to_string(op);
    e.provider_id = kShared;
    e.library = "/opt/nd/shared-" + std::to_string(child) + ".so";
    return e;
}

// Checks the catalog as child `child` sees it; "" if fine.
std::string Check(const std::string &dir, int child, bool own_installed) {
    auto l = opennd::ReadCatalog(dir);
    if (!l.problems.empty()) return "reader saw a problem: " + Problems(l);
    int own = 0;
    for (const auto &e : l.entries) {
        bool known = e.provider_id == kShared;
        for (int c = 0; c < kChildren; ++c) known = known || e.provider_id == OwnGuid(c);
        if (!known) return "unknown entry " + e.file;
        if (e.provider_id == OwnGuid(child)) ++own;
    }
    if (own != (own_installed ? 1 : 0))
        return "own entry seen " + std::to_string(own) + " times, expected " + (own_installed ? "1" : "0");
    return "";
}

// One child: installs and removes its own provider and the shared one.
int RunChild(const std::string &dir, int child) {
    auto fail = [&](int op, const std::string &what) {
        std::fprintf(stderr, "child %d operation %d: %s\n", child, op, what.c_str());
        return 1;
    };
    for (int op = 0; op < kOperations; ++op) {
        std::string error;
        bool own_installed = false;
        switch (op % 4) {
        case 0:
            if (!opennd::InstallProvider(dir, Own(child, op), &error)) return fail(op, "install own: " + error);
            own_installed = true;
            break;
        case 1:
            if (!opennd::InstallProvider(dir, Shared(child, op), &error)) return fail(op, "install shared: " + error);
            own_installed = true;
            break;
        case 2:
            if (!opennd::RemoveProvider(dir, OwnGuid(child), &error)) return fail(op, "remove own: " + error);
            break;
        case 3:
            if (!opennd::RemoveProvider(dir, kShared, &error) && error.find("not installed") == std::string::npos)
                return fail(op, "remove shared: " + error);
            break;
        }
        if (std::string why = Check(dir, child, own_installed); !why.empty()) return fail(op, why);
    }
    std::string error;
    if (child % 2 == 0 && !opennd::InstallProvider(dir, Own(child, kOperations), &error))
        return fail(kOperations, "final install own: " + error);
    if (!opennd::InstallProvider(dir, Shared(child, kOperations), &error))
        return fail(kOperations, "final install shared: " + error);
    return 0;
}

}  // namespace

TEST(CatalogConcurrency, InstallersAndRemoversInSeveralProcesses) {
    TempDir t;
    const std::string dir = t / "providers.d";
    std::fflush(nullptr);
    std::vector<pid_t> children;
    for (int c = 0; c < kChildren; ++c) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) _exit(RunChild(dir, c));
        children.push_back(pid);
    }
    for (size_t c = 0; c < children.size(); ++c) {
        int status = 0;
        ASSERT_EQ(waitpid(children[c], &status, 0), children[c]);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << c << " status " << status;
    }

    auto l = opennd::ReadCatalog(dir);
    EXPECT_TRUE(l.problems.empty()) << Problems(l);
    std::map<std::string, int> seen;
    for (const auto &e : l.entries) ++seen[opennd::FormatGuid(e.provider_id)];
    std::map<std::string, int> expected{{opennd::FormatGuid(kShared), 1}};
    for (int c = 0; c < kChildren; c += 2) expected[opennd::FormatGuid(OwnGuid(c))] = 1;
    EXPECT_EQ(seen, expected);
    for (const auto &e : l.entries) {
        if (e.provider_id == kShared) {
            EXPECT_EQ(e.name, "shared");
            EXPECT_NE(e.description.find("operation " + std::to_string(kOperations)), std::string::npos)
                << e.description;
        }
    }
    // Nothing left over but the lock file and one file per entry.
    std::vector<std::string> names = DirNames(dir);
    EXPECT_EQ(names.size(), l.entries.size() + 1);
    for (const auto &n : names) EXPECT_TRUE(n == ".lock" || n.ends_with(".conf")) << n;
}
