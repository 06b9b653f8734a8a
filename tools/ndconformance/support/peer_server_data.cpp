// The peer process's data and connection-setup verbs that take more than
// a line: serving and making connections, posting, reaping, spinning on
// memory, streams, echo, sinks and simultaneous connects.
#include <unistd.h>

#include "support/peer_server.h"
#include "support/simultaneous.h"

namespace ndc::peer_server {

Msg Server::Serve(const Msg &m) {
    auto lit = listeners_.find(m.Str("l", "l"));
    Need(lit != listeners_.end(), "no listener");
    Listener &l = *lit->second;
    size_t n = m.U64("n", 1), window = std::max<uint64_t>(1, m.U64("window", 16));
    ULONG in = static_cast<ULONG>(m.U64("in", 8)), out = static_cast<ULONG>(m.U64("out", 8));
    std::vector<uint8_t> pd = FromHex(m.Str("pd"));
    size_t first = conns_.size();
    struct Slot {
        PConn *pc;
        std::unique_ptr<Ov> ov;
        int stage;  // 0: waiting for a request, 1: accepting
    };
    std::vector<Slot> active;
    size_t started = 0, done = 0;
    HRESULT status = ND_SUCCESS;
    Deadline d(WaitMs() + n * 50);
    Backoff b;
    while (done < n) {
        while (started < n && active.size() < window) {
            PConn &pc = NewConn(m);
            auto ov = std::make_unique<Ov>(false);
            HRESULT hr = l.listener->GetConnectionRequest(pc.c.connector.get(), ov.get());
            if (hr != ND_PENDING && hr != ND_SUCCESS) throw PeerError{"GetConnectionRequest: " + StatusName(hr)};
            active.push_back(Slot{&pc, std::move(ov), hr == ND_SUCCESS ? 2 : 0});
            ++started;
        }
        bool progressed = false;
        for (size_t i = 0; i < active.size();) {
            Slot &s = active[i];
            HRESULT hr = ND_PENDING;
            if (s.stage == 0) {
                hr = l.listener->GetOverlappedResult(s.ov.get(), FALSE);
                if (hr == ND_SUCCESS) s.stage = 2;
            } else if (s.stage == 1) {
                hr = s.pc->c.connector->GetOverlappedResult(s.ov.get(), FALSE);
            }
            if (s.stage == 2) {  // request in hand: accept
                s.ov->Reuse();
                s.stage = 1;
                hr = s.pc->c.connector->Accept(s.pc->c.qp.get(), in, out, pd.empty() ? nullptr : pd.data(),
                                               static_cast<ULONG>(pd.size()), s.ov.get());
                progressed = true;
                if (hr == ND_PENDING) {
                    ++i;
                    continue;
                }
            }
            if (hr == ND_PENDING) {
                ++i;
                continue;
            }
            progressed = true;
            if (FAILED(hr) && SUCCEEDED(status)) status = hr;
            ++done;
            active.erase(active.begin() + static_cast<long>(i));
        }
        if (d.Expired()) {
            for (Slot &s : active) {
                if (s.stage == 0)
                    Finish(l.listener.get(), s.ov.get(), ND_PENDING, 1);
                else
                    Finish(s.pc->c.connector.get(), s.ov.get(), ND_PENDING, 1);
            }
            throw PeerError{"serve: only " + std::to_string(done) + " of " + std::to_string(n) +
                            " connections finished in time"};
        }
        if (progressed)
            b.Reset();
        else
            b.Pause();
    }
    return Ok().Set("c", static_cast<uint64_t>(first)).Set("n", static_cast<uint64_t>(n)).Set("status",
                                                                                             static_cast<int64_t>(status));
}

Msg Server::Connect(const Msg &m) {
    PConn &pc = NewConn(m);
    size_t index = conns_.size() - 1;
    IpAddress dest = WithPort(ParseIp(m.Str("addr")), static_cast<uint16_t>(m.U64("port")));
    std::vector<uint8_t> pd = FromHex(m.Str("pd"));
    HRESULT hr = pc.c.Connect(dest, pd.empty() ? nullptr : pd.data(), static_cast<ULONG>(pd.size()),
                              static_cast<ULONG>(m.U64("in", 8)), static_cast<ULONG>(m.U64("out", 8)), false);
    Msg r = Ok();
    if (SUCCEEDED(hr)) {
        r = RequestInfo(pc, index);
        if (m.U64("complete", 1)) {
            if (m.Has("delay")) SleepMs(m.U64("delay"));
            hr = pc.c.CompleteConnect();
        }
    }
    r.Set("c", static_cast<uint64_t>(index));
    return r.Set("status", static_cast<int64_t>(hr));
}

Msg Server::ConnectMany(const Msg &m) {
    size_t n = m.U64("n", 1), first = conns_.size();
    IpAddress dest = WithPort(ParseIp(m.Str("addr")), static_cast<uint16_t>(m.U64("port")));
    std::vector<std::unique_ptr<Ov>> ovs;
    std::vector<HRESULT> st(n, ND_PENDING);
    for (size_t i = 0; i < n; ++i) {
        PConn &pc = NewConn(m);
        IpAddress local = WithPort(node_.local, 0);
        NeedHr(pc.c.connector->Bind(local.sa(), local.length()), "Connector::Bind");
        ovs.push_back(std::make_unique<Ov>(false));
        st[i] = pc.c.connector->Connect(pc.c.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, ovs.back().get());
    }
    for (size_t i = 0; i < n; ++i) {
        PConn &pc = *conns_[first + i];
        st[i] = Finish(pc.c.connector.get(), ovs[i].get(), st[i], WaitMs() + n * 20);
    }
    size_t ok = 0;
    HRESULT worst = ND_SUCCESS;
    for (size_t i = 0; i < n; ++i) {
        HRESULT hr = st[i];
        if (SUCCEEDED(hr)) hr = conns_[first + i]->c.CompleteConnect();
        if (SUCCEEDED(hr))
            ++ok;
        else if (SUCCEEDED(worst))
            worst = hr;
    }
    return Ok()
        .Set("c", static_cast<uint64_t>(first))
        .Set("count", static_cast<uint64_t>(n))
        .Set("ok", static_cast<uint64_t>(ok))
        .Set("status", static_cast<int64_t>(worst));
}

Msg Server::Send(const Msg &m) {
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t off = m.U64("off"), len = m.U64("len"), n = m.U64("n", 1), stride = m.U64("stride", len);
    ULONG flags = static_cast<ULONG>(m.U64("flags")), nsge = static_cast<ULONG>(m.U64("nsge", 1));
    for (size_t i = 0; i < n; ++i) {
        size_t at = off + i * stride;
        if (m.Has("seed")) FillPattern(mem.data() + at, len, static_cast<uint32_t>(m.U64("seed") + i));
        std::vector<ND2_SGE> sge;
        if (len) {
            size_t per = len / nsge;
            for (ULONG k = 0; k < nsge; ++k) {
                size_t l = k + 1 == nsge ? len - per * k : per;
                sge.push_back(mem.Sge(at + per * k, l));
            }
        }
        HRESULT hr = pc.c.qp->Send(reinterpret_cast<void *>(uint64_t(i)), sge.empty() ? nullptr : sge.data(),
                                   static_cast<ULONG>(sge.size()), flags);
        NeedHr(hr, "Send " + std::to_string(i));
    }
    return Ok();
}

Msg Server::Rdma(const Msg &m, bool write) {
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t off = m.U64("off"), len = m.U64("len");
    ULONG nsge = static_cast<ULONG>(m.U64("nsge", 1));
    std::vector<ND2_SGE> sge;
    if (len) {
        size_t per = len / nsge;
        for (ULONG k = 0; k < nsge; ++k) sge.push_back(mem.Sge(off + per * k, k + 1 == nsge ? len - per * k : per));
    }
    auto fn = write ? &IND2QueuePair::Write : &IND2QueuePair::Read;
    HRESULT hr = (pc.c.qp.get()->*fn)(reinterpret_cast<void *>(m.U64("ctx")), sge.empty() ? nullptr : sge.data(),
                                      static_cast<ULONG>(sge.size()), m.U64("raddr"),
                                      static_cast<UINT32>(m.U64("rtoken")), static_cast<ULONG>(m.U64("flags")));
    return Ok().Set("hr", static_cast<int64_t>(hr));
}

Msg Server::Reap(const Msg &m) {
    PConn &pc = C(m);
    size_t n = m.U64("n", 1);
    auto got = pc.cq.Take(n, m.U64("ms", 0));
    Msg r = Ok();
    r.Set("count", static_cast<uint64_t>(got.size()));
    for (size_t i = 0; i < got.size(); ++i) {
        std::string k = std::to_string(i);
        r.Set("s" + k, static_cast<int64_t>(got[i].Status));
        r.Set("t" + k, static_cast<int64_t>(got[i].RequestType));
        r.Set("b" + k, static_cast<uint64_t>(got[i].BytesTransferred));
        r.Set("x" + k, reinterpret_cast<uint64_t>(got[i].RequestContext));
        r.Set("q" + k, static_cast<uint64_t>(got[i].QueuePairContext == &pc ? 1 : 0));
    }
    if (m.U64("extra", 0)) {
        ND2_RESULT extra;
        if (!pc.cq.Quiet(&extra)) r.Set("extra", Describe(extra));
    }
    return r;
}

Msg Server::SpinLast(const Msg &m) {
    Mem &mem = M(m.Str("mem"));
    size_t off = m.U64("off"), len = m.U64("len");
    uint32_t seed = static_cast<uint32_t>(m.U64("seed"));
    Need(len > 0, "spinlast: empty range");
    const volatile uint8_t *last = reinterpret_cast<const volatile uint8_t *>(mem.data() + off + len - 1);
    uint8_t want = PatternByte(seed, len - 1);
    Deadline d(m.U64("ms", WaitMs()));
    uint64_t t0 = NowUs(), spins = 0;
    // No provider calls while spinning: the data must land by itself.
    while (*last != want) {
        if ((++spins & 0xFFF) == 0) {
            if (d.Expired()) throw PeerError{"the last byte of the RDMA Write never arrived"};
            sched_yield();
        }
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    std::string bad = CheckPattern(mem.data() + off, len, seed);
    Need(bad.empty(), "when the last byte arrived the rest was not in place: " + bad);
    return Ok().Set("us", NowUs() - t0);
}

Msg Server::Stream(const Msg &m) {
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t len = m.U64("len"), n = m.U64("n");
    ch_.Send(Ok());  // the caller wants to act while this runs
    size_t posted = 0, completed = 0, depth = m.U64("depth", 16);
    Deadline d(WaitMs() * 3);
    while (completed < n && !d.Expired()) {
        while (posted < n && posted - completed < depth) {
            if (FAILED(pc.c.PostSend(mem, 0, len))) return Msg("");
            ++posted;
        }
        ND2_RESULT r;
        if (pc.cq.Next(&r, 100)) {
            if (FAILED(r.Status)) return Msg("");
            ++completed;
        }
    }
    return Msg("");  // already replied
}

// RDMA Writes of mem[0, len) to (raddr, rtoken), `depth` in flight, until
// `ms` have passed or one fails. Replies at once: the caller acts meanwhile.
Msg Server::WriteLoop(const Msg &m) {
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t len = m.U64("len"), depth = m.U64("depth", 4);
    ND2_SGE sge = mem.Sge(0, len);
    ch_.Send(Ok());
    size_t outstanding = 0;
    Deadline d(m.U64("ms", 1000));
    while (!d.Expired()) {
        while (outstanding < depth) {
            if (FAILED(pc.c.qp->Write(nullptr, &sge, 1, m.U64("raddr"), static_cast<UINT32>(m.U64("rtoken")), 0)))
                return Msg("");
            ++outstanding;
        }
        ND2_RESULT r;
        if (pc.cq.Next(&r, 100)) {
            --outstanding;
            if (FAILED(r.Status)) break;
        }
    }
    return Msg("");  // already replied
}

Msg Server::Echo(const Msg &m) {
    PConn &pc = C(m);
    Need(pc.rx != nullptr, "echo needs receive buffers (recvs/recvsize at connection time)");
    size_t n = m.U64("n", 1), slot = m.U64("recvsize", 0);
    Need(slot > 0, "echo needs recvsize");
    Mem out(slot);
    NeedHr(out.Register(node_.adapter.get(), node_.file, kAllRights), "Register");
    for (size_t i = 0; i < n; ++i) {
        ND2_RESULT r;
        Need(pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestType == Nd2RequestTypeReceive; }, &r),
             "echo: no message " + std::to_string(i));
        NeedHr(r.Status, "echo: receive " + std::to_string(i));
        // Receives were posted at offsets i*slot in order.
        size_t at = (i % (pc.rx->size() / slot)) * slot;
        std::memcpy(out.data(), pc.rx->data() + at, r.BytesTransferred);
        NeedHr(pc.c.PostReceive(*pc.rx, at, slot), "echo: re-post");
        NeedHr(pc.c.PostSend(out, 0, r.BytesTransferred), "echo: send");
        ND2_RESULT s;
        Need(pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestType == Nd2RequestTypeSend; }, &s),
             "echo: send " + std::to_string(i) + " never completed");
        NeedHr(s.Status, "echo: send " + std::to_string(i));
    }
    return Ok();
}

