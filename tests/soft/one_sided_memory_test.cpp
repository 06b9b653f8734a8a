// RDMA Write and Read into memory as applications have it (#27): the
// target's memory keeps its semantics whatever moves the bytes. A region
// deregistered under a peer that keeps writing is never written again; an
// unaligned region leaves the rest of its page, which another thread is
// writing, alone; a target that forks keeps getting the peer's Writes
// (its child does not); pages the application dropped (MADV_DONTNEED) read
// as zeros and take Writes; huge pages are read and written across their
// boundary. The target is a child process that checks its own memory and
// answers the parent, which is the initiator; on every ndsoft path.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "support/nd_session.h"
#include "two_process.h"

using namespace nd_session;
using namespace two_process;

namespace {

struct Advert {
    uint64_t address;
    uint32_t token;
    uint32_t length;
};

enum class Path { CrossMemoryAttach, CopyThroughRing, Tcp };

class OneSidedMemory : public ::testing::TestWithParam<Path> {
protected:
    void SetUp() override {
        if (GetParam() == Path::CopyThroughRing) setenv("OPENND_SOFT_CMA", "0", 1);
        if (GetParam() == Path::Tcp) setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);
        ASSERT_EQ(NdStartup(), S_OK);
    }
    void TearDown() override {
        NdCleanup();
        unsetenv("OPENND_SOFT_CMA");
        unsetenv("OPENND_SOFT_TRANSPORT");
    }
};

constexpr const char *kAddress = "127.0.0.1";
char Pattern(size_t i, int seed) { return static_cast<char>((i * 131 + seed * 7 + 1) | 1); }  // never 0

// The target's end: one connection on kAddress whose private data is the
// region's advert, a receive always posted for the initiator's one-byte
// messages, and one-byte answers.
struct Target {
    Endpoint ep;
    Buffer msg{64};
    opennd::client::Region mr;

    bool Start(int port_fd, void *data, size_t length) {
        if (!ep.Open(Addr(kAddress)) || !msg.Register(ep)) return false;
        if (!mr.Register(ep.adapter, ep.file, data, length, opennd::client::kAllAccess,
                         opennd::client::Deadline::After(10000)))
            return false;
        uint16_t port = 0;
        if (!ep.Listen(Addr(kAddress), &port) || !Post() || !TellPort(port_fd, port)) return false;
        Advert a{reinterpret_cast<uint64_t>(data), mr->GetRemoteToken(), static_cast<uint32_t>(length)};
        return ep.Accept(&a, sizeof a);
    }
    bool Post() {
        ND2_SGE rs = msg.Sge(0, 1);
        return SUCCEEDED(ep.qp->Receive(&msg, &rs, 1));
    }
    // The initiator's next message, or 0 when the connection ended.
    char Next() {
        for (;;) {
            ND2_RESULT r = ep.Next(20000);
            if (FAILED(r.Status)) return 0;
            if (r.RequestType == Nd2RequestTypeReceive) {
                char c = msg.bytes[0];
                return Post() ? c : 0;
            }
        }
    }
    bool Answer(char c) {
        msg.bytes[8] = c;
        ND2_SGE ss = msg.Sge(8, 1);
        return SUCCEEDED(ep.qp->Send(nullptr, &ss, 1, ND_OP_FLAG_SILENT_SUCCESS));
    }
    // Until the initiator disconnects.
    bool Finish() {
        while (Next() != 0) {
        }
        return true;
    }
};

// The initiator's end.
struct Initiator {
    Endpoint ep;
    Buffer msg{64}, data;
    Advert peer{};
    explicit Initiator(size_t n) : data(n) {}

