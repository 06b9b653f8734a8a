// The software provider between two processes on this host: connection
// setup, Send/Receive, RDMA Write and Read, disconnect, peer death.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <tuple>

#include "support/nd_session.h"
#include "two_process.h"

using namespace nd_session;
using namespace two_process;

namespace {

struct Advert {  // what the server tells the client about its buffer
    uint64_t address;
    uint32_t token;
    uint32_t length;
};

// (address, data path): shared memory with cross-memory attach, copying
// through the rings as when it is not permitted (OPENND_SOFT_CMA=0), or
// iWARP over TCP (OPENND_SOFT_TRANSPORT=tcp). The child inherits the choice.
enum class Path { CrossMemoryAttach, CopyThroughRing, Tcp };

class TwoProcess : public ::testing::TestWithParam<std::tuple<const char *, Path>> {
protected:
    void SetUp() override {
        Path p = std::get<1>(GetParam());
        if (p == Path::CopyThroughRing) setenv("OPENND_SOFT_CMA", "0", 1);
        if (p == Path::Tcp) setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);
        ASSERT_EQ(NdStartup(), S_OK);
    }
    void TearDown() override {
        NdCleanup();
        unsetenv("OPENND_SOFT_CMA");
        unsetenv("OPENND_SOFT_TRANSPORT");
    }
};

// Echo server: returns every message it receives, then serves RDMA on a
// 64 KiB buffer it advertises in its first message, until the client
// disconnects.
bool EchoServer(const char *address, int port_fd) {
    Endpoint ep;
    if (!ep.Open(Addr(address))) return false;
    Buffer msg(65536), rdma(65536);
    if (!msg.Register(ep) || !rdma.Register(ep)) return false;
    for (size_t i = 0; i < rdma.bytes.size(); ++i) rdma.bytes[i] = static_cast<char>(i * 7);
    uint16_t port = 0;
    if (!ep.Listen(Addr(address), &port)) return false;
    ND2_SGE rs = msg.Sge();
    if (FAILED(ep.qp->Receive(nullptr, &rs, 1))) return false;
    if (!TellPort(port_fd, port)) return false;
    if (!ep.Accept("hello", 5)) {
        std::fprintf(stderr, "server: %s\n", ep.error.c_str());
        return false;
    }
    for (;;) {
        ND2_RESULT r = ep.Next(20000);
        if (r.Status == ND_CANCELED) return true;  // the client disconnected
        if (FAILED(r.Status)) {
            std::fprintf(stderr, "server: completion %s\n", Status(r.Status).c_str());
            return false;
        }
        if (r.RequestType != Nd2RequestTypeReceive) continue;
        ULONG n = r.BytesTransferred;
        if (n == 4 && std::memcmp(msg.bytes.data(), "RDMA", 4) == 0) {
            Advert a{reinterpret_cast<uint64_t>(rdma.bytes.data()), rdma.mr->GetRemoteToken(), 65536};
            std::memcpy(msg.bytes.data(), &a, sizeof a);
            n = sizeof a;
        }
        ND2_SGE ss = msg.Sge(0, n);
        HRESULT hr = ep.qp->Send(nullptr, &ss, 1, 0);
        ND2_RESULT s = SUCCEEDED(hr) ? ep.Next() : ND2_RESULT{hr, 0, nullptr, nullptr, Nd2RequestTypeSend};
        if (SUCCEEDED(s.Status) && s.RequestType == Nd2RequestTypeSend) hr = ep.qp->Receive(nullptr, &rs, 1);
        if (FAILED(hr) || FAILED(s.Status) || s.RequestType != Nd2RequestTypeSend) {
            std::fprintf(stderr, "server: echo failed: %s / %s (type %d)\n", Status(hr).c_str(),
                         Status(s.Status).c_str(), s.RequestType);
            return false;
        }
    }
}

