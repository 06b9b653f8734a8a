// Bandwidth and message rate: every connection keeps `window` requests in
// flight; `threads` threads share the connections (connection i belongs to
// thread i % threads), each polling its own connections' CQs in turn. The
// measured phase starts when every thread has finished its warm-up; the
// figure is the aggregate over all connections, from the first thread's
// start to the last thread's end.
#include <algorithm>
#include <barrier>
#include <stdexcept>
#include <thread>

#include "endpoint.h"

namespace ndperf {
namespace {

constexpr uint64_t kStallNs = 10'000'000'000ull;

std::vector<Endpoint *> Share(const std::vector<Endpoint *> &eps, uint32_t threads, uint32_t k) {
    std::vector<Endpoint *> mine;
    for (size_t i = k; i < eps.size(); i += threads) mine.push_back(eps[i]);
    return mine;
}

// Client: `count` operations on each of `mine`; a sample per window round.
void Drive(const std::vector<Endpoint *> &mine, const StreamPlan &p, uint32_t count, std::vector<double> *samples) {
    size_t n = mine.size();
    std::vector<uint32_t> posted(n), done(n);
    std::vector<uint64_t> round(n, NowNs());
    // --cq-mod: every cq_mod-th request (and the last) asks for a
    // completion, the others are silent; a completion stands for the
    // requests up to it (a QP completes in order).
    auto post = [&](size_t i) {
        size_t off = (posted[i] % p.slots) * p.slot;
        uint32_t seq = posted[i] + 1;
        ULONG flags = p.cq_mod > 1 && seq % p.cq_mod != 0 && seq != count ? ND_OP_FLAG_SILENT_SUCCESS : 0;
        if (p.test == Test::SendBw)
            PostSend(*mine[i], *p.local, off, p.size, flags);
        else
            PostRdma(*mine[i], p.test == Test::WriteBw, *p.local, off, p.size, p.peer, off, flags);
        ++posted[i];
    };
    for (size_t i = 0; i < n; ++i)
        while (posted[i] < std::min(count, p.window)) post(i);
    size_t finished = 0;
    uint64_t last = NowNs();
    for (uint64_t spins = 0; finished < n; ++spins) {
        bool progress = false;
        for (size_t i = 0; i < n; ++i) {
            ND2_RESULT r;
            for (uint32_t k = 0; k < p.window && done[i] < count && mine[i]->Poll(&r); ++k) {
                progress = true;
                uint32_t before = done[i];
                done[i] = std::min(count, done[i] + std::max(p.cq_mod, 1u));
                if (samples && done[i] / p.window != before / p.window) {
                    uint64_t now = NowNs();
                    samples->push_back((now - round[i]) / 1000.0);
                    round[i] = now;
                }
                while (posted[i] < count && posted[i] - done[i] < p.window) post(i);
                if (done[i] == count) ++finished;
            }
        }
        if (progress) {
            if ((spins & 255) == 0) last = NowNs();
        } else if ((spins & 4095) == 0) {
            uint64_t now = NowNs();
            if (now - last > kStallNs) throw std::runtime_error("no completion within the timeout");
        }
    }
}

// Server of send_bw: consume p.iters messages on each of `mine`.
void Consume(const std::vector<Endpoint *> &mine, const StreamPlan &p, std::vector<uint32_t *> posted) {
    size_t n = mine.size(), finished = 0;
    std::vector<uint32_t> done(n);
    uint64_t last = NowNs();
    for (uint64_t spins = 0; finished < n; ++spins) {
        bool progress = false;
        for (size_t i = 0; i < n; ++i) {
            ND2_RESULT r;
            for (uint32_t k = 0; k < p.window && done[i] < p.iters && mine[i]->Poll(&r); ++k) {
                progress = true;
                if (r.RequestType != Nd2RequestTypeReceive) continue;
                if (*posted[i] < p.iters) {
                    PostRecv(*mine[i], *p.local, (*posted[i] % p.slots) * p.slot, p.size);
                    if (++*posted[i] == p.iters && mine[i] == p.first && p.after_last_receive) p.after_last_receive();
                }
                if (++done[i] == p.iters) ++finished;
            }
        }
        if (progress) {
            if ((spins & 255) == 0) last = NowNs();
        } else if ((spins & 4095) == 0 && NowNs() - last > kStallNs) {
            throw std::runtime_error("send_bw: no message within the timeout");
        }
    }
}

// Runs body(k) on `threads` threads; rethrows the first error.
template <typename F>
void OnThreads(uint32_t threads, F body) {
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (uint32_t k = 0; k < threads; ++k)
        pool.emplace_back([&, k] {
            try {
                body(k);
            } catch (const std::exception &e) {
                errors[k] = e.what();
            }
        });
    for (auto &t : pool) t.join();
    for (const auto &e : errors)
        if (!e.empty()) throw std::runtime_error(e);
}

}  // namespace

void PostRecv(Endpoint &ep, Region &r, size_t offset, size_t len) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = ep.qp()->Receive(nullptr, &s, len ? 1 : 0);
    if (FAILED(hr)) throw std::runtime_error("Receive failed: " + StatusName(hr));
}

