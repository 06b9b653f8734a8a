// What a remote host controls on the TCP path: every byte of the stream.
// A client in this process dials the listener's real TCP port and speaks
// MPA by hand (iwarp::Initiator), then sends what no iWARP peer would: that
// one connection ends, the process lives on, and the same listener still
// serves a real client. Also the CRC negotiation with the real provider,
// from both ends: a peer that asks for CRC gets it, and the provider asks
// for it when told to (OPENND_SOFT_MPA_CRC=1).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <future>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "iwarp/fpdu.h"
#include "iwarp/handshake.h"
#include "support/nd_session.h"

namespace {
using nd_session::Buffer;
using nd_session::Endpoint;
using nd_session::NowMs;

opennd::net::IpAddress Loopback(uint16_t port = 0) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress("127.0.0.1", &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

// A plain TCP socket, closed on scope exit.
struct Socket {
    int fd = -1;
    ~Socket() {
        if (fd >= 0) close(fd);
    }
    bool Dial(uint16_t port) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        opennd::net::IpAddress to = Loopback(port);
        return fd >= 0 && connect(fd, to.sa(), to.length()) == 0;
    }
    bool SendAll(const std::vector<uint8_t> &bytes) {
        return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    }
    // Some bytes, waiting up to `ms`; empty on timeout; *eof at the end.
    std::vector<uint8_t> Read(uint64_t ms, bool *eof) {
        *eof = false;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(ms)) <= 0) return {};
        uint8_t buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            *eof = true;
            return {};
        }
        return std::vector<uint8_t>(buf, buf + n);
    }
    // True if the other end closes (or resets) within `ms`; what it sends
    // before (a Terminate) is read and dropped.
    bool ClosedWithin(uint64_t ms) {
        const uint64_t until = NowMs() + ms;
        for (bool eof = false; NowMs() < until;) {
            Read(100, &eof);
            if (eof) return true;
        }
        return false;
    }
};

std::vector<uint8_t> Junk(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> out(n);
    for (auto &b : out) b = static_cast<uint8_t>(rng());
    return out;
}

class HostileTcpClient : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(NdStartup(), S_OK);
        ASSERT_TRUE(server_->Open(Loopback()) && server_->Listen(Loopback(), &port_)) << server_->error;
    }
    void TearDown() override {
        unsetenv("OPENND_SOFT_TRANSPORT");
        unsetenv("OPENND_SOFT_MPA_CRC");
        unsetenv("OPENND_SOFT_TCP_TIMEOUT_MS");
        unsetenv("OPENND_SOFT_ACCEPT_TIMEOUT_MS");
        unsetenv("OPENND_SOFT_MAX_QUEUED");
        server_.reset();  // before NdCleanup
        NdCleanup();
    }
    // MPA by hand up to Connected (the provider's reply read); false if not.
    bool Handshake(Socket &s, const iwarp::MpaConfig &config, iwarp::Negotiated *out = nullptr) {
        iwarp::Initiator init(config, {});
        if (!s.Dial(port_) || !s.SendAll(init.request())) return false;
        const uint64_t until = NowMs() + 10000;
        while (init.status() == iwarp::HandshakeStatus::NeedMore && NowMs() < until) {
            bool eof = false;
            std::vector<uint8_t> in = s.Read(100, &eof);
            if (eof) return false;
            size_t used = 0;
            if (!in.empty()) init.Feed(in, &used);
        }
        if (out) *out = init.negotiated();
        return init.status() == iwarp::HandshakeStatus::Connected;
    }
    // `accepted` on the listener with one 64-byte Receive posted in `b`,
    // ready for its Accept; the TCP timeout shortened to 1 s first.
    bool ReadyToAccept(Endpoint &accepted, Buffer &b) {
        setenv("OPENND_SOFT_TCP_TIMEOUT_MS", "1000", 1);
        if (!accepted.OpenOn(*server_) || !b.Register(accepted)) return false;
        ND2_SGE r = b.Sge(0, 64);
        return accepted.qp->Receive(nullptr, &r, 1) == ND_SUCCESS;
    }
    // A real client over TCP: connects to the same listener and exchanges a
    // Send each way, data checked.
    void RealClientStillServed() {
        setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);
        Endpoint accepted, client;
        ASSERT_TRUE(accepted.OpenOn(*server_)) << accepted.error;
        ASSERT_TRUE(client.Open(Loopback())) << client.error;
        Buffer sb(4096), cb(4096);
        ASSERT_TRUE(sb.Register(accepted) && cb.Register(client));
        ND2_SGE r = sb.Sge(0, 64);
        ASSERT_EQ(accepted.qp->Receive(nullptr, &r, 1), ND_SUCCESS);
        auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
        ASSERT_TRUE(client.Connect(Loopback(port_))) << client.error;
        ASSERT_TRUE(accepting.get()) << accepted.error;
        std::memcpy(cb.bytes.data(), "still here", 11);
        ND2_SGE s = cb.Sge(0, 11);
        ASSERT_EQ(client.qp->Send(nullptr, &s, 1, 0), ND_SUCCESS);
        EXPECT_EQ(client.Next().Status, ND_SUCCESS);
        ND2_RESULT got = accepted.Next();
        EXPECT_EQ(got.Status, ND_SUCCESS);
        EXPECT_EQ(got.BytesTransferred, 11u);
        EXPECT_STREQ(sb.bytes.data(), "still here");
    }

    std::unique_ptr<Endpoint> server_ = std::make_unique<Endpoint>();
    uint16_t port_ = 0;
};