TEST_P(TwoProcess, ConnectSendReceiveWriteReadDisconnect) {
    const char *address = std::get<0>(GetParam());
    uint16_t port = 0;
    pid_t child = Spawn(&port, [&](int fd) { return EchoServer(address, fd); });
    ASSERT_GT(child, 0);
    ASSERT_NE(port, 0);

    Endpoint ep;
    ASSERT_TRUE(ep.Open(Addr(address))) << ep.error;
    Buffer out(65536), in(65536);
    ASSERT_TRUE(out.Register(ep) && in.Register(ep)) << ep.error;
    ND2_SGE rs = in.Sge();
    ASSERT_EQ(ep.qp->Receive(nullptr, &rs, 1), ND_SUCCESS);
    ASSERT_TRUE(ep.Connect(Addr(address, port), "hi", 2)) << ep.error;
    char pd[16] = {};
    ULONG pdlen = sizeof pd;
    EXPECT_EQ(ep.connector->GetPrivateData(pd, &pdlen), ND_SUCCESS);
    EXPECT_GE(pdlen, 5u);
    EXPECT_EQ(std::string(pd, 5), "hello");

    // Echo of sizes from 0 B through the large-message path (CMA or fragments).
    for (size_t size : {size_t(0), size_t(1), size_t(8), size_t(4096), size_t(4097), size_t(12345), size_t(65536)}) {
        for (size_t i = 0; i < size; ++i) out.bytes[i] = static_cast<char>(size + i * 13);
        ND2_SGE ss = out.Sge(0, size);
        ASSERT_EQ(ep.qp->Send(&out, &ss, size ? 1 : 0, 0), ND_SUCCESS);
        bool sent = false, received = false;
        while (!sent || !received) {
            ND2_RESULT r = ep.Next();
            ASSERT_EQ(r.Status, ND_SUCCESS) << "size " << size << ": " << Status(r.Status);
            if (r.RequestType == Nd2RequestTypeSend) sent = true;
            if (r.RequestType == Nd2RequestTypeReceive) {
                received = true;
                EXPECT_EQ(r.BytesTransferred, size);
            }
        }
        EXPECT_EQ(std::memcmp(in.bytes.data(), out.bytes.data(), size), 0) << "size " << size;
        ASSERT_EQ(ep.qp->Receive(nullptr, &rs, 1), ND_SUCCESS);
    }

    // Ask for the server's RDMA buffer, then Read it and Write it.
    std::memcpy(out.bytes.data(), "RDMA", 4);
    ND2_SGE ss = out.Sge(0, 4);
    ASSERT_EQ(ep.qp->Send(nullptr, &ss, 1, ND_OP_FLAG_SILENT_SUCCESS), ND_SUCCESS);
    ND2_RESULT r = ep.Next();
    ASSERT_EQ(r.Status, ND_SUCCESS);
    ASSERT_EQ(r.RequestType, Nd2RequestTypeReceive);
    Advert a;
    std::memcpy(&a, in.bytes.data(), sizeof a);
    ND2_SGE spare = out.Sge(0, 64);
    ASSERT_EQ(ep.qp->Receive(&spare, &spare, 1), ND_SUCCESS);
    ND2_SGE rd = in.Sge(0, 65536);
    ASSERT_EQ(ep.qp->Read(nullptr, &rd, 1, a.address, a.token, 0), ND_SUCCESS);
    r = ep.Next();
    ASSERT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(r.RequestType, Nd2RequestTypeRead);
    for (size_t i = 0; i < 65536; ++i) ASSERT_EQ(in.bytes[i], static_cast<char>(i * 7)) << i;
    for (size_t i = 0; i < 65536; ++i) out.bytes[i] = static_cast<char>(i * 3 + 1);
    ND2_SGE wr = out.Sge(0, 65536);
    ASSERT_EQ(ep.qp->Write(nullptr, &wr, 1, a.address, a.token, 0), ND_SUCCESS);
    r = ep.Next();
    ASSERT_EQ(r.Status, ND_SUCCESS);
    ASSERT_EQ(ep.qp->Read(nullptr, &rd, 1, a.address, a.token, 0), ND_SUCCESS);
    r = ep.Next();
    ASSERT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(std::memcmp(in.bytes.data(), out.bytes.data(), 65536), 0);
    // Out of range: an access violation completion, and the connection ends.
    ND2_SGE past = in.Sge(0, 16);
    ASSERT_EQ(ep.qp->Read(nullptr, &past, 1, a.address + 65536 - 8, a.token, 0), ND_SUCCESS);
    r = ep.Next();
    EXPECT_EQ(r.Status, ND_ACCESS_VIOLATION);
    // The receive still posted completes ND_CANCELED.
    r = ep.Next();
    EXPECT_EQ(r.Status, ND_CANCELED);
    EXPECT_EQ(r.RequestType, Nd2RequestTypeReceive);
    EXPECT_EQ(r.RequestContext, &spare);

    OVERLAPPED ov{};
    EXPECT_EQ(ep.Wait(ep.connector, &ov, ep.connector->Disconnect(&ov)), ND_SUCCESS);
    EXPECT_EQ(Reap(child), 0);
}

