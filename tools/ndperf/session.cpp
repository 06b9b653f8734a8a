// The perf session. The client connects --qps connections (each says in its
// private data which one it is), then drives: before each test it sends a
// Control message on connection 0; the server prepares, answers with its
// buffer, and plays its part. Latency tests run on connection 0, one sample
// per iteration; bandwidth tests on all connections (stream.cpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "endpoint.h"

namespace ndperf {
namespace {

constexpr size_t kCtrlBytes = 64;

uint32_t DefaultIters(Test t, uint32_t size) {
    if (IsLatency(t)) return size <= 4096 ? 20000 : size <= (1u << 20) ? 2000 : 100;
    return size <= 4096 ? 100000 : size <= (1u << 20) ? 2000 : 200;
}

// Spins until the last byte of `r` (size `len`) equals `value`, with no
// provider call: RDMA Write puts its last byte last. The clock is read only
// once the wait is long (as Endpoint::Next): where the kernel keeps time
// with a slow clock (HPET in an emulated VM: a system call and an emulated
// device read), a read on every message was part of every round trip.
void SpinForByte(Region &r, size_t len, char value) {
    volatile char *last = r.data() + len - 1;
    uint64_t deadline = 0;
    for (uint64_t spins = 1; *last != value; ++spins) {
        if (spins & 0xFFFF) continue;
        const uint64_t now = NowNs();
        if (!deadline) deadline = now + 10'000'000'000ull;
        if (now > deadline) throw std::runtime_error("write_lat: the peer's Write never landed");
    }
}

std::vector<Endpoint *> Pointers(const std::vector<std::unique_ptr<Endpoint>> &eps) {
    std::vector<Endpoint *> out;
    for (const auto &e : eps) out.push_back(e.get());
    return out;
}

// The server's part of one latency test on connection 0. send_lat: `posted`
// receives went in before the answer; `last_posted` runs right after the
// last of the test's receives is posted.
void ServeLatency(Endpoint &ep, Region &data, const Control &c, const BufferAd &peer, size_t slot, uint32_t posted,
                  const std::function<void()> &last_posted) {
    auto post = [&] {
        PostRecv(ep, data, 0, c.size);
        if (++posted == c.iters) last_posted();
    };
    switch (static_cast<Test>(c.test)) {
    case Test::SendLat:
        for (uint32_t i = 0; i < c.iters; ++i) {
            ep.NextOf(Nd2RequestTypeReceive, c.blocking);
            if (c.order & kOrderRecvFirst) {  // perftest's order: the next message's receive, then the answer
                if (i + 1 < c.iters) post();
                PostSend(ep, data, 0, c.size, ND_OP_FLAG_SILENT_SUCCESS);
            } else {  // the answer first; the receive for message i + 2 (two stay posted ahead)
                PostSend(ep, data, 0, c.size, ND_OP_FLAG_SILENT_SUCCESS);
                if (i + 2 < c.iters) post();
            }
        }
        break;
    case Test::WriteLat:
        for (uint32_t i = 0; i < c.iters; ++i) {
            char mark = static_cast<char>(i % 255 + 1);
            SpinForByte(data, c.size, mark);
            data.data()[slot + c.size - 1] = mark;
            if (c.order & kOrderSignaled) {
                PostRdma(ep, true, data, slot, c.size, peer, 0);
                ep.NextOf(Nd2RequestTypeWrite, c.blocking);
            } else {
                PostRdma(ep, true, data, slot, c.size, peer, 0, ND_OP_FLAG_SILENT_SUCCESS);
            }
        }
        break;
    default: break;  // Read latency: one-sided
    }
}

int ServePerf(std::shared_ptr<Adapter> adapter, Listener &listener, IND2Connector *first, const Hello &hello) {
    std::vector<std::unique_ptr<Endpoint>> eps;
    eps.push_back(std::make_unique<Endpoint>());
    eps[0]->Open(adapter, kQueueDepth, first);
    Endpoint &ep = *eps[0];
    Region ctrl, data;
    ep.Register(ctrl, kCtrlBytes * 2);
    PostRecv(ep, ctrl, 0, kCtrlBytes);  // before Accept: the first Control never waits for it
    ep.Accept();
    for (uint32_t i = 1; i < hello.count; ++i) {
        IND2Connector *c = listener.NewConnector();
        Hello h;
        if (!listener.Next(c, &h, 30000)) {
            c->Release();
            throw std::runtime_error("the client's connection " + std::to_string(i) + " never came");
        }
        eps.push_back(std::make_unique<Endpoint>());
        eps.back()->Open(adapter, kQueueDepth, c);
        eps.back()->Accept();
    }
    for (;;) {
        // Between tests the server sleeps (Notify + completion port) rather
        // than spins: during Write and Read bandwidth tests it has nothing
        // to do, as perftest's server, and a spinning thread on the other
        // hyperthread of the copying core costs the copy up to 10%.
        ND2_RESULT r = ep.NextOf(Nd2RequestTypeReceive, true);
        Control c;
        std::memcpy(&c, ctrl.data(), sizeof c);
        if (r.BytesTransferred < sizeof c || c.magic != kControlMagic) throw std::runtime_error("bad control message");
        if (c.test == kDone) {  // acknowledged, so the client disconnects only after we have it all
            PostSend(ep, ctrl, kCtrlBytes, 4);
            ep.NextOf(Nd2RequestTypeSend, false);
            break;
        }
        BufferAd peer;
        std::memcpy(&peer, ctrl.data() + sizeof c, sizeof peer);
        Test t = static_cast<Test>(c.test);
        std::vector<Endpoint *> active = Pointers(eps);
        active.resize(std::clamp<size_t>(c.qps, 1, eps.size()));
        StreamPlan plan{t, c.size, 0, c.iters, std::max(c.window, 1u), std::max<size_t>(c.size, 1),
                        StreamSlots(t, c.size, c.window, c.working_set), &data, peer};
        ep.Register(data, plan.slot * plan.slots);
        // Receives for the data phase go in before the answer.
        std::vector<uint32_t> posted;
        uint32_t ahead = 0;
        // send_lat: the first message's, and the second's unless the client
        // posts each before answering (ServeLatency).
        if (t == Test::SendLat) ahead = !(c.order & kOrderRecvFirst) && c.iters > 1 ? 2 : 1;
        for (uint32_t k = 0; k < ahead; ++k) PostRecv(ep, data, 0, c.size);
        if (!IsLatency(t)) PrimeStreamServer(active, plan, &posted);
        // The next control message's receive goes in behind this test's last
        // data receive, not after the test: the client sends that message as
        // soon as the test is over, and iWARP has no RNR to wait for a late
        // receive (siw Terminates the connection).
        bool ctrl_posted = false;
        auto post_ctrl = [&] {
            PostRecv(ep, ctrl, 0, kCtrlBytes);
            ctrl_posted = true;
        };
        const uint32_t before = t == Test::SendLat ? ahead : t == Test::SendBw ? posted[0] : c.iters;
        if (before >= c.iters) post_ctrl();
        plan.first = &ep;
        plan.after_last_receive = post_ctrl;
        BufferAd mine{reinterpret_cast<uint64_t>(data.data()), data.remote_token(), 0};
        std::memcpy(ctrl.data() + kCtrlBytes, &mine, sizeof mine);
        PostSend(ep, ctrl, kCtrlBytes, sizeof mine);
        ep.NextOf(Nd2RequestTypeSend, false);
        if (IsLatency(t))
            ServeLatency(ep, data, c, peer, plan.slot, ahead, post_ctrl);
        else
            RunStreamServer(active, c.threads, plan, &posted);
        if (!ctrl_posted) post_ctrl();
    }
    for (auto &e : eps) e->Disconnect();
    return 0;
}

}  // namespace

int RunServer(Options &o) {
    opennd::net::IpAddress local = ParseAddressOrThrow(o.address);
    auto adapter = std::make_shared<Adapter>();
    adapter->Open(local, o.provider);
    Listener listener;
    uint16_t port = listener.Listen(adapter, local, o.port);
    if (o.port_fd >= 0) {
        bool ok = write(o.port_fd, &port, sizeof port) == sizeof port;
        close(o.port_fd);
        o.port_fd = -1;  // started: errors go to stderr from now on
        if (!ok) return 1;
    } else {
        std::printf("ndperf server listening on %s port %u\n", o.address.c_str(), port);
        std::fflush(stdout);
    }
    IND2Connector *first = listener.NewConnector();
    Hello hello;
    listener.Next(first, &hello, 0);  // the server waits for a client
    if (hello.mode == static_cast<uint32_t>(Mode::ConnectRate)) return ServeConnectRate(adapter, listener, first, hello);
    return ServePerf(adapter, listener, first, hello);
}

int RunClient(const Options &o, std::vector<Result> *results) {
    opennd::net::IpAddress dest = ParseAddressOrThrow(o.address), local = LocalAddressFor(dest);
    opennd::net::SetPort(dest.sa(), o.port);
    auto adapter = std::make_shared<Adapter>();
    adapter->Open(local, o.provider);
    adapter->CheckTransport(o.transport);
    std::vector<std::unique_ptr<Endpoint>> eps;
    for (uint32_t i = 0; i < o.qps; ++i) {
        eps.push_back(std::make_unique<Endpoint>());
        eps.back()->Open(adapter, kQueueDepth);
    }
    Endpoint &ep = *eps[0];
    Region ctrl, data;
    ep.Register(ctrl, kCtrlBytes * 2);
    for (uint32_t i = 0; i < o.qps; ++i)
        eps[i]->Connect(dest, Hello{kHelloMagic, static_cast<uint32_t>(Mode::Perf), i, o.qps});
    // Sends the Control and takes the server's answer (both completions, so
    // none is left over for the data phase).
    auto exchange = [&](const Control &c, const BufferAd &mine, BufferAd *peer) {
        std::memcpy(ctrl.data(), &c, sizeof c);
        std::memcpy(ctrl.data() + sizeof c, &mine, sizeof mine);
        PostRecv(ep, ctrl, kCtrlBytes, kCtrlBytes);
        PostSend(ep, ctrl, 0, sizeof c + sizeof mine);
        ep.NextOf(Nd2RequestTypeReceive, false);
        ep.NextOf(Nd2RequestTypeSend, false);
        if (peer) std::memcpy(peer, ctrl.data() + kCtrlBytes, sizeof *peer);
    };
    size_t rows = 0, row = 0;
    for (Test t : o.tests) rows += o.sizes.size() * (IsLatency(t) ? 1 : o.threads.size());
    for (Test t : o.tests) {
        for (uint32_t size : o.sizes) {
            if (t == Test::WriteLat && size == 0) continue;
            for (uint32_t threads : IsLatency(t) ? std::vector<uint32_t>{1} : o.threads) {
                uint32_t iters = o.iters ? o.iters : DefaultIters(t, size);
                uint32_t warmup = o.warmup ? o.warmup : std::max<uint32_t>(iters / 10, 10);
                uint32_t total = iters + warmup;
                uint32_t qps = IsLatency(t) ? 1 : o.qps;
                threads = std::min(threads, qps);
                Progress(o, "[" + std::to_string(++row) + "/" + std::to_string(rows) + "] " + TestName(t) + " " +
                                SizeText(size) + (qps > 1 ? ", " + std::to_string(qps) + " QPs" : "") +
                                (threads > 1 ? ", " + std::to_string(threads) + " threads" : ""));
                StreamPlan plan{t, size, warmup, iters, o.window, std::max<size_t>(size, 1),
                                StreamSlots(t, size, o.window, o.working_set), &data, {}};
                ep.Register(data, plan.slot * plan.slots);
                Control c{kControlMagic, static_cast<uint32_t>(t), size, total, o.window, o.blocking ? 1u : 0u,
                          qps, threads, o.working_set,
                          (o.recv_first ? kOrderRecvFirst : 0u) | (o.signaled ? kOrderSignaled : 0u)};
                exchange(c, BufferAd{reinterpret_cast<uint64_t>(data.data()), data.remote_token(), 0}, &plan.peer);
                plan.cq_mod = IsLatency(t) ? 1 : o.cq_mod;
                const BufferAd &peer = plan.peer;
                size_t slot = plan.slot;

                Result res;
                Label(o, *adapter, &res);
                res.test = TestName(t);
                res.latency = IsLatency(t);
                res.size = size;
                res.iters = iters;
                res.blocking = o.blocking;
                res.recv_first = o.recv_first && t == Test::SendLat;
                res.signaled = o.signaled && t == Test::WriteLat;
                if (!IsLatency(t)) {
                    res.working_set = plan.slot * plan.slots;
                    res.window = plan.window;
                    res.cq_mod = plan.cq_mod;
                }
                res.samples_us.reserve(IsLatency(t) ? iters : 0);
                // One clock read per iteration, as perftest takes its
                // timestamps: iteration i runs from one read to the next, so
                // a sample also holds the loop's own few instructions, and
                // the clock (the time-stamp counter where it can be trusted:
                // sample_clock.cpp) is read once per round trip, not twice.
                // It is read right after the request goes out, while it is
                // on its way: a clock that costs a system call (HPET in an
                // emulated VM) then overlaps the flight instead of delaying
                // the next request, and the samples still span one round
                // trip each.
                uint64_t start = 0, last = SampleTicks();
                auto lap = [&](uint32_t i, double divide) {
                    uint64_t now = SampleTicks();
                    if (i == warmup) start = last;
                    if (i >= warmup) res.samples_us.push_back(TicksToUs(now - last) / divide);
                    last = now;
                };
                res.clock = SampleClockName();
                switch (t) {
                case Test::SendLat:
                    // Each answer's receive is posted before the message it
                    // answers goes out: the first here, the next ones just
                    // after each Send (off the round trip, as ucx_perftest's
                    // tag_lat posts its receive) or, with --recv-first,
                    // just before it (perftest's order).
                    if (!o.recv_first) PostRecv(ep, data, 0, size);
                    for (uint32_t i = 0; i < total; ++i) {
                        if (o.recv_first) PostRecv(ep, data, 0, size);
                        PostSend(ep, data, 0, size, ND_OP_FLAG_SILENT_SUCCESS);
                        lap(i, 2.0);
                        if (!o.recv_first && i + 1 < total) PostRecv(ep, data, 0, size);
                        ep.NextOf(Nd2RequestTypeReceive, o.blocking);
                    }
                    break;
                case Test::WriteLat:
                    for (uint32_t i = 0; i < total; ++i) {
                        char mark = static_cast<char>(i % 255 + 1);
                        data.data()[slot + size - 1] = mark;
                        PostRdma(ep, true, data, slot, size, peer, 0, o.signaled ? 0 : ND_OP_FLAG_SILENT_SUCCESS);
                        lap(i, 2.0);
                        if (o.signaled) ep.NextOf(Nd2RequestTypeWrite, o.blocking);
                        SpinForByte(data, size, mark);
                    }
                    break;
                case Test::ReadLat:
                    for (uint32_t i = 0; i < total; ++i) {
                        PostRdma(ep, false, data, 0, size, peer, 0);
                        lap(i, 1.0);
                        ep.NextOf(Nd2RequestTypeRead, o.blocking);
                    }
                    break;
                default:
                    RunStreamClient(Pointers(eps), threads, plan, &res);
                    break;
                }
                if (IsLatency(t)) {
                    res.seconds = TicksToUs(last - start) / 1e6;
                    res.messages = iters;
                    res.bytes = uint64_t(iters) * size;
                }
                results->push_back(std::move(res));
            }
        }
    }
    Control done{kControlMagic, kDone, 0, 0, 0, 0, 0, 0, 0, 0};
    exchange(done, BufferAd{}, nullptr);  // the answer: the server has everything
    for (auto &e : eps) e->Disconnect();
    return 0;
}

}  // namespace ndperf