TEST_F(HostileTcpClient, GarbageInsteadOfAnMpaRequestEndsOnlyThatConnection) {
    Socket s;
    ASSERT_TRUE(s.Dial(port_));
    std::string http = "GET / HTTP/1.1\r\nHost: opennd\r\n\r\n";
    std::vector<uint8_t> bytes(http.begin(), http.end());
    std::vector<uint8_t> junk = Junk(3000, 1);
    bytes.insert(bytes.end(), junk.begin(), junk.end());
    ASSERT_TRUE(s.SendAll(bytes));
    EXPECT_TRUE(s.ClosedWithin(5000)) << "the listener kept a connection that sent no MPA request";
    RealClientStillServed();
}

// #25: bytes sent right behind the MPA request, before the provider's
// reply (RFC 5044: the initiator waits for it), fail that handshake: the
// connection is closed and no request reaches the application; the
// listener then still serves a real client.
TEST_F(HostileTcpClient, BytesBehindTheMpaRequestFailTheHandshake) {
    iwarp::Initiator init(iwarp::MpaConfig{}, {});
    std::vector<uint8_t> bytes = init.request();
    std::vector<uint8_t> junk = Junk(100, 7);
    bytes.insert(bytes.end(), junk.begin(), junk.end());
    Socket s;
    ASSERT_TRUE(s.Dial(port_) && s.SendAll(bytes));
    EXPECT_TRUE(s.ClosedWithin(5000)) << "the listener kept a handshake with bytes behind its request";
    Endpoint accepted;
    ASSERT_TRUE(accepted.OpenOn(*server_)) << accepted.error;
    OVERLAPPED ov{};
    HRESULT hr = accepted.listener->GetConnectionRequest(accepted.connector, &ov);
    EXPECT_EQ(accepted.Wait(accepted.listener, &ov, hr, 300), ND_IO_TIMEOUT) << "its request was queued";
    accepted.listener->CancelOverlappedRequests();
    accepted.Wait(accepted.listener, &ov, ND_PENDING);
    RealClientStillServed();
}

// The handshake completes, then the first FPDU (the RTR the provider waits
// for) is junk: the provider's side of the connection ends, and since this
// peer never closes, the provider shuts the stream after the TCP timeout
// (set short here); the Accept under way fails or, if it completed, the
// accepted QP's receive is flushed.
TEST_F(HostileTcpClient, GarbageAfterTheHandshakeEndsOnlyThatConnection) {
    Endpoint accepted;
    Buffer b(4096);
    ASSERT_TRUE(ReadyToAccept(accepted, b)) << accepted.error;
    auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
    {
        Socket s;
        ASSERT_TRUE(Handshake(s, iwarp::MpaConfig{})) << "the provider did not complete the handshake";
        // An FPDU of 32 bytes by its length field (a complete one, so the
        // provider does not wait for more), its DDP and RDMAP fields junk.
        std::vector<uint8_t> junk = Junk(5000, 2);
        junk[0] = 0;
        junk[1] = 32;
        ASSERT_TRUE(s.SendAll(junk));
        EXPECT_TRUE(s.ClosedWithin(10000)) << "a stream of junk FPDUs did not end the connection";
    }
    if (accepting.get()) {
        ND2_RESULT got = accepted.Next();
        EXPECT_NE(got.Status, ND_SUCCESS) << "a receive completed from a stream of junk";
        EXPECT_NE(got.Status, ND_IO_TIMEOUT) << "the accepted QP's receive was never flushed";
    }
    RealClientStillServed();
}

