// ndrping --bulk: the bulk exchange of bulk_protocol.h, either role. Both
// sides Send, RDMA Write and RDMA Read at once with many requests in
// flight, and check every byte they receive, find written, or read.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "bulk_protocol.h"
#include "endpoint.h"
#include "ndrping.h"

namespace ndrping {
namespace {

class Bulk {
public:
    Bulk(Endpoint &ep, const Options &o, const char *role)
        : ep_(ep), size_(o.size), messages_(o.count), role_(role),
          seed_(o.server ? BULK_SEED_SERVER : BULK_SEED_CLIENT),
          peer_seed_(o.server ? BULK_SEED_CLIENT : BULK_SEED_SERVER) {}

    void Register() {
        ep_.Register(source_, size_, kRemoteAccess);
        ep_.Register(writes_, size_, 0);
        ep_.Register(sink_, size_, kRemoteAccess);
        ep_.Register(readback_, size_, ND_MR_FLAG_ALLOW_LOCAL_WRITE);
        bulk_fill(Bytes(source_), 0, size_, seed_, BULK_STREAM_SOURCE);
        bulk_fill(Bytes(writes_), 0, size_, seed_, BULK_STREAM_WRITE);
    }

    void Run() {
        Hello();
        for (uint32_t j = 0; j < messages_; ++j) {
            uint32_t len = bulk_send_length(j);
            unsigned char *buffer = ep_.SendBuffer();
            bulk_fill(buffer, 0, len, seed_, BULK_STREAM_SEND(j));
            ep_.SendFrom(buffer, len);
        }
        for (uint32_t k = 0; k < size_; k += bulk_chunk(k, size_)) {
            ep_.WaitWrite("RDMA Writes to complete", BULK_WRITE_DEPTH - 1);
            ep_.Write(writes_, k, bulk_chunk(k, size_), peer_.sink_addr, Token(peer_.sink_rkey));
        }
        Control(BULK_WRITES_DONE);  // ordered after the Writes: no wait for them

        for (uint32_t j = 0; j < messages_; ++j) {
            std::string what = "the peer's message " + std::to_string(j);
            Message m = ep_.WaitMessage(what.c_str());
            if (m.bytes != bulk_send_length(j))
                throw Error(what + ": " + std::to_string(m.bytes) + " bytes, expected " +
                            std::to_string(bulk_send_length(j)));
            long long at = bulk_check(m.data.data(), m.bytes, peer_seed_, BULK_STREAM_SEND(j));
            if (at >= 0) throw Error(what + ": wrong byte at offset " + std::to_string(at));
        }
        std::printf("%s: %u messages from the peer verified\n", role_, messages_);
        Expect(BULK_WRITES_DONE, "the peer's end of Writes");
        long long at = bulk_check(Bytes(sink_), size_, peer_seed_, BULK_STREAM_WRITE);
        if (at >= 0) throw Error("what the peer wrote differs at offset " + std::to_string(at));
        std::printf("%s: %u bytes the peer wrote verified\n", role_, size_);

        uint64_t depth = std::min<uint64_t>(BULK_READ_DEPTH, ep_.OutboundReadLimit());
        if (depth == 0) throw Error("the connection allows no RDMA Read");
        for (uint32_t k = 0; k < size_; k += bulk_chunk(k, size_)) {
            ep_.WaitRead("RDMA Reads to complete", depth - 1);
            ep_.Read(readback_, k, bulk_chunk(k, size_), peer_.source_addr, Token(peer_.source_rkey));
        }
        ep_.WaitRead("RDMA Reads to complete");
        at = bulk_check(Bytes(readback_), size_, peer_seed_, BULK_STREAM_SOURCE);
        if (at >= 0) throw Error("what we read from the peer differs at offset " + std::to_string(at));
        std::printf("%s: %u bytes read from the peer verified\n", role_, size_);
        Control(BULK_READS_DONE);
        Expect(BULK_READS_DONE, "the peer's end of Reads");  // it no longer reads our memory
        ep_.WaitSends("our last Send to complete");
    }

private:
    static unsigned char *Bytes(Region &r) { return reinterpret_cast<unsigned char *>(r.data()); }
    static uint32_t Token(const unsigned char wire[4]) {  // ND tokens are the wire bytes (R077)
        uint32_t t;
        std::memcpy(&t, wire, 4);
        return t;
    }