// Spins on the last byte of `b` until it holds `mark`; false after `ms`.
bool SpinFor(const Buffer &b, size_t at, char mark, uint64_t ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    std::atomic_ref<char> byte(const_cast<char &>(b.bytes[at]));  // the provider stores it atomically
    for (uint32_t spins = 0; byte.load(std::memory_order_acquire) != mark; ++spins)
        if ((spins & 1023) == 0 && std::chrono::steady_clock::now() > until) return false;
    return true;
}

constexpr int kWritePongs = 300, kBigPongs = 20;
constexpr size_t kBigPong = 1 << 20;  // four times a shared-memory ring: it goes out as room is made
// Pong i's size: 64 bytes, then a few of 1 MiB.
size_t PongBytes(int i) { return i <= kWritePongs ? 64 : kBigPong; }
// A lost wake-up leaves a Write unplaced until the progress thread's next
// timeout (1 s); placing one takes microseconds, a parked stream (the
// application polled it a moment ago) up to a millisecond, 1 MiB through
// the rings a few.
constexpr uint64_t kWriteLandsMs = 500;

// Write i brings bytes of its own ahead of its mark, so a mark that lands
// before them is caught.
char RoundByte(int i) { return static_cast<char>(i * 37 + 11); }
void FillRound(Buffer &out, size_t n, int i) { std::memset(out.bytes.data(), RoundByte(i), n - 1); }
// Once the mark is seen: the first byte of `in` that Write i has not yet
// brought, or n - 1 if all have landed.
size_t FirstNotLanded(const Buffer &in, size_t n, int i) {
    for (size_t k = 0; k < n - 1; ++k)
        if (in.bytes[k] != RoundByte(i)) return k;
    return n - 1;
}

// Write ping-pong server: Writes `i` into the client's buffer once the
// client's Write of `i` has landed in its own; never calls the provider
// while it waits. Each side Writes from `out` into the other's `in`, the
// mark in the last byte (it lands last).
bool WritePongServer(const char *address, int port_fd) {
    Endpoint ep;
    if (!ep.Open(Addr(address))) return false;
    Buffer msg(64), in(kBigPong), out(kBigPong);
    if (!msg.Register(ep) || !in.Register(ep) || !out.Register(ep)) return false;
    uint16_t port = 0;
    if (!ep.Listen(Addr(address), &port)) return false;
    ND2_SGE rs = msg.Sge();
    if (FAILED(ep.qp->Receive(nullptr, &rs, 1))) return false;
    if (!TellPort(port_fd, port)) return false;
    Advert me{reinterpret_cast<uint64_t>(in.bytes.data()), in.mr->GetRemoteToken(), kBigPong};
    if (!ep.Accept(&me, sizeof me)) return false;
    ND2_RESULT r = ep.Next();
    if (r.Status != ND_SUCCESS || r.RequestType != Nd2RequestTypeReceive) return false;
    Advert peer;
    std::memcpy(&peer, msg.bytes.data(), sizeof peer);
    if (FAILED(ep.qp->Receive(nullptr, &rs, 1))) return false;  // flushed when the client disconnects
    for (int i = 1; i <= kWritePongs + kBigPongs; ++i) {
        const size_t n = PongBytes(i);
        char mark = static_cast<char>(i % 127 + 1);
        if (!SpinFor(in, n - 1, mark, kWriteLandsMs)) {
            std::fprintf(stderr, "server: Write %d did not land within %llu ms\n", i,
                         static_cast<unsigned long long>(kWriteLandsMs));
            return false;
        }
        if (size_t at = FirstNotLanded(in, n, i); at != n - 1) {
            std::fprintf(stderr, "server: Write %d's last byte landed before its byte %zu\n", i, at);
            return false;
        }
        FillRound(out, n, i);
        out.bytes[n - 1] = mark;
        ND2_SGE ws = out.Sge(0, n);
        if (FAILED(ep.qp->Write(nullptr, &ws, 1, peer.address, peer.token, ND_OP_FLAG_SILENT_SUCCESS))) return false;
    }
    return ep.Next(20000).Status == ND_CANCELED;  // the client disconnects
}