// A live peer that stops reading: it completes the handshake and keeps
// sending (a zero-length RDMA Write every 50 ms, which the provider accepts
// and answers nothing to), but never reads, so the provider's socket fills
// with its Sends. Inbound bytes must not count as progress: once nothing of
// ours has left for the TCP timeout (set short here), the connection ends
// and every request completes exactly once, with an error, bounded.
TEST_F(HostileTcpClient, ALivePeerThatStopsReadingEndsTheConnectionWithinTheTimeout) {
    constexpr int kSends = 8;
    constexpr size_t kSendBytes = 1 << 20;
    Endpoint accepted;
    Buffer b(kSendBytes);
    ASSERT_TRUE(ReadyToAccept(accepted, b)) << accepted.error;
    auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
    Socket s;
    ASSERT_TRUE(Handshake(s, iwarp::MpaConfig{})) << "the provider did not complete the handshake";
    int small = 4096;  // a small window (no autotuning): 8 MiB of Sends fill it for sure
    ASSERT_EQ(setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    std::vector<uint8_t> write0;  // the RTR if one was negotiated, else just a Write
    iwarp::EncodeTagged(&write0, iwarp::Opcode::RdmaWrite, true, 1, 0, {}, false);
    ASSERT_TRUE(s.SendAll(write0));
    ASSERT_TRUE(accepting.get()) << accepted.error;

    for (int i = 0; i < kSends; ++i) {
        ND2_SGE sge = b.Sge(0, kSendBytes);
        ASSERT_EQ(accepted.qp->Send(reinterpret_cast<void *>(uintptr_t(i + 1)), &sge, 1, 0), ND_SUCCESS);
    }
    const uint64_t start = NowMs();
    std::vector<ND2_RESULT> done;
    while (done.size() < kSends + 1 && NowMs() - start < 20000) {
        ASSERT_TRUE(s.SendAll(write0)) << "the provider closed the stream before completing its requests";
        for (ND2_RESULT got; accepted.cq->GetResults(&got, 1) == 1;) done.push_back(got);
        usleep(50 * 1000);
    }
    const uint64_t took = NowMs() - start;
    ASSERT_EQ(done.size(), size_t{kSends + 1}) << "requests still open after " << took << " ms";
    EXPECT_LT(took, 10000u) << "a peer that never reads held the connection for " << took << " ms";
    int sends = 0;
    for (const ND2_RESULT &got : done) {
        EXPECT_NE(got.Status, ND_SUCCESS) << "a Send completed although the peer read nothing";
        sends += got.RequestType == Nd2RequestTypeSend;
    }
    EXPECT_EQ(sends, kSends);
    EXPECT_EQ(accepted.Next(300).Status, ND_IO_TIMEOUT) << "a request completed twice";
}

// A Send completes only once the peer shows it took it (a later Read
// Response: confirm_by_read). A peer that closes its stream in order right
// after our Send arrived, without answering that Read, took it all the same
// (its TCP acknowledged every byte, and no Terminate came): the Send
// succeeds. A peer that resets the connection gives no such word: flushed.
TEST_F(HostileTcpClient, ASendThePeerTookSucceedsWhenItClosesInOrderRightAfter) {
    for (bool reset : {false, true}) {
        SCOPED_TRACE(reset ? "the peer resets" : "the peer closes in order");
        Endpoint accepted;
        Buffer b(4096);
        ASSERT_TRUE(ReadyToAccept(accepted, b)) << accepted.error;
        auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
        Socket s;
        ASSERT_TRUE(Handshake(s, iwarp::MpaConfig{})) << "the provider did not complete the handshake";
        std::vector<uint8_t> write0;  // the RTR
        iwarp::EncodeTagged(&write0, iwarp::Opcode::RdmaWrite, true, 1, 0, {}, false);
        ASSERT_TRUE(s.SendAll(write0));
        ASSERT_TRUE(accepting.get()) << accepted.error;
        ND2_SGE sge = b.Sge(64, 64);
        ASSERT_EQ(accepted.qp->Send(reinterpret_cast<void *>(uintptr_t(7)), &sge, 1, 0), ND_SUCCESS);
        // Everything the provider sends (the Send, then its fence Read),
        // read and left unanswered.
        size_t got_bytes = 0;
        for (uint64_t quiet_since = NowMs(); NowMs() - quiet_since < 300;) {
            bool eof = false;
            const size_t n = s.Read(50, &eof).size();
            ASSERT_FALSE(eof);
            if (n) quiet_since = NowMs();
            got_bytes += n;
        }
        ASSERT_GT(got_bytes, 64u) << "the Send never left";
        ND2_RESULT early;
        EXPECT_EQ(accepted.cq->GetResults(&early, 1), 0u) << "the Send completed before the peer confirmed it";
        if (reset) {
            linger l{1, 0};
            ASSERT_EQ(setsockopt(s.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l), 0);
        }
        s.fd = (close(s.fd), -1);
        HRESULT send_status = ND_PENDING;
        for (int i = 0; i < 2; ++i) {  // the Send and the Receive posted before Accept
            ND2_RESULT r = accepted.Next(5000);
            ASSERT_NE(r.Status, ND_IO_TIMEOUT) << "a request never completed";
            if (r.RequestType == Nd2RequestTypeSend) {
                EXPECT_EQ(r.RequestContext, reinterpret_cast<void *>(uintptr_t(7)));
                send_status = r.Status;
            } else {
                EXPECT_EQ(r.Status, ND_CANCELED) << "the Receive";
            }
        }
        EXPECT_EQ(send_status, reset ? ND_CANCELED : ND_SUCCESS);
        EXPECT_EQ(accepted.Next(200).Status, ND_IO_TIMEOUT) << "a request completed twice";
    }
}

// #25: a peer that keeps its stream full (RDMA Writes into a region it was
// given, back to back) must not hold the progress thread: it serves every
// connection of the adapter. While one floods, a new client's request must
// still reach GetConnectionRequest promptly (the listener's socket is
// served by the same thread). The read loop stops after a budget and
// comes back (Engine::Redispatch).
TEST_F(HostileTcpClient, AFloodingPeerDoesNotHoldTheProgressThread) {
    constexpr size_t kRegion = 1 << 20, kChunk = 32 * 1024;  // an FPDU carries < 64 KiB
    Endpoint accepted;
    Buffer target(kRegion);
    ASSERT_TRUE(accepted.OpenOn(*server_) && target.Register(accepted)) << accepted.error;
    auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
    Socket s;
    iwarp::MpaConfig crc;  // the provider checks every FPDU: its reading is slower than our sending
    crc.crc = true;
    ASSERT_TRUE(Handshake(s, crc)) << "the provider did not complete the handshake";
    std::vector<uint8_t> flood;  // 16 MiB of Writes cycling through the region
    std::vector<uint8_t> payload(kChunk, 0x5a);
    const uint32_t stag = __builtin_bswap32(target.mr->GetRemoteToken());  // ND tokens are in network order
    const auto base = reinterpret_cast<uint64_t>(target.bytes.data());
    for (size_t at = 0; at < (16u << 20); at += kChunk)
        iwarp::EncodeTagged(&flood, iwarp::Opcode::RdmaWrite, true, stag, base + at % kRegion, payload, true);
    std::vector<uint8_t> write0;  // the RTR if one was negotiated, else just a Write
    iwarp::EncodeTagged(&write0, iwarp::Opcode::RdmaWrite, true, 1, 0, {}, true);
    ASSERT_TRUE(s.SendAll(write0));
    ASSERT_TRUE(accepting.get()) << accepted.error;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> sent{0};
    std::thread flooder([&] {
        int big = 8 << 20;
        setsockopt(s.fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
        while (!stop.load()) {
            const uint8_t *from = flood.data();
            size_t left = flood.size();
            while (left > 0 && !stop.load()) {
                ssize_t n = send(s.fd, from, left, MSG_NOSIGNAL);
                if (n <= 0) return;
                from += n;
                sent += static_cast<uint64_t>(n);
                left -= static_cast<size_t>(n);
            }
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the flood under way
    uint64_t worst = 0;
    for (int i = 0; i < 5; ++i) {
        Endpoint next;
        ASSERT_TRUE(next.OpenOn(*server_)) << next.error;
        OVERLAPPED ov{};
        HRESULT hr = next.listener->GetConnectionRequest(next.connector, &ov);
        Socket c;
        iwarp::Initiator init(iwarp::MpaConfig{}, {});
        const uint64_t start = NowMs();
        ASSERT_TRUE(c.Dial(port_) && c.SendAll(init.request()));
        hr = next.Wait(next.listener, &ov, hr, 20000);
        worst = std::max(worst, NowMs() - start);
        EXPECT_EQ(hr, ND_SUCCESS) << "request " << i;
        next.connector->Reject(nullptr, 0);
    }
    stop.store(true);
    shutdown(s.fd, SHUT_RDWR);
    flooder.join();
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    constexpr uint64_t kPromptMs = 1500;  // everything runs several times slower
#else
    constexpr uint64_t kPromptMs = 300;
#endif
    EXPECT_LT(worst, kPromptMs) << "a new client's request waited " << worst << " ms behind a flooding peer";
    OVERLAPPED ov{};  // Deregister: the barrier after which no Write of the flood is still landing
    ASSERT_EQ(accepted.Wait(target.mr, &ov, target.mr->Deregister(&ov)), ND_SUCCESS);
    EXPECT_EQ(target.bytes[kRegion - 1], 0x5a) << "the flood's Writes were not placed";
}

// The handshake completes and the peer then never sends its RTR (it never
// completes the connection) but keeps the socket open: the Accept fails
// ND_IO_TIMEOUT at the provider's deadline (#25; shortened here), the
// stream is closed, and the listener still serves a real client.
TEST_F(HostileTcpClient, AnInitiatorThatNeverCompletesFailsTheAcceptInTime) {
    setenv("OPENND_SOFT_ACCEPT_TIMEOUT_MS", "300", 1);
    Endpoint accepted;
    ASSERT_TRUE(accepted.OpenOn(*server_)) << accepted.error;
    auto accepting = std::async(std::launch::async, [&] {
        OVERLAPPED ov{};
        HRESULT hr = accepted.Wait(accepted.listener, &ov,
                                   accepted.listener->GetConnectionRequest(accepted.connector, &ov));
        if (hr != ND_SUCCESS) return hr;
        if ((hr = accepted.connector->Accept(accepted.qp, 8, 8, nullptr, 0, &ov)) != ND_PENDING) return hr;
        const uint64_t start = NowMs();  // its own wait: Endpoint::Wait answers ND_IO_TIMEOUT for itself
        while ((hr = accepted.connector->GetOverlappedResult(&ov, FALSE)) == ND_PENDING && NowMs() - start < 20000)
            usleep(1000);
        return hr;
    });
    Socket s;
    ASSERT_TRUE(Handshake(s, iwarp::MpaConfig{}));  // the provider's reply read; no RTR goes back
    EXPECT_EQ(accepting.get(), ND_IO_TIMEOUT) << "an Accept waiting for an RTR that never comes";
    unsetenv("OPENND_SOFT_ACCEPT_TIMEOUT_MS");
    EXPECT_TRUE(s.ClosedWithin(5000)) << "the stream of the failed Accept stayed open";
    RealClientStillServed();
}

// #25 hole 5 over TCP: under Listen(0) one remote host's MPA requests queue
// only to its share of the hard bound (lowered to 32 here: 8 per host);
// the rest get an MPA reject (retryable), so a host cannot run the process
// out of descriptors by asking and waiting.
TEST_F(HostileTcpClient, OneHostQueuesOnlyItsShareOfRequestsUnderListenZero) {
    constexpr size_t kRequests = 40, kShare = 8;
    setenv("OPENND_SOFT_MAX_QUEUED", "32", 1);
    std::vector<std::unique_ptr<Socket>> flood;
    std::vector<std::unique_ptr<iwarp::Initiator>> inits;
    for (size_t i = 0; i < kRequests; ++i) {
        flood.push_back(std::make_unique<Socket>());
        inits.push_back(std::make_unique<iwarp::Initiator>(iwarp::MpaConfig{}, std::span<const uint8_t>{}));
        ASSERT_TRUE(flood.back()->Dial(port_) && flood.back()->SendAll(inits.back()->request())) << i;
    }
    size_t refused = 0;  // answers come at once: counted until none came for a second
    for (uint64_t quiet_until = NowMs() + 1000; NowMs() < quiet_until;)
        for (size_t i = 0; i < kRequests; ++i) {
            if (inits[i]->status() != iwarp::HandshakeStatus::NeedMore) continue;
            bool eof = false;
            std::vector<uint8_t> in = flood[i]->Read(1, &eof);
            size_t used = 0;
            if (!in.empty() && inits[i]->Feed(in, &used) == iwarp::HandshakeStatus::Rejected) {
                ++refused;
                quiet_until = NowMs() + 1000;
            }
        }
    unsetenv("OPENND_SOFT_MAX_QUEUED");
    EXPECT_EQ(refused, kRequests - kShare) << "requests of one host refused past its share";
}

// RFC 5044: CRC is used when either side asks. The provider asks for none
// by default (as siw) and answers a peer that asks with CRC on.
TEST_F(HostileTcpClient, APeerThatAsksForCrcGetsIt) {
    iwarp::MpaConfig asks;
    asks.crc = true;
    Endpoint accepted;
    ASSERT_TRUE(accepted.OpenOn(*server_)) << accepted.error;
    auto accepting = std::async(std::launch::async, [&] { return accepted.Accept(); });
    Socket s;
    iwarp::Negotiated n;
    ASSERT_TRUE(Handshake(s, asks, &n));
    EXPECT_TRUE(n.crc) << "the provider's reply turned CRC off";
    s.fd = (close(s.fd), -1);  // no RTR: the Accept fails
    accepting.get();

    Endpoint second;
    ASSERT_TRUE(second.OpenOn(*server_)) << second.error;
    auto again = std::async(std::launch::async, [&] { return second.Accept(); });
    Socket plain;
    ASSERT_TRUE(Handshake(plain, iwarp::MpaConfig{}, &n));
    EXPECT_FALSE(n.crc) << "CRC on although nobody asked";
    plain.fd = (close(plain.fd), -1);
    again.get();
}

// The other end: a listener of our own that reads the provider's MPA
// request; with OPENND_SOFT_MPA_CRC=1 the request asks for CRC.
TEST_F(HostileTcpClient, TheProviderAsksForCrcWhenTold) {
    setenv("OPENND_SOFT_TRANSPORT", "tcp", 1);  // MPA, not the same-host protocol
    for (bool told : {false, true}) {
        SCOPED_TRACE(told ? "OPENND_SOFT_MPA_CRC=1" : "default");
        if (told) setenv("OPENND_SOFT_MPA_CRC", "1", 1);
        Socket listening;  // closed on every way out
        listening.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int lfd = listening.fd;
        opennd::net::IpAddress any = Loopback();
        ASSERT_EQ(bind(lfd, any.sa(), any.length()), 0);
        ASSERT_EQ(listen(lfd, 1), 0);
        opennd::net::IpAddress bound;
        socklen_t len = sizeof bound.storage;
        getsockname(lfd, bound.sa(), &len);
        Endpoint client;
        ASSERT_TRUE(client.Open(Loopback())) << client.error;
        auto connecting = std::async(std::launch::async, [&] { return client.Connect(bound); });
        pollfd p{lfd, POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 10000), 1) << "the provider never dialled";
        Socket s;
        s.fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        iwarp::Responder responder{iwarp::MpaConfig{}};
        const uint64_t until = NowMs() + 10000;
        while (responder.status() == iwarp::HandshakeStatus::NeedMore && NowMs() < until) {
            bool eof = false;
            std::vector<uint8_t> in = s.Read(100, &eof);
            if (eof) break;
            size_t used = 0;
            if (!in.empty()) responder.Feed(in, &used);
        }
        ASSERT_EQ(responder.status(), iwarp::HandshakeStatus::RequestReceived);
        EXPECT_EQ(responder.request().crc, told);
        close(s.fd);  // no reply: the Connect fails, bounded
        s.fd = -1;
        EXPECT_FALSE(connecting.get());
    }
}

}  // namespace
