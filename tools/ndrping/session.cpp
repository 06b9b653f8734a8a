// rping's ping loop, both roles (see rping_protocol.h for the protocol).
// ndrping always verifies: the client compares what the server wrote with
// what it sent; the server compares what it read with the text rping's
// client puts there for that ping number. Exit 0 means every ping verified.
#include <netdb.h>

#include <cstdio>
#include <cstring>

#include "endpoint.h"
#include "ndrping.h"

namespace ndrping {
namespace {

void CheckMessage(const Message &m, const char *what) {
    // rping treats any other length as "bogus data".
    if (m.bytes != kInfoBytes)
        throw Error(std::string(what) + ": received " + std::to_string(m.bytes) + " bytes, rping sends " +
                    std::to_string(kInfoBytes));
}

}  // namespace

opennd::net::IpAddress Resolve(const std::string &text, const char *what) {
    opennd::net::IpAddress a;
    if (opennd::net::ParseAddress(text, &a)) return a;
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(text.c_str(), nullptr, &hints, &res) == 0) {
        bool ok = false;
        for (addrinfo *i = res; i && !ok; i = i->ai_next) ok = opennd::net::FromSockaddr(i->ai_addr, i->ai_addrlen, &a);
        freeaddrinfo(res);
        if (ok) return a;
    }
    throw Error(std::string("cannot resolve the ") + what + " address '" + text + "'");
}

void ClientAddresses(const Options &o, opennd::net::IpAddress *dest, opennd::net::IpAddress *local) {
    *dest = Resolve(o.address, "server");
    opennd::net::SetPort(dest->sa(), o.port);
    if (!o.source.empty()) {
        *local = Resolve(o.source, "source");
    } else {
        SIZE_T len = sizeof local->storage;
        HRESULT hr = NdResolveAddress(dest->sa(), dest->length(), local->sa(), &len);
        if (FAILED(hr))
            throw Error("no local ND address to reach " + opennd::net::ToString(dest->sa()) + ": NdResolveAddress failed: " +
                        StatusName(hr) + " (give one with -I)");
    }
    opennd::net::SetPort(local->sa(), 0);
}

int RunClient(const Options &o) {
    opennd::net::IpAddress dest, local;
    ClientAddresses(o, &dest, &local);

    Endpoint ep(o.timeout_ms, o.debug);
    ep.Open(local);
    Region start, sink;  // destroyed before the endpoint
    ep.Register(start, o.size, kRemoteAccess);
    ep.Register(sink, o.size, kRemoteAccess);
    ep.Connect(dest, o.connect_pause_ms);
    std::string peer = ep.PeerName();
    if (o.debug) std::fprintf(stderr, "ndrping: client connected to %s from %s\n", peer.c_str(), opennd::net::ToString(local.sa()).c_str());

    uint32_t ping = 0;
    for (; o.count == 0 || ping < o.count; ++ping) {
        FillPing(start.data(), o.size, ping);
        std::memset(sink.data(), 0, o.size);  // so the comparison proves this ping's Write
        ep.SendInfo({start.address(), start.mr->GetRemoteToken(), o.size});
        std::string step = "ping " + std::to_string(ping) + ": the server's go-ahead after its RDMA Read";
        CheckMessage(ep.WaitMessage(step.c_str()), step.c_str());
        ep.SendInfo({sink.address(), sink.mr->GetRemoteToken(), o.size});
        step = "ping " + std::to_string(ping) + ": the server's message after its RDMA Write";
        CheckMessage(ep.WaitMessage(step.c_str()), step.c_str());
        std::string diff = FirstDifference(start.data(), sink.data(), o.size);
        if (!diff.empty())
            throw Error("ping " + std::to_string(ping) + ": data mismatch: what the server wrote differs from what it read, at " +
                        diff);
        if (o.verbose) std::printf("ping data: %s\n", sink.data());
    }
    ep.WaitSends("the last Send to complete");
    ep.Disconnect();
    std::printf("ndrping client: %u pings of %u bytes with %s verified (Send, remote RDMA Read and Write)\n", ping,
                o.size, peer.c_str());
    return 0;
}

