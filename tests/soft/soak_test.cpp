// Soak: 8 connections x 64 outstanding mixed Sends, Writes and Reads for a
// bounded time (OPENND_SOAK_SECONDS, default 4), over each data path.
// Every request completes exactly once with ND_SUCCESS, every Read returns
// what the Write before it put there, and the peer process verifies the
// checksum of every Send it receives and counts them: nothing is lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "support/nd_session.h"

namespace {
using namespace nd_session;

constexpr int kConnections = 8;
constexpr int kWindow = 64;
constexpr size_t kSlot = 16384;  // each outstanding request owns one slot of the peer's region
constexpr size_t kRegion = kWindow * kSlot;
constexpr int kServerReceives = 128;

struct Wire {  // the first bytes of every Send
    uint32_t length;
    uint32_t seed;
    uint64_t checksum;
};

uint64_t Checksum(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 1099511628211ull;
    return h;
}

void Fill(char *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>((seed * 131 + i * 7) >> 3);
}

opennd::net::IpAddress Addr(const char *text, uint16_t port = 0) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

// The peer: accepts the connections, advertises a region on each, keeps
// receives posted and checks every message. Writes its count to `out`.
int Server(const char *address, int out) {
    if (NdStartup() != S_OK) return 2;
    Endpoint l;
    uint16_t port = 0;
    if (!l.Open(Addr(address)) || !l.Listen(Addr(address), &port)) return 3;
    if (write(out, &port, sizeof port) != sizeof port) return 4;
    std::vector<std::unique_ptr<Endpoint>> eps;
    std::vector<std::unique_ptr<Buffer>> regions, recvs;
    for (int c = 0; c < kConnections; ++c) {
        auto ep = std::make_unique<Endpoint>();
        if (!ep->OpenOn(l, kServerReceives, 1)) return 5;
        auto region = std::make_unique<Buffer>(kRegion), rb = std::make_unique<Buffer>(kServerReceives * kSlot);
        if (!region->Register(*ep) || !rb->Register(*ep)) return 6;
        for (int i = 0; i < kServerReceives; ++i) {
            ND2_SGE s = rb->Sge(i * kSlot, kSlot);
            if (FAILED(ep->qp->Receive(reinterpret_cast<void *>(uintptr_t(i)), &s, 1))) return 7;
        }
        if (!ep->Accept()) return 8;
        eps.push_back(std::move(ep));
        regions.push_back(std::move(region));
        recvs.push_back(std::move(rb));
    }
    uint64_t good = 0, bad = 0;
    int open = kConnections;
    while (open > 0) {
        for (int c = 0; c < kConnections; ++c) {
            ND2_RESULT r;
            if (!eps[c] || eps[c]->cq->GetResults(&r, 1) == 0) continue;
            if (r.Status != ND_SUCCESS) {  // the client disconnected: receives flush
                eps[c].reset();
                --open;
                continue;
            }
            if (r.RequestType != Nd2RequestTypeReceive) continue;  // our answer to the region request
            auto i = static_cast<size_t>(reinterpret_cast<uintptr_t>(r.RequestContext));
            const char *m = recvs[c]->bytes.data() + i * kSlot;
            Wire w;
            std::memcpy(&w, m, sizeof w);
            bool ask = r.BytesTransferred == sizeof w && w.length == 0 && w.seed == 0;
            if (ask || (r.BytesTransferred == sizeof w + w.length && Checksum(m + sizeof w, w.length) == w.checksum))
                ++good;
            else
                ++bad;
            if (ask) {  // the first message asks for our region
                Wire info{static_cast<uint32_t>(regions[c]->mr->GetRemoteToken()), 0,
                          reinterpret_cast<uint64_t>(regions[c]->bytes.data())};
                std::memcpy(regions[c]->bytes.data(), &info, sizeof info);
                ND2_SGE s = regions[c]->Sge(0, sizeof info);
                eps[c]->qp->Send(nullptr, &s, 1, 0);
            }
            ND2_SGE s = recvs[c]->Sge(i * kSlot, kSlot);
            eps[c]->qp->Receive(r.RequestContext, &s, 1);
        }
    }
    uint64_t counts[2] = {good, bad};
    return write(out, counts, sizeof counts) == sizeof counts ? 0 : 9;
}

enum class Path { CrossMemoryAttach, CopyThroughRing, Tcp };

class Soak : public ::testing::TestWithParam<std::tuple<const char *, Path>> {};

TEST_P(Soak, MixedTrafficOnEightConnectionsLosesNothing) {
    const char *address = std::get<0>(GetParam());
    Path path = std::get<1>(GetParam());
    if (path == Path::CopyThroughRing) setenv("OPENND_SOFT_CMA", "0", 1);
    if (path == Path::Tcp) setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);
    const char *env = getenv("OPENND_SOAK_SECONDS");
    const uint64_t run_ms = (env && *env ? std::strtoull(env, nullptr, 10) : 4) * 1000;
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    pid_t child = fork();
    if (child == 0) {
        close(pipefd[0]);
        _exit(Server(address, pipefd[1]));
    }
    close(pipefd[1]);
    uint16_t port = 0;
    ASSERT_EQ(read(pipefd[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    ASSERT_EQ(NdStartup(), S_OK);

    struct Conn {
        Endpoint ep;
        std::unique_ptr<Buffer> local;  // kWindow slots, one per outstanding request
        uint64_t raddr = 0;
        UINT32 rtoken = 0;
        uint32_t step[kWindow] = {};    // per slot: 0 Write, 1 Read (verify), 2 Send
        uint32_t seed[kWindow] = {};
        int outstanding = 0;
    };
    std::vector<std::unique_ptr<Conn>> conns;
    for (int c = 0; c < kConnections; ++c) {
        auto k = std::make_unique<Conn>();
        ASSERT_TRUE(k->ep.Open(Addr(address), kWindow + 2, 1)) << k->ep.error;
        k->local = std::make_unique<Buffer>(kRegion + kSlot);
        ASSERT_TRUE(k->local->Register(k->ep)) << k->ep.error;
        if (!k->ep.Connect(Addr(address, port))) {
            int status = 0;
            pid_t gone = waitpid(child, &status, WNOHANG);
            FAIL() << k->ep.error << " (connection " << c << "; the peer "
                   << (gone == child ? "exited with " + std::to_string(WEXITSTATUS(status)) : "is running") << ")";
        }
        conns.push_back(std::move(k));
    }
    for (auto &k : conns) {  // the peer answers once all are connected
        // Ask for the peer's region: an empty message (from slot 0), answered
        // with its token and address (into the spare slot: a buffer being
        // sent is not also a receive buffer; TSan cannot see the order
        // through the peer process).
        char *ask = k->local->bytes.data() + kRegion;
        std::memset(k->local->bytes.data(), 0, sizeof(Wire));
        ND2_SGE r = k->local->Sge(kRegion, kSlot), s = k->local->Sge(0, sizeof(Wire));
        ASSERT_EQ(k->ep.qp->Receive(nullptr, &r, 1), ND_SUCCESS);
        ASSERT_EQ(k->ep.qp->Send(nullptr, &s, 1, 0), ND_SUCCESS);
        for (int got = 0; got < 2;) {
            ND2_RESULT res = k->ep.Next();
            ASSERT_EQ(res.Status, ND_SUCCESS) << Status(res.Status);
            if (res.RequestType == Nd2RequestTypeReceive) {
                Wire info;
                std::memcpy(&info, ask, sizeof info);
                k->rtoken = info.length;
                k->raddr = info.checksum;
            }
            ++got;
        }
    }
    auto post = [&](Conn &k, int w, uint32_t n) -> HRESULT {
        char *slot = k.local->bytes.data() + w * kSlot;
        size_t len = 1 + (n * 2654435761u) % (kSlot - sizeof(Wire) - 1);
        ND2_SGE sge = k.local->Sge(w * kSlot, len);
        void *ctx = reinterpret_cast<void *>(uintptr_t(w));
        switch (k.step[w] % 3) {
        case 0:
            k.seed[w] = n;
            Fill(slot, kSlot, n);
            sge.BufferLength = kSlot;
            return k.ep.qp->Write(ctx, &sge, 1, k.raddr + w * kSlot, k.rtoken, 0);
        case 1:
            std::memset(slot, 0, kSlot);
            sge.BufferLength = kSlot;
            return k.ep.qp->Read(ctx, &sge, 1, k.raddr + w * kSlot, k.rtoken, 0);
        default: {
            Wire h{static_cast<uint32_t>(len), n | 1, 0};
            Fill(slot + sizeof h, len, n);
            h.checksum = Checksum(slot + sizeof h, len);
            std::memcpy(slot, &h, sizeof h);
            sge.BufferLength = static_cast<ULONG>(sizeof h + len);
            return k.ep.qp->Send(ctx, &sge, 1, 0);
        }
        }
    };
    uint64_t posted = 0, completed = 0, sends = 0, reads_checked = 0;
    uint32_t n = 1;
    for (auto &k : conns)
        for (int w = 0; w < kWindow; ++w, ++posted, ++k->outstanding) ASSERT_EQ(post(*k, w, n++), ND_SUCCESS);
    const uint64_t stop_at = NowMs() + run_ms, give_up = stop_at + 30000;
    bool stopping = false;
    while (posted != completed && NowMs() < give_up) {
        stopping = stopping || NowMs() >= stop_at;
        for (auto &k : conns) {
            ND2_RESULT r;
            if (k->ep.cq->GetResults(&r, 1) == 0) continue;
            ++completed;
            --k->outstanding;
            ASSERT_EQ(r.Status, ND_SUCCESS) << Status(r.Status) << " request type " << r.RequestType;
            auto w = static_cast<int>(reinterpret_cast<uintptr_t>(r.RequestContext));
            if (k->step[w] % 3 == 1) {  // a Read: what the Write before it put there
                std::vector<char> want(kSlot);
                Fill(want.data(), kSlot, k->seed[w]);
                ASSERT_EQ(std::memcmp(want.data(), k->local->bytes.data() + w * kSlot, kSlot), 0)
                    << "Read returned other bytes than the Write placed";
                ++reads_checked;
            }
            if (k->step[w] % 3 == 2) ++sends;
            ++k->step[w];
            if (!stopping) {
                ASSERT_EQ(post(*k, w, n++), ND_SUCCESS);
                ++posted;
                ++k->outstanding;
            }
        }
    }
    EXPECT_EQ(completed, posted) << "requests that never completed";
    for (auto &k : conns) {
        OVERLAPPED ov{};
        EXPECT_EQ(k->ep.Wait(k->ep.connector, &ov, k->ep.connector->Disconnect(&ov)), ND_SUCCESS);
    }
    conns.clear();
    uint64_t counts[2] = {0, 0};
    EXPECT_EQ(read(pipefd[0], counts, sizeof counts), static_cast<ssize_t>(sizeof counts));
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "peer exit status " << status;
    EXPECT_EQ(counts[1], 0u) << "messages with a bad checksum";
    EXPECT_EQ(counts[0], sends + kConnections) << "messages received = Sends completed (+ the region requests)";
    EXPECT_GT(reads_checked, 0u);
    RecordProperty("requests", std::to_string(completed));
    std::printf("soak: %llu requests (%llu Sends, %llu Reads checked) in %llu ms\n",
                static_cast<unsigned long long>(completed), static_cast<unsigned long long>(sends),
                static_cast<unsigned long long>(reads_checked), static_cast<unsigned long long>(run_ms));
    NdCleanup();
    unsetenv("OPENND_SOFT_CMA");
    unsetenv("OPENND_SOFT_TRANSPORT");
    close(pipefd[0]);
}

std::string PathName(const ::testing::TestParamInfo<Soak::ParamType> &info) {
    static const char *const kPaths[] = {"_CrossMemoryAttach", "_CopyThroughRing", "_Tcp"};
    return std::string(std::get<0>(info.param)[0] == ':' ? "IPv6" : "IPv4") +
           kPaths[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(Paths, Soak,
                         ::testing::Combine(::testing::Values("127.0.0.1", "::1"),
                                            ::testing::Values(Path::CrossMemoryAttach, Path::CopyThroughRing,
                                                              Path::Tcp)),
                         PathName);

}  // namespace