// RDMA Write lands with no call from either side: neither calls the
// provider while it spins on its memory, hundreds of times in a row, each
// promptly; then Writes of 1 MiB. On the copy path the target's progress
// thread places the fragments, and the initiator's sends the rest of a
// Write as the target makes room in the ring (it went out a ring's worth
// per second, on its fallback timeout, before it was woken for that).
class TwoProcessOneSided : public TwoProcess {};

TEST_P(TwoProcessOneSided, WritePingPongLandsWithoutTheTargetCallingTheProvider) {
    const char *address = std::get<0>(GetParam());
    uint16_t port = 0;
    pid_t child = Spawn(&port, [&](int fd) { return WritePongServer(address, fd); });
    ASSERT_GT(child, 0);
    ASSERT_NE(port, 0);
    Endpoint ep;
    ASSERT_TRUE(ep.Open(Addr(address))) << ep.error;
    Buffer msg(64), in(kBigPong), out(kBigPong);
    ASSERT_TRUE(msg.Register(ep) && in.Register(ep) && out.Register(ep)) << ep.error;
    ASSERT_TRUE(ep.Connect(Addr(address, port))) << ep.error;
    Advert peer;
    ULONG len = sizeof peer;
    ASSERT_EQ(ep.connector->GetPrivateData(&peer, &len), ND_SUCCESS);
    Advert me{reinterpret_cast<uint64_t>(in.bytes.data()), in.mr->GetRemoteToken(), kBigPong};
    std::memcpy(msg.bytes.data(), &me, sizeof me);
    ND2_SGE ss = msg.Sge(0, sizeof me);
    ASSERT_EQ(ep.qp->Send(nullptr, &ss, 1, 0), ND_SUCCESS);
    ASSERT_EQ(ep.Next().Status, ND_SUCCESS);
    for (int i = 1; i <= kWritePongs + kBigPongs; ++i) {
        const size_t n = PongBytes(i);
        char mark = static_cast<char>(i % 127 + 1);
        FillRound(out, n, i);
        out.bytes[n - 1] = mark;
        ND2_SGE ws = out.Sge(0, n);
        ASSERT_EQ(ep.qp->Write(nullptr, &ws, 1, peer.address, peer.token, ND_OP_FLAG_SILENT_SUCCESS), ND_SUCCESS);
        ASSERT_TRUE(SpinFor(in, n - 1, mark, kWriteLandsMs)) << "the server's Write " << i << " (" << n
                                                              << " bytes) did not land";
        ASSERT_EQ(FirstNotLanded(in, n, i), n - 1) << "the server's Write " << i << ": its last byte landed first";
    }
    OVERLAPPED ov{};
    EXPECT_EQ(ep.Wait(ep.connector, &ov, ep.connector->Disconnect(&ov)), ND_SUCCESS);
    ND2_RESULT r;
    while (ep.cq->GetResults(&r, 1) == 1) EXPECT_EQ(r.Status, ND_SUCCESS) << "silent Writes report only failures";
    EXPECT_EQ(Reap(child), 0);
}