int RunServer(const Options &o) {
    opennd::net::IpAddress local = Resolve(o.address, "listen");
    Endpoint ep(o.timeout_ms, o.debug);
    ep.Open(local);
    Region buf;
    ep.Register(buf, kServerBufferBytes, kRemoteAccess);
    uint16_t port = ep.Listen(local, o.port);
    std::printf("ndrping server: listening on %s port %u\n", opennd::net::ToString(local.sa()).c_str(), port);
    std::fflush(stdout);
    ep.AcceptOne();
    std::string peer = ep.PeerName();
    if (o.debug) std::fprintf(stderr, "ndrping: server accepted %s\n", peer.c_str());

    uint32_t ping = 0, size = 0;
    for (; o.count == 0 || ping < o.count; ++ping) {
        std::string step = "ping " + std::to_string(ping) + ": the client's start buffer";
        Message m;
        if (!ep.WaitMessageOrEnd(&m, step.c_str())) break;  // the client is done
        CheckMessage(m, step.c_str());
        BufferInfo src = Decode(m.data.data());
        if (src.size < 1 || src.size > kServerBufferBytes)
            throw Error(step + ": size " + std::to_string(src.size) + " is out of range");
        if (o.size_given && src.size != o.size)
            throw Error(step + ": the client pings " + std::to_string(src.size) + " bytes, -S says " +
                        std::to_string(o.size));
        size = src.size;
        std::memset(buf.data(), 0, size);
        ep.Read(buf, size, src);
        step = "ping " + std::to_string(ping) + ": our RDMA Read";
        ep.WaitRead(step.c_str());
        std::string bad = CheckPing(buf.data(), size, ping);
        if (!bad.empty())
            throw Error("ping " + std::to_string(ping) + ": the data read is not rping's ping text, at " + bad);
        if (o.verbose) std::printf("server ping data: %s\n", buf.data());
        ep.SendInfo({});  // go-ahead: rping's server sends its unformatted (zero) buffer

        step = "ping " + std::to_string(ping) + ": the client's sink buffer";
        m = ep.WaitMessage(step.c_str());
        CheckMessage(m, step.c_str());
        BufferInfo sink = Decode(m.data.data());
        uint32_t length = static_cast<uint32_t>(strnlen(buf.data(), size)) + 1;  // rping: strlen + 1
        if (length > sink.size)
            throw Error(step + ": " + std::to_string(sink.size) + " bytes, too small for the " +
                        std::to_string(length) + " to echo");
        ep.Write(buf, length, sink);
        step = "ping " + std::to_string(ping) + ": our RDMA Write";
        ep.WaitWrite(step.c_str());
        ep.SendInfo({});
    }
    bool clean = true;
    if (o.count && ping == o.count) {
        // The client needed the last message to finish its count, so a Send
        // completion lost in its disconnect is no failure of the exchange.
        try {
            ep.WaitSends("the last Send to complete");
        } catch (const Error &e) {
            std::fprintf(stderr, "ndrping server: note: %s\n", e.what());
        }
        if (!ep.WaitPeerDisconnect()) {
            std::fprintf(stderr, "ndrping server: note: the client did not disconnect within the timeout\n");
            clean = false;
        }
    }
    ep.Disconnect();
    if (ping == 0) throw Error("the client " + peer + " disconnected before the first ping");
    if (o.count && ping < o.count)
        throw Error("the client " + peer + " disconnected after " + std::to_string(ping) + " of " +
                    std::to_string(o.count) + " pings");
    std::printf("ndrping server: %u pings of %u bytes from %s verified (Send, RDMA Read and Write)%s\n", ping, size,
                peer.c_str(), clean ? "" : "; the client stayed connected");
    return 0;
}

}  // namespace ndrping