Msg Server::Sink(const Msg &m) {
    size_t c0 = m.U64("c"), k = m.U64("k", 1), n = m.U64("n", 1), slot = m.U64("len", 64);
    Need(c0 + k <= conns_.size(), "sink: no such connections");
    std::vector<uint64_t> next(k, 0);
    size_t total = 0;
    Deadline d(WaitMs() * 4);
    while (total < n * k) {
        bool any = false;
        for (size_t q = 0; q < k; ++q) {
            PConn &pc = *conns_[c0 + q];
            ND2_RESULT r;
            if (!pc.cq.TryNext(&r)) continue;
            any = true;
            NeedHr(r.Status, "sink: completion on QP " + std::to_string(q));
            if (r.RequestType != Nd2RequestTypeReceive) continue;
            size_t slots = pc.rx->size() / slot;
            size_t at = (next[q] % slots) * slot;
            uint64_t seq;
            std::memcpy(&seq, pc.rx->data() + at, 8);
            Need(seq == next[q], "sink: QP " + std::to_string(q) + " expected message " + std::to_string(next[q]) +
                                     ", got " + std::to_string(seq));
            ++next[q];
            ++total;
            NeedHr(pc.c.PostReceive(*pc.rx, at, slot), "sink: re-post");
        }
        if (!any) {
            if (d.Expired()) throw PeerError{"sink: only " + std::to_string(total) + " messages arrived"};
            sched_yield();
        }
    }
    return Ok();
}

Msg Server::Simul(const Msg &m) {
    auto lit = listeners_.find(m.Str("l", "l"));
    Need(lit != listeners_.end(), "no listener");
    PConn &a = NewConn(m);
    PConn &p = NewConn(m);
    size_t ia = conns_.size() - 2;
    IpAddress dest = WithPort(ParseIp(m.Str("addr")), static_cast<uint16_t>(m.U64("port")));
    SimultaneousResult res = ConnectSimultaneously(node_, *lit->second, a.c, p.c, dest, m.U64("accept", 1) != 0);
    return Ok()
        .Set("active", static_cast<int64_t>(res.active))
        .Set("passive", static_cast<int64_t>(res.passive))
        .Set("ca", static_cast<uint64_t>(ia))
        .Set("cp", static_cast<uint64_t>(ia + 1))
        .Set("detail", res.detail);
}

}  // namespace ndc::peer_server