    bool Connect(uint16_t port) {
        if (!ep.Open(Addr(kAddress)) || !msg.Register(ep) || !data.Register(ep)) return false;
        ND2_SGE rs = msg.Sge(0, 1);
        if (FAILED(ep.qp->Receive(nullptr, &rs, 1))) return false;
        if (!ep.Connect(Addr(kAddress, port))) return false;
        ULONG len = sizeof peer;
        return SUCCEEDED(ep.connector->GetPrivateData(&peer, &len)) && len >= sizeof peer;
    }
    HRESULT Write(size_t from, size_t length, uint64_t at) {
        ND2_SGE s = data.Sge(from, length);
        HRESULT hr = ep.qp->Write(nullptr, &s, 1, at, peer.token, 0);
        return FAILED(hr) ? hr : ep.Next().Status;
    }
    HRESULT Read(size_t into, size_t length, uint64_t at) {
        ND2_SGE s = data.Sge(into, length);
        HRESULT hr = ep.qp->Read(nullptr, &s, 1, at, peer.token, 0);
        return FAILED(hr) ? hr : ep.Next().Status;
    }
    // Sends `c` and returns the target's one-byte answer (0 if none).
    char Ask(char c) {
        msg.bytes[8] = c;
        ND2_SGE ss = msg.Sge(8, 1);
        if (FAILED(ep.qp->Send(nullptr, &ss, 1, ND_OP_FLAG_SILENT_SUCCESS))) return 0;
        for (;;) {
            ND2_RESULT r = ep.Next();
            if (FAILED(r.Status)) return 0;
            if (r.RequestType != Nd2RequestTypeReceive) continue;
            char answer = msg.bytes[0];
            ND2_SGE rs = msg.Sge(0, 1);
            return SUCCEEDED(ep.qp->Receive(nullptr, &rs, 1)) ? answer : 0;
        }
    }
    void Disconnect() {
        OVERLAPPED ov{};
        ep.Wait(ep.connector, &ov, ep.connector->Disconnect(&ov));
    }
};

// Does p[0, n) hold Pattern(., seed)?
bool Holds(const char *p, size_t n, int seed) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != Pattern(i, seed)) return false;
    return true;
}

// The child target is running and the initiator connected to it.
::testing::AssertionResult Connected(pid_t child, uint16_t port, Initiator &in) {
    if (child <= 0 || port == 0) return ::testing::AssertionFailure() << "the target did not start";
    if (!in.Connect(port)) return ::testing::AssertionFailure() << in.ep.error;
    return ::testing::AssertionSuccess();
}

bool AllZero(const char *p, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != 0) return false;
    return true;
}

// The target deregisters while the initiator writes without pause; once
// Deregister has returned, no byte of the region changes again, and the
// initiator's next Write fails.
TEST_P(OneSidedMemory, ADeregisteredRegionIsNeverWrittenWhileThePeerKeepsWriting) {
    constexpr size_t kLen = 65536;
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        std::vector<char> region(kLen, 0);
        Target t;
        if (!t.Start(fd, region.data(), kLen)) return false;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::atomic_ref<char>(region[kLen - 1]).load() == 0)  // the Writes are landing
            if (std::chrono::steady_clock::now() > until) return false;
        if (!t.mr.Deregister(opennd::client::Deadline::After(10000))) return false;
        std::memset(region.data(), 0, kLen);
        const auto watch = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (std::chrono::steady_clock::now() < watch) {
            asm volatile("" ::: "memory");  // read the region afresh: the peer's kernel writes it
            if (!AllZero(region.data(), kLen)) {
                std::fprintf(stderr, "target: written after its Deregister returned\n");
                return false;
            }
        }
        return t.Finish();
    });
    Initiator in(kLen);
    ASSERT_TRUE(Connected(child, port, in));
    for (size_t i = 0; i < kLen; ++i) in.data.bytes[i] = Pattern(i, 1);
    HRESULT last = ND_SUCCESS;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int writes = 0;
    while (SUCCEEDED(last) && std::chrono::steady_clock::now() < until) {
        last = in.Write(0, kLen, in.peer.address);
        ++writes;
    }
    EXPECT_EQ(last, ND_ACCESS_VIOLATION) << "after " << writes << " Writes";
    in.Disconnect();
    EXPECT_EQ(Reap(child), 0);
}

