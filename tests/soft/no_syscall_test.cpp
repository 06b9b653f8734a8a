// The same-host data path makes no system call: posting, delivery and
// polling go through shared memory only. A child process connects two
// endpoints over ndsoft's shared-memory path, warms up, then puts a seccomp
// filter on its own thread (not on the provider's progress thread) that
// traps every system call, and runs a ping-pong of Sends, Receives and
// GetResults. The SIGSYS handler counts what was trapped; the count must be
// zero. sched_yield is let through: a spin lock that finds the progress
// thread holding it yields, which is not a per-message cost.
#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <future>

#include "support/nd_session.h"

namespace {
using namespace nd_session;

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define OPENND_NO_SYSCALL_TEST 1
#endif

struct Shared {  // written by the child, read by the parent (MAP_SHARED)
    std::atomic<int> stage;     // how far the child got: 3 = done
    std::atomic<int> trapped;   // system calls the filter stopped
    std::atomic<int> first_nr;  // the first one's number
    std::atomic<int> messages;  // messages that arrived intact
};
Shared *g_shared = nullptr;

#ifdef OPENND_NO_SYSCALL_TEST
void OnSigsys(int, siginfo_t *info, void *) {
    if (g_shared->trapped.fetch_add(1) == 0) g_shared->first_nr.store(info->si_syscall);
}

bool TrapEverySystemCall() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 4, 0),  // the handler's return
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_yield, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;  // this thread only
}
#endif

opennd::net::IpAddress Loopback(uint16_t port = 0) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress("127.0.0.1", &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

// Takes `receives` receive and `sends` send completions from e's CQ, in
// whatever order they come, polling; false on a failure or none for long.
bool Take(Endpoint &e, int receives, int sends) {
    ND2_RESULT r;
    for (uint64_t spins = 0; (receives > 0 || sends > 0) && spins < 200000000; ++spins) {
        if (e.cq->GetResults(&r, 1) == 0) continue;
        if (r.Status != ND_SUCCESS) return false;
        (r.RequestType == Nd2RequestTypeReceive ? receives : sends)--;
    }
    return receives == 0 && sends == 0;
}

// One round: a receive posted on each side, a Send each way (the second
// echoes what the first carried), every completion taken by polling.
bool Round(Endpoint &a, Endpoint &b, Buffer &ab, Buffer &bb, uint32_t i, ULONG flags) {
    const int sends = (flags & ND_OP_FLAG_SILENT_SUCCESS) ? 0 : 1;
    ND2_SGE ra = ab.Sge(64, 64), rb = bb.Sge(64, 64);
    if (a.qp->Receive(nullptr, &ra, 1) != ND_SUCCESS || b.qp->Receive(nullptr, &rb, 1) != ND_SUCCESS) return false;
    std::memcpy(ab.bytes.data(), &i, sizeof i);
    ND2_SGE sa = ab.Sge(0, sizeof i);
    if (a.qp->Send(nullptr, &sa, 1, flags) != ND_SUCCESS || !Take(b, 1, 0)) return false;
    std::memcpy(bb.bytes.data(), bb.bytes.data() + 64, sizeof i);  // echo it
    ND2_SGE sb = bb.Sge(0, sizeof i);
    if (b.qp->Send(nullptr, &sb, 1, flags) != ND_SUCCESS || !Take(a, 1, sends) || !Take(b, 0, sends)) return false;
    uint32_t back = 0;
    std::memcpy(&back, ab.bytes.data() + 64, sizeof back);
    return back == i;
}

[[maybe_unused]] int Child() {  // (unused where the test is skipped)
    if (NdStartup() != S_OK) return 1;
    Endpoint a, b;
    uint16_t port = 0;
    if (!b.Open(Loopback()) || !b.Listen(Loopback(), &port) || !a.Open(Loopback())) return 2;
    auto accepted = std::async(std::launch::async, [&] { return b.Accept(); });
    if (!a.Connect(Loopback(port)) || !accepted.get()) return 3;
    Buffer ab(4096), bb(4096);
    if (!ab.Register(a) || !bb.Register(b)) return 4;
    for (uint32_t i = 0; i < 2000; ++i)  // rings, queues and the CQs reach their working sizes
        if (!Round(a, b, ab, bb, i, i % 2 ? ND_OP_FLAG_SILENT_SUCCESS : 0)) return 5;
    g_shared->stage.store(1);
#ifdef OPENND_NO_SYSCALL_TEST
    struct sigaction sa{};
    sa.sa_sigaction = OnSigsys;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSYS, &sa, nullptr) != 0 || !TrapEverySystemCall()) return 6;
#endif
    g_shared->stage.store(2);
    for (uint32_t i = 0; i < 20000; ++i) {
        if (!Round(a, b, ab, bb, i, i % 2 ? ND_OP_FLAG_SILENT_SUCCESS : 0)) break;
        g_shared->messages.fetch_add(2);
    }
    g_shared->stage.store(3);
    // exit_group itself, not _exit: a sanitizer's _exit runs its own checks,
    // which make system calls (the filter would trap them for ever).
    syscall(SYS_exit_group, 0);
    return 0;
}

TEST(NoSystemCalls, PollingPingPongOverSharedMemoryMakesNone) {
#ifndef OPENND_NO_SYSCALL_TEST
    GTEST_SKIP() << "x86-64 seccomp filter; not under ThreadSanitizer (its runtime makes system calls)";
#else
    void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    g_shared = new (mem) Shared{};
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(Child());
    int status = 0;
    for (int ms = 0; ms < 60000 && waitpid(pid, &status, WNOHANG) == 0; ms += 10) usleep(10000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "the child did not finish within 60 s (stage " << g_shared->stage.load() << ")";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child status " << status << " at stage " << g_shared->stage.load();
    EXPECT_EQ(g_shared->stage.load(), 3);
    EXPECT_EQ(g_shared->messages.load(), 40000) << "messages that arrived intact under the filter";
    EXPECT_EQ(g_shared->trapped.load(), 0) << "system calls on the data path; the first: number "
                                           << g_shared->first_nr.load();
    munmap(mem, sizeof(Shared));
#endif
}

}  // namespace
