// The measured loops. The client drives: before each test it sends a
// Control message; the server prepares, answers with its buffer, and plays
// its part. Latency samples are per iteration; bandwidth keeps `window`
// requests in flight.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "endpoint.h"
#include "perf.h"

namespace ndperf {
namespace kit = opennd::kit;
namespace {

struct BufferAd {  // "my buffer is here", in both directions
    uint64_t address;
    uint32_t token;
    uint32_t reserved;
};

constexpr size_t kCtrlBytes = 64;
constexpr uint32_t kWriteMark = 0;

kit::IpAddress Address(const Options &o) {
    kit::IpAddress a;
    if (!kit::ParseAddress(o.address, &a)) throw std::runtime_error("bad address: " + o.address);
    return a;
}

uint32_t DefaultIters(Test t, uint32_t size) {
    if (IsLatency(t)) return size <= 4096 ? 20000 : size <= (1u << 20) ? 2000 : 100;
    return size <= 4096 ? 100000 : size <= (1u << 20) ? 2000 : 200;
}

void PostRecv(Endpoint &ep, Region &r, size_t offset, size_t len, void *ctx = nullptr) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = ep.qp()->Receive(ctx, &s, len ? 1 : 0);
    if (FAILED(hr)) throw std::runtime_error("Receive failed: " + StatusName(hr));
}

void PostSend(Endpoint &ep, Region &r, size_t offset, size_t len, ULONG flags = 0) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = ep.qp()->Send(nullptr, &s, len ? 1 : 0, flags);
    if (FAILED(hr)) throw std::runtime_error("Send failed: " + StatusName(hr));
}

void PostRdma(Endpoint &ep, bool write, Region &r, size_t offset, size_t len, const BufferAd &peer, size_t peer_off,
              ULONG flags = 0) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = write ? ep.qp()->Write(nullptr, &s, 1, peer.address + peer_off, peer.token, flags)
                       : ep.qp()->Read(nullptr, &s, 1, peer.address + peer_off, peer.token, flags);
    if (FAILED(hr)) throw std::runtime_error(std::string(write ? "Write" : "Read") + " failed: " + StatusName(hr));
}

// Spins until the last byte of `r` (size `len`) equals `value`, with no
// provider call: RDMA Write puts its last byte last.
void SpinForByte(Region &r, size_t len, char value) {
    volatile char *last = r.data() + len - 1;
    uint64_t deadline = NowNs() + 10'000'000'000ull;
    for (uint64_t spins = 0; *last != value; ++spins)
        if ((spins & 0xFFFF) == 0 && NowNs() > deadline) throw std::runtime_error("write_lat: the peer's Write never landed");
}

}  // namespace

int RunServer(const Options &o) {
    kit::IpAddress local = Address(o);
    Endpoint ep;
    ep.Open(local, 512);
    Region ctrl, data;
    ep.Register(ctrl, kCtrlBytes * 2);
    uint16_t port = ep.Listen(local, o.port);
    PostRecv(ep, ctrl, 0, kCtrlBytes);
    if (o.port_fd >= 0) {
        if (write(o.port_fd, &port, sizeof port) != sizeof port) return 1;
        close(o.port_fd);
    } else {
        std::printf("ndperf server listening on %s port %u\n", o.address.c_str(), port);
        std::fflush(stdout);
    }
    ep.Accept(nullptr, 0);
    for (;;) {
        ND2_RESULT r = ep.NextOf(Nd2RequestTypeReceive, false);
        Control c;
        std::memcpy(&c, ctrl.data(), sizeof c);
        if (r.BytesTransferred < sizeof c || c.magic != kControlMagic) throw std::runtime_error("bad control message");
        if (c.test == kDone) break;
        BufferAd peer;
        std::memcpy(&peer, ctrl.data() + sizeof c, sizeof peer);
        Test t = static_cast<Test>(c.test);
        size_t slot = std::max<size_t>(c.size, 1);
        size_t slots = IsLatency(t) ? 2 : c.window;  // latency: receive half, send half
        data = Region();
        ep.Register(data, slot * slots);
        // Receives for the data phase go in before the answer.
        uint32_t posted = 0;
        if (t == Test::SendLat) {
            PostRecv(ep, data, 0, c.size);
            posted = 1;
        } else if (t == Test::SendBw) {
            for (; posted < std::min(c.iters, c.window); ++posted) PostRecv(ep, data, (posted % slots) * slot, c.size);
        }
        BufferAd mine{reinterpret_cast<uint64_t>(data.data()), data.remote_token(), 0};
        std::memcpy(ctrl.data() + kCtrlBytes, &mine, sizeof mine);
        PostSend(ep, ctrl, kCtrlBytes, sizeof mine);
        ep.NextOf(Nd2RequestTypeSend, false);
        switch (t) {
        case Test::SendLat:
            for (uint32_t i = 0; i < c.iters; ++i) {
                ep.NextOf(Nd2RequestTypeReceive, c.blocking);
                if (i + 1 < c.iters) PostRecv(ep, data, 0, c.size);
                PostSend(ep, data, 0, c.size, ND_OP_FLAG_SILENT_SUCCESS);
            }
            break;
        case Test::WriteLat:
            for (uint32_t i = 0; i < c.iters; ++i) {
                char mark = static_cast<char>(i % 255 + 1);
                SpinForByte(data, c.size, mark);
                data.data()[slot + c.size - 1] = mark;
                PostRdma(ep, true, data, slot, c.size, peer, 0, ND_OP_FLAG_SILENT_SUCCESS);
            }
            break;
        case Test::SendBw:
            for (uint32_t done = 0; done < c.iters; ++done) {
                ep.NextOf(Nd2RequestTypeReceive, false);
                if (posted < c.iters) {
                    PostRecv(ep, data, (posted % slots) * slot, c.size);
                    ++posted;
                }
            }
            break;
        default: break;  // Read and Write bandwidth, Read latency: one-sided
        }
        PostRecv(ep, ctrl, 0, kCtrlBytes);
    }
    ep.Disconnect();
    return 0;
}