// A region of bytes 100 to 4000 of one page, whose other bytes a thread of
// the target writes and reads back all the while: the initiator's Writes
// and Reads of the region never change them.
TEST_P(OneSidedMemory, AnUnalignedRegionLeavesTheRestOfItsPageAlone) {
    constexpr size_t kPage = 4096, kFrom = 100, kTo = 4000;
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        char *page = static_cast<char *>(aligned_alloc(kPage, kPage));
        std::memset(page, 0, kPage);
        std::atomic<bool> stop{false};
        std::atomic<uint64_t> clobbered{0}, rounds{0};
        std::thread neighbour([&] {
            for (uint8_t v = 1; !stop.load(std::memory_order_relaxed); v = static_cast<uint8_t>(v % 250 + 1)) {
                for (size_t i = 0; i < kFrom; ++i) std::atomic_ref<char>(page[i]).store(static_cast<char>(v));
                for (size_t i = kTo; i < kPage; ++i) std::atomic_ref<char>(page[i]).store(static_cast<char>(v));
                for (size_t i = 0; i < kPage; ++i)
                    if ((i < kFrom || i >= kTo) && std::atomic_ref<char>(page[i]).load() != static_cast<char>(v))
                        clobbered.fetch_add(1);
                rounds.fetch_add(1);
            }
        });
        Target t;
        bool ok = t.Start(fd, page + kFrom, kTo - kFrom);
        ok = ok && t.Next() == 'd';  // the initiator is done
        stop = true;
        neighbour.join();
        ok = ok && Holds(page + kFrom, kTo - kFrom, 9);
        ok = ok && t.Answer(clobbered.load() == 0 && rounds.load() > 0 ? 'y' : 'n') && t.Finish();
        if (clobbered.load()) std::fprintf(stderr, "target: %llu neighbour bytes changed under the thread\n",
                                           static_cast<unsigned long long>(clobbered.load()));
        std::free(page);
        return ok;
    });
    Initiator in(2 * (kTo - kFrom));
    ASSERT_TRUE(Connected(child, port, in));
    const size_t n = kTo - kFrom;
    for (int round = 0; round < 300; ++round) {
        const int seed = round % 10;
        for (size_t i = 0; i < n; ++i) in.data.bytes[i] = Pattern(i, seed);
        ASSERT_EQ(in.Write(0, n, in.peer.address), ND_SUCCESS) << "round " << round;
        ASSERT_EQ(in.Read(n, n, in.peer.address), ND_SUCCESS) << "round " << round;
        ASSERT_EQ(std::memcmp(in.data.bytes.data() + n, in.data.bytes.data(), n), 0) << "round " << round;
    }
    EXPECT_EQ(in.Ask('d'), 'y') << "the bytes around the region changed";
    in.Disconnect();
    EXPECT_EQ(Reap(child), 0);
}

// The target forks after registering; its child scribbles over its own
// copy of the region. The initiator's Writes reach the target, not the
// child, and its Reads see the target's bytes.
TEST_P(OneSidedMemory, ATargetThatForksKeepsTheRegion) {
    constexpr size_t kLen = 65536;
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        std::vector<char> region(kLen);
        for (size_t i = 0; i < kLen; ++i) region[i] = Pattern(i, 3);
        Target t;
        if (!t.Start(fd, region.data(), kLen)) return false;
        int done[2];
        if (pipe(done) != 0) return false;
        pid_t grandchild = fork();
        if (grandchild == 0) {  // its copy of the region is its own
            std::memset(region.data(), 0x7e, kLen);
            char c;
            bool ok = read(done[0], &c, 1) == 1;
            for (size_t i = 0; ok && i < kLen; ++i) ok = region[i] == 0x7e;
            _exit(ok ? 0 : 1);
        }
        bool ok = t.Next() == 'd' && Holds(region.data(), kLen, 4);  // Written, then Read
        ok = write(done[1], "x", 1) == 1 && ok;
        int status = 0;
        ok = waitpid(grandchild, &status, 0) == grandchild && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
        return t.Answer(ok ? 'y' : 'n') && t.Finish() && ok;
    });
    Initiator in(2 * kLen);
    ASSERT_TRUE(Connected(child, port, in));
    ASSERT_EQ(in.Read(kLen, kLen, in.peer.address), ND_SUCCESS);
    ASSERT_TRUE(Holds(in.data.bytes.data() + kLen, kLen, 3));
    for (size_t i = 0; i < kLen; ++i) in.data.bytes[i] = Pattern(i, 4);
    ASSERT_EQ(in.Write(0, kLen, in.peer.address), ND_SUCCESS);
    ASSERT_EQ(in.Read(kLen, kLen, in.peer.address), ND_SUCCESS);
    EXPECT_EQ(std::memcmp(in.data.bytes.data() + kLen, in.data.bytes.data(), kLen), 0);
    EXPECT_EQ(in.Ask('d'), 'y') << "the target's region, or its child's copy, is not what it should be";
    in.Disconnect();
    EXPECT_EQ(Reap(child), 0);
}

