// SMB Direct negotiation and credits over NDK connections: the library
// against itself, and against a raw peer sending good and malformed
// messages (wrong version, sizes below the minimums, credit exhaustion).
#include "smbd_test_raw.h"

using namespace ndk_test;
using smbd::Limits;

namespace {

// A raw client that sends `request` to a library server and returns what the
// server's Accept said; `reply` gets the server's answer, if any.
NTSTATUS RawRequest(const std::vector<uint8_t> &request, std::vector<uint8_t> *reply, bool *ended) {
    SmbdServer server;
    EXPECT_TRUE(server.Start(Limits{}));
    RawPeer raw;
    EXPECT_TRUE(raw.Open());
    EXPECT_TRUE(raw.Connect(server.port));
    raw.PostReceives(4);
    EXPECT_TRUE(raw.Send(request));
    NTSTATUS accepted = server.result.get();
    reply->clear();
    raw.Receive(reply, std::chrono::seconds(2));
    std::vector<uint8_t> more;
    raw.Receive(&more, std::chrono::seconds(2));  // then the server disconnects
    *ended = raw.ended;
    return accepted;
}

}  // namespace

TEST(SmbdNegotiate, LibraryToLibrary) {
    SmbdServer server;
    Limits server_limits;
    server_limits.max_receive_size = 4096;
    ASSERT_TRUE(server.Start(server_limits));
    smbd::Endpoint client;
    ASSERT_TRUE(client.Open("127.0.0.1"));
    std::unique_ptr<smbd::Connection> c;
    ASSERT_EQ(client.Connect("", server.port, Limits{}, &c), STATUS_SUCCESS);
    ASSERT_EQ(server.result.get(), STATUS_SUCCESS);
    const smbd::Negotiated &cn = c->negotiated(), &sn = server.connection->negotiated();
    EXPECT_EQ(cn.max_send_size, 1364u);       // min(client send 1364, server receive 4096)
    EXPECT_EQ(sn.max_receive_size, 1364u);    // min(server receive 4096, client preferred send 1364)
    EXPECT_EQ(sn.max_send_size, 1364u);
    EXPECT_EQ(cn.max_fragmented_send_size, 1u << 20);
    EXPECT_EQ(cn.initial_send_credits, 255);  // the server granted all its receive credits
    // The client grants its credits right after negotiating: the server can send.
    auto deadline = Clock::now() + kWait;
    while (server.connection->send_credits() == 0 && Clock::now() < deadline) std::this_thread::yield();
    EXPECT_EQ(server.connection->send_credits(), 255);
    std::vector<uint8_t> ping{1, 2, 3}, got;
    ASSERT_EQ(server.connection->Send(ping.data(), ping.size()), STATUS_SUCCESS);
    ASSERT_EQ(c->Receive(&got), STATUS_SUCCESS);
    EXPECT_EQ(got, ping);
}

TEST(SmbdNegotiate, WrongVersionGetsAFailureResponseThenDisconnect) {
    std::vector<uint8_t> reply;
    bool ended = false;
    EXPECT_EQ(RawRequest(RawPeer::Negotiate(0x0200, 0x0200, 10, 1024, 1024, 0x20000), &reply, &ended),
              STATUS_NOT_SUPPORTED);
    smbd::NegotiateResponse r;
    ASSERT_TRUE(smbd::Decode(reply.data(), reply.size(), &r));
    EXPECT_EQ(r.status, uint32_t(STATUS_NOT_SUPPORTED));
    EXPECT_TRUE(ended);
}

TEST(SmbdNegotiate, SizesBelowTheMinimumsDisconnectWithoutResponse) {
    for (auto request : {RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 64, 0x20000),      // receive < 128
                         RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 1024, 0x10000),     // fragmented < 128 KiB
                         RawPeer::Negotiate(0x0100, 0x0100, 0, 1024, 1024, 0x20000)}) {   // no credits asked
        std::vector<uint8_t> reply;
        bool ended = false;
        EXPECT_EQ(RawRequest(request, &reply, &ended), STATUS_INVALID_PARAMETER);
        EXPECT_TRUE(reply.empty());
        EXPECT_TRUE(ended);
    }
    std::vector<uint8_t> reply;
    bool ended = false;
    std::vector<uint8_t> short_request(10, 0);
    EXPECT_EQ(RawRequest(short_request, &reply, &ended), STATUS_INVALID_PARAMETER);
    EXPECT_TRUE(reply.empty());
}

// A raw server answering the library's negotiate request with `response`;
// the library connects from `client`.
NTSTATUS ConnectToRawServer(const smbd::NegotiateResponse &response, RawPeer *raw, smbd::Endpoint *client,
                            std::unique_ptr<smbd::Connection> *c, Limits limits) {
    uint16_t port = 0;
    EXPECT_TRUE(raw->Open());
    EXPECT_TRUE(raw->Listen(&port));
    EXPECT_TRUE(client->Open("127.0.0.1"));
    auto connecting = std::async(std::launch::async, [&] { return client->Connect("", port, limits, c, 5000); });
    EXPECT_TRUE(raw->Accept());
    raw->PostReceives(32);
    std::vector<uint8_t> request;
    EXPECT_TRUE(raw->Receive(&request));
    EXPECT_EQ(request.size(), smbd::kNegotiateRequestSize);
    raw->Send(RawPeer::NegotiateResponse(response));
    return connecting.get();
}

smbd::NegotiateResponse GoodRawResponse(uint16_t granted) {
    smbd::NegotiateResponse r;
    r.credits_requested = 8;
    r.credits_granted = granted;
    r.max_read_write_size = 1 << 20;
    r.preferred_send_size = 1024;
    r.max_receive_size = 1024;
    r.max_fragmented_size = 1 << 17;
    return r;
}

TEST(SmbdNegotiate, InitiatorRejectsBadResponses) {
    const smbd::NegotiateResponse good = GoodRawResponse(8);
    struct Case {
        const char *what;
        void (*change)(smbd::NegotiateResponse &);
        NTSTATUS expected;
    } cases[] = {
        {"no credits granted", [](smbd::NegotiateResponse &r) { r.credits_granted = 0; }, STATUS_INVALID_PARAMETER},
        {"fragmented < 128 KiB", [](smbd::NegotiateResponse &r) { r.max_fragmented_size = 4096; },
         STATUS_INVALID_PARAMETER},
        {"receive < 128", [](smbd::NegotiateResponse &r) { r.max_receive_size = 100; }, STATUS_INVALID_PARAMETER},
        {"failure status", [](smbd::NegotiateResponse &r) { r.status = uint32_t(STATUS_NOT_SUPPORTED); },
         STATUS_NOT_SUPPORTED},
    };
    for (const Case &k : cases) {
        smbd::NegotiateResponse r = good;
        k.change(r);
        RawPeer raw;
        smbd::Endpoint client;
        std::unique_ptr<smbd::Connection> c;
        EXPECT_EQ(ConnectToRawServer(r, &raw, &client, &c, Limits{}), k.expected) << k.what;
        std::vector<uint8_t> more;
        raw.Receive(&more, std::chrono::seconds(2));
        EXPECT_TRUE(raw.ended) << k.what << ": the initiator terminates the connection";
    }
}