void PostSend(Endpoint &ep, Region &r, size_t offset, size_t len, ULONG flags) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = ep.qp()->Send(nullptr, &s, len ? 1 : 0, flags);
    if (FAILED(hr)) throw std::runtime_error("Send failed: " + StatusName(hr));
}

void PostRdma(Endpoint &ep, bool write, Region &r, size_t offset, size_t len, const BufferAd &peer, size_t peer_off,
              ULONG flags) {
    ND2_SGE s{r.data() + offset, static_cast<ULONG>(len), r.local_token()};
    HRESULT hr = write ? ep.qp()->Write(nullptr, &s, 1, peer.address + peer_off, peer.token, flags)
                       : ep.qp()->Read(nullptr, &s, 1, peer.address + peer_off, peer.token, flags);
    if (FAILED(hr)) throw std::runtime_error(std::string(write ? "Write" : "Read") + " failed: " + StatusName(hr));
}

size_t StreamSlots(Test t, uint32_t size, uint32_t window, uint32_t working_set) {
    if (IsLatency(t)) return 2;  // latency: receive half, send half
    size_t slot = std::max<size_t>(size, 1);  // messages share slots: bandwidth, not data, is measured
    return std::clamp<size_t>(working_set / slot, 1, window);
}

void RunStreamClient(const std::vector<Endpoint *> &eps, uint32_t threads, const StreamPlan &p, Result *res) {
    threads = std::clamp<uint32_t>(threads, 1, static_cast<uint32_t>(eps.size()));
    std::vector<std::vector<double>> samples(threads);
    std::vector<uint64_t> start(threads), end(threads);
    std::barrier sync(threads);
    OnThreads(threads, [&](uint32_t k) {
        std::vector<Endpoint *> mine = Share(eps, threads, k);
        try {
            if (p.warmup) Drive(mine, p, p.warmup, nullptr);
        } catch (...) {
            sync.arrive_and_drop();  // the others go on; the error is reported after
            throw;
        }
        sync.arrive_and_wait();
        start[k] = NowNs();
        Drive(mine, p, p.iters, &samples[k]);
        end[k] = NowNs();
    });
    res->qps = static_cast<uint32_t>(eps.size());
    res->threads = threads;
    for (auto &s : samples) res->samples_us.insert(res->samples_us.end(), s.begin(), s.end());
    res->seconds = (*std::max_element(end.begin(), end.end()) - *std::min_element(start.begin(), start.end())) / 1e9;
    res->messages = uint64_t(p.iters) * eps.size();
    res->bytes = res->messages * p.size;
}

void PrimeStreamServer(const std::vector<Endpoint *> &eps, const StreamPlan &p, std::vector<uint32_t> *posted) {
    posted->assign(eps.size(), 0);
    if (p.test != Test::SendBw) return;
    // As many receives as the queue holds (perftest's rx depth is 512 too),
    // not just a window: with no RNR (iWARP) a Send that finds none ends the
    // connection, and a sender whose Sends complete once on the wire gets
    // ahead of the receiver by more than its window.
    for (size_t i = 0; i < eps.size(); ++i)
        for (uint32_t &n = (*posted)[i]; n < std::min(p.iters, kQueueDepth); ++n)
            PostRecv(*eps[i], *p.local, (n % p.slots) * p.slot, p.size);
}

void RunStreamServer(const std::vector<Endpoint *> &eps, uint32_t threads, const StreamPlan &p,
                     std::vector<uint32_t> *posted) {
    if (p.test != Test::SendBw) return;  // Write and Read are one-sided
    threads = std::clamp<uint32_t>(threads, 1, static_cast<uint32_t>(eps.size()));
    OnThreads(threads, [&](uint32_t k) {
        std::vector<uint32_t *> counts;
        for (size_t i = k; i < eps.size(); i += threads) counts.push_back(&(*posted)[i]);
        Consume(Share(eps, threads, k), p, counts);
    });
}

}  // namespace ndperf