// A CQ armed before its QP connects must still be woken by the peer's first
// Send (the "wake me" flag is set in the new channel too). The progress
// thread's fallback poll is stretched to 20 s, so a lost wake-up cannot hide
// behind it: the notification must come within the 10 s wait.
TEST(TwoProcessNotify, ArmedBeforeConnectIsWokenByTheFirstSend) {
    setenv("OPENND_SOFT_ARMED_POLL_MS", "20000", 1);
    ASSERT_EQ(NdStartup(), S_OK);
    uint16_t port = 0;
    pid_t child = Spawn(&port, [](int fd) {
        Endpoint ep;
        if (!ep.Open(Addr("127.0.0.1"))) return false;
        Buffer msg(64);
        if (!msg.Register(ep)) return false;
        uint16_t port = 0;
        if (!ep.Listen(Addr("127.0.0.1"), &port)) return false;
        if (!TellPort(fd, port)) return false;
        if (!ep.Accept()) return false;
        ND2_SGE s = msg.Sge(0, 8);
        if (FAILED(ep.qp->Send(nullptr, &s, 1, 0))) return false;
        if (FAILED(ep.Next().Status)) return false;  // consumed by the client
        ND2_SGE r = msg.Sge(8, 8);
        if (FAILED(ep.qp->Receive(nullptr, &r, 1))) return false;
        return ep.Next(20000).Status == ND_CANCELED;  // flushed when the client disconnects
    });
    ASSERT_GT(child, 0);
    ASSERT_NE(port, 0);
    Endpoint ep;
    ASSERT_TRUE(ep.Open(Addr("127.0.0.1"))) << ep.error;
    Buffer in(64);
    ASSERT_TRUE(in.Register(ep)) << ep.error;
    OVERLAPPED ov{};
    ov.hEvent = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    ASSERT_EQ(ep.cq->Notify(ND_CQ_NOTIFY_ANY, &ov), ND_PENDING);  // armed before the connection exists
    // ... and before the queue pair exists: the progress thread is already
    // armed when the QP appears, so nothing "changes" for it to notice.
    ep.qp.reset();
    ASSERT_EQ(ep.adapter->CreateQueuePair(IID_IND2QueuePair, ep.cq, ep.cq, nullptr, 8, 8, 1, 1, 0, ep.qp.put_void()),
              ND_SUCCESS);
    ND2_SGE rs = in.Sge();
    ASSERT_EQ(ep.qp->Receive(nullptr, &rs, 1), ND_SUCCESS);
    ASSERT_TRUE(ep.Connect(Addr("127.0.0.1", port))) << ep.error;
    // No polling here: only the provider's progress can deliver it.
    EXPECT_EQ(WaitForSingleObject(ov.hEvent, 10000), WAIT_OBJECT_0) << "the peer's Send did not wake the armed CQ";
    EXPECT_EQ(ep.cq->GetOverlappedResult(&ov, FALSE), ND_SUCCESS);
    ND2_RESULT r = ep.Next(1000);
    EXPECT_EQ(r.Status, ND_SUCCESS);
    EXPECT_EQ(r.RequestType, Nd2RequestTypeReceive);
    CloseHandle(ov.hEvent);
    OVERLAPPED dv{};
    ep.Wait(ep.connector, &dv, ep.connector->Disconnect(&dv));
    EXPECT_EQ(Reap(child), 0);
    NdCleanup();
    unsetenv("OPENND_SOFT_ARMED_POLL_MS");
}

std::string ParamName(const ::testing::TestParamInfo<TwoProcess::ParamType> &info) {
    static const char *const kPaths[] = {"_CrossMemoryAttach", "_CopyThroughRing", "_Tcp"};
    return std::string(std::get<0>(info.param)[0] == ':' ? "IPv6" : "IPv4") +
           kPaths[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(AddressesAndPaths, TwoProcess,
                         ::testing::Combine(::testing::Values("127.0.0.1", "::1"),
                                            ::testing::Values(Path::CrossMemoryAttach, Path::CopyThroughRing,
                                                              Path::Tcp)),
                         ParamName);

INSTANTIATE_TEST_SUITE_P(AddressesAndPaths, TwoProcessOneSided,
                         ::testing::Combine(::testing::Values("127.0.0.1", "::1"),
                                            ::testing::Values(Path::CrossMemoryAttach, Path::CopyThroughRing,
                                                              Path::Tcp)),
                         ParamName);

}  // namespace
