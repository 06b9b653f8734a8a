// ndinfo end to end (the built binary): it describes the build tree's
// catalog and the software provider's adapter, and says how that adapter
// moves data, truthfully for each case: cross-memory attach, copying
// through the rings when told to or when this process may not attach (a
// seccomp filter, as in containers), TCP when forced.
#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "json_reader.h"
#include "run_tool.h"

namespace {
using bench_test::Json;
using bench_test::JsonReader;
using bench_test::Outcome;
using bench_test::RunTool;

bool Has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

TEST(Ndinfo, DescribesTheProviderAndItsDataPath) {
    Outcome run = RunTool("ndinfo", {});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const char *want : {"Provider ndsoft", "127.0.0.1", "::1", "MaxInitiatorSge", "note: data path: shared-memory rings",
                             "note: other hosts: iWARP over TCP"})
        EXPECT_TRUE(Has(run.out, want)) << want << "\n" << run.out;
    EXPECT_TRUE(Has(run.out, "cross-memory attach (process_vm_readv/writev)") || Has(run.out, "restricted"))
        << run.out;
    // The same as JSON.
    run = RunTool("ndinfo", {"--json"});
    ASSERT_EQ(run.status, 0) << run.err;
    Json doc = JsonReader::Parse(run.out);
    ASSERT_EQ(doc["providers"].type, Json::kArray);
    ASSERT_FALSE(doc["providers"].array.empty());
    // ndsoft among them (a provider for RDMA devices, when built, comes first).
    bool ndsoft = false;
    for (const Json &p : doc["providers"].array) ndsoft = ndsoft || p["name"].string == "ndsoft";
    EXPECT_TRUE(ndsoft) << run.out;
    EXPECT_TRUE(Has(run.out, "shared-memory rings")) << run.out;
}

// Every tunable is listed with its default and help, and the value in
// effect when one is set; and setting one that is listed changes what
// OpenND does (here, which data path ndinfo reports).
TEST(Ndinfo, ListsEveryTunableWithTheValueInEffect) {
    Outcome run = RunTool("ndinfo", {"--params"}, 60, {"OPENND_SOFT_PARK_MS=7"});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const char *want : {"OPENND_LOG (libopennd)", "OPENND_CATALOG", "OPENND_NO_MEMBARRIER (kit)",
                             "OPENND_SOFT_TRANSPORT (ndsoft)", "OPENND_SOFT_CMA", "OPENND_SOFT_ACCEPT_TIMEOUT_MS",
                             "OPENND_SOFT_MAX_QUEUED", "OPENND_SOFT_READ_ANSWER_TIMEOUT_MS", "default: 30000"})
        EXPECT_TRUE(Has(run.out, want)) << want << "\n" << run.out;
    EXPECT_TRUE(Has(run.out, "OPENND_SOFT_PARK_MS (ndsoft)\n    default: 1\n    set to:  7\n")) << run.out;
}

TEST(Ndinfo, SaysWhenDataIsCopiedThroughTheRings) {
    Outcome run = RunTool("ndinfo", {}, 60, {"OPENND_SOFT_CMA=0"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(Has(run.out, "copied through the rings (OPENND_SOFT_CMA=0)")) << run.out;
    run = RunTool("ndinfo", {}, 60, {"OPENND_SOFT_TRANSPORT=tcp"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(Has(run.out, "iWARP over TCP for every peer")) << run.out;
}

#if defined(__x86_64__)
// process_vm_readv and process_vm_writev fail with EPERM, as a container's
// seccomp profile makes them; everything else is allowed.
void DenyCrossMemoryAttach() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        _exit(126);
}

TEST(Ndinfo, SaysWhenThisProcessMayNotUseCrossMemoryAttach) {
    Outcome run = RunTool("ndinfo", {}, 60, {}, DenyCrossMemoryAttach);
    ASSERT_NE(run.status, 126) << "could not install the seccomp filter";
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(Has(run.out, "cross-memory attach is not available here: process_vm_readv: Operation not permitted"))
        << run.out;
    EXPECT_FALSE(Has(run.out, "cross-memory attach (process_vm_readv/writev), one copy")) << run.out;
}
#endif

}  // namespace
