// SMB Direct test support: a raw NDK peer that sends and receives exact
// bytes (to play a well-behaved or malformed SMB Direct peer), and a server
// thread running the library's listener side.
#pragma once

#include <deque>
#include <future>

#include "ndk_test_util.h"
#include "smbd_endpoint.h"

namespace ndk_test {

class RawPeer {
public:
    ~RawPeer();
    bool Open();
    bool Connect(uint16_t port);             // active side
    bool Listen(uint16_t *port);             // passive side: then Accept
    bool Accept(std::chrono::milliseconds timeout = kWait);
    void PostReceives(int n);                // 8 KiB each
    bool Send(const std::vector<uint8_t> &bytes);
    // The next received message; false on timeout or when the connection
    // ended (then `ended` is true).
    bool Receive(std::vector<uint8_t> *message, std::chrono::milliseconds timeout = kWait);
    bool ended = false;

    static std::vector<uint8_t> Negotiate(uint16_t min_v, uint16_t max_v, uint16_t credits, uint32_t send,
                                          uint32_t receive, uint32_t fragmented);
    static std::vector<uint8_t> NegotiateResponse(const smbd::NegotiateResponse &r);
    static std::vector<uint8_t> Data(uint16_t requested, uint16_t granted, uint16_t flags, uint32_t remaining,
                                     uint32_t offset, const std::vector<uint8_t> &payload);

private:
    bool Pump(std::chrono::milliseconds timeout);  // one completion into the queues
    Pair pair_;  // adapter + listener + sides; `side_` is the one used
    Side *side_ = nullptr;
    int receive_slot_ = 0;
    int send_slot_ = 0;
    std::deque<std::vector<uint8_t>> received_;
};

// The library's listener side on its own thread: accepts one connection and
// negotiates; `result` tells how that went.
struct SmbdServer {
    smbd::Endpoint endpoint;
    uint16_t port = 0;
    std::unique_ptr<smbd::Connection> connection;
    std::future<NTSTATUS> result;
    bool Start(const smbd::Limits &limits);
};

}  // namespace ndk_test
