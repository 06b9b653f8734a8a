// ndperf loop: send_lat with both endpoints in this process, driven by one
// thread. Each iteration is a whole ping-pong (post a receive, send, take
// the peer's receive completion, answer), so no byte crosses between cores
// and no thread waits for another: the figure is what the provider's own
// software costs per message (posting, delivery, completion), the part of
// a two-process send_lat that is not the cores' link. Compare the two to see
// where a latency goes.
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>

#include "endpoint.h"

namespace ndperf {
namespace {

constexpr uint32_t kDepth = 64;

// Connects `client` to `server` through a listener on `local`; the server's
// side is accepted on a helper thread, which has ended on return.
void ConnectPair(std::shared_ptr<Adapter> adapter, const opennd::net::IpAddress &local, Endpoint &client, Endpoint &server) {
    Listener listener;
    opennd::net::IpAddress dest = local;
    opennd::net::SetPort(dest.sa(), listener.Listen(adapter, local, 0));
    client.Open(adapter, kDepth);
    std::exception_ptr failed;
    std::thread accept([&] {
        try {
            IND2Connector *c = listener.NewConnector();
            Hello hello;
            if (!listener.Next(c, &hello, 30000)) {
                c->Release();
                throw std::runtime_error("the loop's own connection request never came");
            }
            server.Open(adapter, kDepth, c);
            server.Accept();
        } catch (...) {
            failed = std::current_exception();
        }
    });
    try {
        client.Connect(dest, Hello{kHelloMagic, static_cast<uint32_t>(Mode::Loop), 0, 1});
    } catch (...) {
        accept.join();
        throw;
    }
    accept.join();
    if (failed) std::rethrow_exception(failed);
}

}  // namespace

int RunLoop(const Options &o, std::vector<Result> *results) {
    opennd::net::IpAddress local = ParseAddressOrThrow(o.address);
    auto adapter = std::make_shared<Adapter>();
    adapter->Open(local, o.provider);
    adapter->CheckTransport(o.transport);
    Endpoint a, b;
    ConnectPair(adapter, local, a, b);
    size_t row = 0;
    for (uint32_t size : o.sizes) {
        uint32_t iters = o.iters ? o.iters : size <= 4096 ? 200000 : size <= (1u << 20) ? 2000 : 100;
        uint32_t warmup = o.warmup ? o.warmup : std::max<uint32_t>(iters / 10, 10);
        Progress(o, "[" + std::to_string(++row) + "/" + std::to_string(o.sizes.size()) + "] loop send_lat " +
                        SizeText(size));
        Region ra, rb;
        a.Register(ra, size);
        b.Register(rb, size);
        Result res;
        Label(o, *adapter, &res);
        res.test = TestName(Test::SendLat);
        res.loop = true;
        res.size = size;
        res.iters = iters;
        res.samples_us.reserve(iters / 16 + 1);
        PostRecv(b, rb, 0, size);
        // A sample is a batch of kBatch round trips: one costs a few hundred
        // ns, near the clock's own cost and resolution here.
        constexpr uint32_t kBatch = 16;
        uint64_t start = 0, last = SampleTicks();
        const uint32_t total = iters + warmup;
        for (uint32_t i = 0; i < total; ++i) {
            PostRecv(a, ra, 0, size);
            PostSend(a, ra, 0, size, ND_OP_FLAG_SILENT_SUCCESS);
            b.NextOf(Nd2RequestTypeReceive, false);
            if (i + 1 < total) PostRecv(b, rb, 0, size);
            PostSend(b, rb, 0, size, ND_OP_FLAG_SILENT_SUCCESS);
            a.NextOf(Nd2RequestTypeReceive, false);
            if (i + 1 == warmup) start = last = SampleTicks();
            if (i >= warmup && ((i + 1 - warmup) % kBatch == 0 || i + 1 == total)) {
                uint64_t now = SampleTicks();
                uint32_t n = (i + 1 - warmup) % kBatch ? (i + 1 - warmup) % kBatch : kBatch;
                res.samples_us.push_back(TicksToUs(now - last) / 2 / n);  // half a round trip, as send_lat
                last = now;
            }
        }
        res.seconds = TicksToUs(last - start) / 1e6;
        res.clock = SampleClockName();
        res.messages = iters;
        res.bytes = uint64_t(iters) * size;
        results->push_back(std::move(res));
    }
    a.Disconnect();
    b.Disconnect();
    return 0;
}

}  // namespace ndperf
