// ndrping's ND endpoint: one adapter, CQ, QP and connector (plus a listener
// on the server), rping's two 16-byte message buffers, and waits that are
// all bounded by the --timeout. Single-threaded: the waits poll the CQ
// (GetResults also drives a provider's progress) and back off to short
// sleeps when idle, so a peer sharing the CPU (a VM) is not starved.
#pragma once

#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/await.h"
#include "common/connection.h"
#include "common/node.h"
#include "common/region.h"
#include "ndsupport.h"
#include "opennd/ip_address.h"
#include "rping_protocol.h"

namespace ndrping {

// Failures carry a message for the user; main prints it and exits 1.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string StatusName(HRESULT hr);

constexpr ULONG kRemoteAccess =
    ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ | ND_MR_FLAG_ALLOW_REMOTE_WRITE;

struct Region {
    std::vector<char> bytes;
    opennd::client::Region mr;  // declared after bytes: deregistered before they go
    void Reset() { mr.Reset(); }
    char *data() { return bytes.data(); }
    uint64_t address() const { return reinterpret_cast<uint64_t>(bytes.data()); }
};

struct Message {
    ULONG bytes = 0;
    std::vector<unsigned char> data;  // `bytes` of them, and never fewer than kInfoBytes (zero-filled)
};

// Queue and buffer sizes: rping's by default (one 16-byte Send buffer, two
// 16-byte Receives, one Read in flight each way).
struct Shape {
    ULONG receives = 2;             // rping: max_recv_wr 2, reposted as they complete
    ULONG receive_bytes = kInfoBytes;
    ULONG send_slots = 1;           // Send buffers; a Send waits for a free one
    ULONG send_bytes = kInfoBytes;  // each
    ULONG send_queue = 16;          // rping: max_send_wr 16
    ULONG read_limit = 1;           // asked for and granted, each way
    bool repost = true;             // repost a Receive as soon as it completes
};

class Endpoint {
public:
    Endpoint(uint64_t timeout_ms, bool debug) : timeout_ms_(timeout_ms), debug_(debug) {}
    ~Endpoint();

    // Adapter for `local`, CQ, QP, connector, and the message buffers.
    void Open(const opennd::net::IpAddress &local, const Shape &shape = {});
    void Register(Region &r, size_t size, ULONG flags);

    // Server: bind and listen (port 0 picks one); returns the bound port.
    uint16_t Listen(const opennd::net::IpAddress &local, uint16_t port);
    // Server: waits (bounded) for one connection request and accepts it.
    void AcceptOne();
    // Client. `pause_ms` between Connect's completion and CompleteConnect.
    void Connect(const opennd::net::IpAddress &dest, uint32_t pause_ms);
    std::string PeerName();
    // Reads we may have in flight on this connection (ND's outbound limit).
    ULONG OutboundReadLimit();

    // Sends one rping_rdma_info (waits first for a free Send buffer: with
    // rping's one, for the previous Send to finish).
    void SendInfo(const BufferInfo &info);
    // A free Send buffer of shape.send_bytes (waits for one), then SendFrom
    // with the length filled in.
    unsigned char *SendBuffer();
    void SendFrom(unsigned char *buffer, ULONG length);
    void Read(Region &local, uint32_t length, const BufferInfo &remote) {
        Read(local, 0, length, remote.address, remote.token);
    }
    void Write(Region &local, uint32_t length, const BufferInfo &remote) {
        Write(local, 0, length, remote.address, remote.token);
    }
    // `length` bytes at `offset` of `local` from/to `remote_address + offset`.
    void Read(Region &local, uint32_t offset, uint32_t length, uint64_t remote_address, uint32_t token);
    void Write(Region &local, uint32_t offset, uint32_t length, uint64_t remote_address, uint32_t token);

    // The next received message. Throws on timeout, a failed completion or
    // the peer's disconnect.
    Message WaitMessage(const char *what);
    // Same, but returns false (no throw) when the peer disconnected first.
    bool WaitMessageOrEnd(Message *m, const char *what);
    // Wait until at most `in_flight` requests of that kind are outstanding.
    void WaitRead(const char *what, uint64_t in_flight = 0) { WaitCount(&reads_done_, reads_posted_, in_flight, what); }
    void WaitWrite(const char *what, uint64_t in_flight = 0) { WaitCount(&writes_done_, writes_posted_, in_flight, what); }
    void WaitSends(const char *what, uint64_t in_flight = 0) { WaitCount(&sends_done_, sends_posted_, in_flight, what); }
    // Waits up to the timeout for the peer to disconnect; false if it did not.
    bool WaitPeerDisconnect();
    // Local disconnect (bounded), after which nothing more is posted.
    void Disconnect();

private:
    void Check(HRESULT hr, const std::string &what);
    void Check(const opennd::client::Status &s) { Check(s.hr(), s.call()); }
    // The status of a bounded setup step; its timeout is TimedOut(what).
    HRESULT Waited(const opennd::client::Status &s, const std::string &what);
    opennd::client::Deadline Bound() const { return opennd::client::Deadline::After(timeout_ms_); }
    void PostReceive(size_t slot);
    bool Poll();  // true if anything happened
    void Idle(unsigned *rounds);
    [[noreturn]] void TimedOut(const char *what);
    void WaitCount(const uint64_t *done, uint64_t posted, uint64_t in_flight, const char *what);
    void Debug(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

    uint64_t timeout_ms_;
    bool debug_;
    opennd::client::Node node_;
    opennd::client::Connection conn_;
    opennd::client::Listener listener_;

    Shape shape_;
    Region recv_, send_;
    std::deque<Message> inbox_;
    uint64_t sends_posted_ = 0, sends_done_ = 0;
    uint64_t reads_posted_ = 0, reads_done_ = 0;
    uint64_t writes_posted_ = 0, writes_done_ = 0;

    bool connected_ = false;
    bool watching_ = false;     // disc_ov_ is pending on connector_
    bool peer_gone_ = false;    // NotifyDisconnect completed, or our Receives were flushed
    bool closing_ = false;      // we disconnected: flushed completions are expected
    opennd::client::Overlapped disc_ov_;
};

}  // namespace ndrping