int RunClient(const Options &o, std::vector<Result> *results) {
    kit::IpAddress local = Address(o), dest = local;
    kit::SetPort(dest.sa(), o.port);
    Endpoint ep;
    ep.Open(local, 512);
    Region ctrl, data;
    ep.Register(ctrl, kCtrlBytes * 2);
    ep.Connect(dest, nullptr, 0);
    for (Test t : o.tests) {
        for (uint32_t size : o.sizes) {
            if (t == Test::WriteLat && size == 0) continue;
            uint32_t iters = o.iters ? o.iters : DefaultIters(t, size);
            uint32_t warmup = o.warmup ? o.warmup : std::max<uint32_t>(iters / 10, 10);
            uint32_t total = iters + warmup;
            size_t slot = std::max<size_t>(size, 1);
            size_t slots = IsLatency(t) ? 2 : o.window;  // latency: receive half, send half
            data = Region();
            ep.Register(data, slot * slots);
            Control c{kControlMagic, static_cast<uint32_t>(t), size, total, o.window, o.blocking ? 1u : 0u};
            BufferAd mine{reinterpret_cast<uint64_t>(data.data()), data.remote_token(), 0};
            std::memcpy(ctrl.data(), &c, sizeof c);
            std::memcpy(ctrl.data() + sizeof c, &mine, sizeof mine);
            PostRecv(ep, ctrl, kCtrlBytes, kCtrlBytes);
            PostSend(ep, ctrl, 0, sizeof c + sizeof mine);
            ep.NextOf(Nd2RequestTypeReceive, false);
            BufferAd peer;
            std::memcpy(&peer, ctrl.data() + kCtrlBytes, sizeof peer);

            Result res{t, size, iters, o.blocking, {}, 0, 0, 0};
            res.samples_us.reserve(iters);
            uint64_t start = 0;
            auto sample = [&](uint32_t i, uint64_t t0, double divide) {
                if (i == warmup) start = t0;
                if (i >= warmup) res.samples_us.push_back((NowNs() - t0) / 1000.0 / divide);
            };
            switch (t) {
            case Test::SendLat:
                for (uint32_t i = 0; i < total; ++i) {
                    uint64_t t0 = NowNs();
                    PostRecv(ep, data, 0, size);
                    PostSend(ep, data, 0, size, ND_OP_FLAG_SILENT_SUCCESS);
                    ep.NextOf(Nd2RequestTypeReceive, o.blocking);
                    sample(i, t0, 2.0);
                }
                break;
            case Test::WriteLat:
                for (uint32_t i = 0; i < total; ++i) {
                    char mark = static_cast<char>(i % 255 + 1);
                    uint64_t t0 = NowNs();
                    data.data()[slot + size - 1] = mark;
                    PostRdma(ep, true, data, slot, size, peer, 0, ND_OP_FLAG_SILENT_SUCCESS);
                    SpinForByte(data, size, mark);
                    sample(i, t0, 2.0);
                }
                break;
            case Test::ReadLat:
                for (uint32_t i = 0; i < total; ++i) {
                    uint64_t t0 = NowNs();
                    PostRdma(ep, false, data, 0, size, peer, 0);
                    ep.NextOf(Nd2RequestTypeRead, false);
                    sample(i, t0, 1.0);
                }
                break;
            case Test::SendBw:
            case Test::WriteBw:
            case Test::ReadBw: {
                ND2_REQUEST_TYPE type = t == Test::SendBw    ? Nd2RequestTypeSend
                                        : t == Test::WriteBw ? Nd2RequestTypeWrite
                                                             : Nd2RequestTypeRead;
                uint32_t posted = 0, done = 0;
                uint64_t round = NowNs();
                auto post = [&] {
                    size_t off = (posted % slots) * slot;
                    if (t == Test::SendBw)
                        PostSend(ep, data, off, size);
                    else
                        PostRdma(ep, t == Test::WriteBw, data, off, size, peer, off);
                    ++posted;
                };
                while (posted < std::min(total, o.window)) post();
                while (done < total) {
                    ep.NextOf(type, false);
                    ++done;
                    if (done == warmup) start = NowNs();
                    if (done > warmup && (done - warmup) % o.window == 0) {
                        uint64_t now = NowNs();
                        res.samples_us.push_back((now - round) / 1000.0);
                        round = now;
                    }
                    if (posted < total) post();
                }
                res.seconds = (NowNs() - start) / 1e9;
                res.messages = iters;
                res.bytes = uint64_t(iters) * size;
                break;
            }
            }
            if (IsLatency(t)) res.seconds = (NowNs() - start) / 1e9;
            results->push_back(std::move(res));
        }
    }
    Control done{kControlMagic, kDone, 0, 0, 0, 0};
    std::memcpy(ctrl.data(), &done, sizeof done);
    PostSend(ep, ctrl, 0, sizeof done);
    ep.NextOf(Nd2RequestTypeSend, false);
    ep.Disconnect();
    return 0;
}

}  // namespace ndperf