    void Hello() {
        bulk_hello h{};
        h.kind = BULK_HELLO;
        h.size = size_;
        h.messages = messages_;
        h.source_addr = source_.address();
        h.sink_addr = sink_.address();
        uint32_t t = source_.mr->GetRemoteToken();
        std::memcpy(h.source_rkey, &t, 4);
        t = sink_.mr->GetRemoteToken();
        std::memcpy(h.sink_rkey, &t, 4);
        unsigned char *buffer = ep_.SendBuffer();
        ep_.SendFrom(buffer, bulk_encode(&h, buffer));
        Message m = ep_.WaitMessage("the peer's hello");
        if (bulk_decode(m.data.data(), m.bytes, &peer_) != BULK_HELLO)
            throw Error("the peer's first message (" + std::to_string(m.bytes) + " bytes) is not a bulk hello");
        if (peer_.size != size_ || peer_.messages != messages_)
            throw Error("the peer runs size " + std::to_string(peer_.size) + ", " + std::to_string(peer_.messages) +
                        " messages; we run " + std::to_string(size_) + ", " + std::to_string(messages_));
    }

    void Control(uint32_t kind) {
        bulk_hello c{};
        c.kind = kind;
        unsigned char *buffer = ep_.SendBuffer();
        ep_.SendFrom(buffer, bulk_encode(&c, buffer));
    }

    void Expect(uint32_t kind, const char *what) {
        Message m = ep_.WaitMessage(what);
        bulk_hello c;
        if (bulk_decode(m.data.data(), m.bytes, &c) != kind)
            throw Error(std::string(what) + ": a message of " + std::to_string(m.bytes) + " bytes that is not it");
    }

    Endpoint &ep_;
    uint32_t size_, messages_;
    const char *role_;
    uint32_t seed_, peer_seed_;
    Region source_, writes_, sink_, readback_;
    bulk_hello peer_{};
};

Shape BulkShape(uint32_t messages) {
    Shape s;
    s.receives = BULK_RECEIVES(messages);
    s.receive_bytes = BULK_RECV_BYTES;
    s.send_slots = BULK_SEND_DEPTH;
    s.send_bytes = BULK_RECV_BYTES;
    s.send_queue = BULK_SEND_DEPTH + BULK_WRITE_DEPTH + BULK_READ_DEPTH + 2;
    s.read_limit = BULK_READ_DEPTH;
    s.repost = false;  // exactly one Receive per message the protocol sends
    return s;
}

}  // namespace

int RunBulk(const Options &o) {
    const char *role = o.server ? "ndrping bulk server" : "ndrping bulk client";
    opennd::net::IpAddress dest, local;
    if (o.server)
        local = Resolve(o.address, "listen");
    else
        ClientAddresses(o, &dest, &local);
    Endpoint ep(o.timeout_ms, o.debug);
    ep.Open(local, BulkShape(o.count));
    Bulk bulk(ep, o, role);  // its regions go before the endpoint
    bulk.Register();
    if (o.server) {
        uint16_t port = ep.Listen(local, o.port);
        std::printf("%s: listening on %s port %u\n", role, opennd::net::ToString(local.sa()).c_str(), port);
        std::fflush(stdout);
        ep.AcceptOne();
    } else {
        ep.Connect(dest, o.connect_pause_ms);
    }
    std::string peer = ep.PeerName();
    std::printf("%s: connected to %s\n", role, peer.c_str());
    bulk.Run();
    ep.Disconnect();
    std::printf("%s: PASS (Send both ways, %u bytes RDMA Write and Read each way, with %s)\n", role, o.size,
                peer.c_str());
    return 0;
}

}  // namespace ndrping