// Registered pages the application drops (MADV_DONTNEED) read as zeros
// afterwards, and take Writes.
TEST_P(OneSidedMemory, PagesTheApplicationDroppedReadAsZerosAndTakeWrites) {
    constexpr size_t kLen = 16 * 4096;
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        void *m = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return false;
        char *region = static_cast<char *>(m);
        std::memset(region, 0x5a, kLen);
        Target t;
        if (!t.Start(fd, region, kLen) || t.Next() != 'z') return false;
        if (madvise(region, kLen, MADV_DONTNEED) != 0 || !t.Answer('y')) return false;
        bool ok = t.Next() == 'd' && Holds(region, kLen, 5);
        return t.Answer(ok ? 'y' : 'n') && t.Finish() && ok;
    });
    Initiator in(2 * kLen);
    ASSERT_TRUE(Connected(child, port, in));
    ASSERT_EQ(in.Read(kLen, kLen, in.peer.address), ND_SUCCESS);
    EXPECT_EQ(in.data.bytes[kLen], 0x5a);
    ASSERT_EQ(in.Ask('z'), 'y');  // dropped
    ASSERT_EQ(in.Read(kLen, kLen, in.peer.address), ND_SUCCESS);
    EXPECT_TRUE(AllZero(in.data.bytes.data() + kLen, kLen)) << "a dropped page read back its old bytes";
    for (size_t i = 0; i < kLen; ++i) in.data.bytes[i] = Pattern(i, 5);
    ASSERT_EQ(in.Write(0, kLen, in.peer.address), ND_SUCCESS);
    EXPECT_EQ(in.Ask('d'), 'y') << "the Write did not land in the dropped pages";
    in.Disconnect();
    EXPECT_EQ(Reap(child), 0);
}

// A region on huge pages (hugetlbfs where the system has some, else
// transparent huge pages asked for with MADV_HUGEPAGE): Writes and Reads
// across the boundary between two of them land intact.
TEST_P(OneSidedMemory, HugePagesAreWrittenAndReadAcrossTheirBoundary) {
    constexpr size_t kHuge = 2u << 20, kLen = 2 * kHuge, kSpan = 512 * 1024;
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        void *m = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (m == MAP_FAILED) {  // no hugetlbfs pages: THP on an aligned mapping
            void *raw = mmap(nullptr, kLen + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (raw == MAP_FAILED) return false;
            m = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
            madvise(m, kLen, MADV_HUGEPAGE);
        }
        char *region = static_cast<char *>(m);
        std::memset(region, 0, kLen);
        Target t;
        if (!t.Start(fd, region, kLen)) return false;
        bool ok = t.Next() == 'd' && Holds(region + kHuge - kSpan / 2, kSpan, 6);
        ok = ok && AllZero(region, kHuge - kSpan / 2) && AllZero(region + kHuge + kSpan / 2, kHuge - kSpan / 2);
        return t.Answer(ok ? 'y' : 'n') && t.Finish() && ok;
    });
    Initiator in(2 * kSpan);
    ASSERT_TRUE(Connected(child, port, in));
    for (size_t i = 0; i < kSpan; ++i) in.data.bytes[i] = Pattern(i, 6);
    const uint64_t at = in.peer.address + kHuge - kSpan / 2;
    ASSERT_EQ(in.Write(0, kSpan, at), ND_SUCCESS);
    ASSERT_EQ(in.Read(kSpan, kSpan, at), ND_SUCCESS);
    EXPECT_EQ(std::memcmp(in.data.bytes.data() + kSpan, in.data.bytes.data(), kSpan), 0);
    EXPECT_EQ(in.Ask('d'), 'y') << "the target's huge pages do not hold exactly the Write";
    in.Disconnect();
    EXPECT_EQ(Reap(child), 0);
}

INSTANTIATE_TEST_SUITE_P(Paths, OneSidedMemory,
                         ::testing::Values(Path::CrossMemoryAttach, Path::CopyThroughRing, Path::Tcp),
                         [](const ::testing::TestParamInfo<Path> &info) {
                             switch (info.param) {
                             case Path::CrossMemoryAttach: return std::string("CrossMemoryAttach");
                             case Path::CopyThroughRing: return std::string("CopyThroughRing");
                             default: return std::string("Tcp");
                             }
                         });

}  // namespace
