// The peer process: a scriptable ND endpoint driven over the control
// channel. Every command replies "ok k=v..." or "err what=...". Commands
// (c = connection index, mem = a named registered buffer):
//
//   open addr                          open the adapter serving addr
//   listen [name addr port backlog]    -> port
//   getreq [l shape recvs recvsize]    new QP+connector, GetConnectionRequest
//                                      -> c in out pd pdlen peer
//   accept c [in out pd async]         -> status (async: the immediate one)
//   acceptwait c                       -> status of a pending Accept
//   reject c [pd]                      -> status
//   serve [l n shape recvs recvsize in out pd]   accept n connections
//                                      (pipelined) -> c n status
//   connect addr port [pd in out complete shape recvs recvsize]
//                                      -> status c pd in out
//   connectmany addr port n            n Connects at once, then CompleteConnect
//                                      each -> c count ok status
//   completeconnect c                  -> status
//   reg name size [flags seed anti]    allocate, fill, register -> addr token ltoken
//   dereg name / free name             -> status
//   fill name off len seed [anti] / check name off len seed
//   recv c n mem off len [stride]      post receives (c may be srq:NAME)
//   send c mem off len [n stride flags nsge seed]
//   write|read c mem off len raddr rtoken [flags nsge]
//   reap c n [ms extra]                -> count s<i> t<i> b<i> x<i> [extra]
//   srq name depth [sge threshold]     create a shared receive queue
//   mw name mem off len flags c        Bind -> hr token status
//   inval name c [flags]               Invalidate -> hr status
//   disconnect c / notifydisc c / notifydiscwait c / release c [what]
//   quiet ms / pump on                 stop making provider calls
//   spinlast mem off len seed [ms]     spin on the last byte (no provider
//                                      calls), then check the whole range
//   stream c mem len n                 reply "ok" at once, then send n messages
//   echo c n mem                       receive and send back n messages
//   sink c k n len                     receive n messages on each of k QPs
//                                      starting at c; check per-QP sequence
//   simul addr port [accept]           simultaneous connect -> active passive
//   exit
#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "support/objects.h"
#include "support/peer.h"
#include "support/simultaneous.h"

namespace ndc {
namespace {

struct PeerError {
    std::string what;
};
void Need(bool ok, const std::string &what) {
    if (!ok) throw PeerError{what};
}
void NeedHr(HRESULT hr, const std::string &what) {
    if (FAILED(hr)) throw PeerError{what + ": " + StatusName(hr)};
}

struct PConn {
    Cq cq;
    Conn c;
    std::unique_ptr<Mem> rx;
    Ov ov_accept, ov_notify;
    bool accept_pending = false, notify_pending = false;
    ~PConn() {
        // Never leave a request completing into a freed OVERLAPPED.
        if ((accept_pending || notify_pending) && c.connector) {
            c.connector->CancelOverlappedRequests();
            if (accept_pending) Finish(c.connector.get(), &ov_accept, ND_PENDING, 1000);
            if (notify_pending) Finish(c.connector.get(), &ov_notify, ND_PENDING, 1000);
        }
    }
};

class Server {
public:
    explicit Server(int fd) : ch_(fd) {}
    int Run();

private:
    Msg Dispatch(const Msg &m);
    PConn &C(const Msg &m, const char *key = "c");
    Mem &M(const std::string &name);
    QpShape Shape(const Msg &m);
    PConn &NewConn(const Msg &m);
    void PostRecvs(PConn &pc, const Msg &m);
    Msg RequestInfo(PConn &pc, size_t index);

    Msg Serve(const Msg &m);
    Msg Connect(const Msg &m);
    Msg ConnectMany(const Msg &m);
    Msg Send(const Msg &m);
    Msg Rdma(const Msg &m, bool write);
    Msg Reap(const Msg &m);
    Msg Bind(const Msg &m);
    Msg SpinLast(const Msg &m);
    Msg Stream(const Msg &m);
    Msg Echo(const Msg &m);
    Msg Sink(const Msg &m);
    Msg Simul(const Msg &m);

    Channel ch_;
    Node node_;
    std::vector<std::unique_ptr<PConn>> conns_;
    std::map<std::string, std::unique_ptr<Listener>> listeners_;
    std::map<std::string, std::unique_ptr<Mem>> mems_;
    std::map<std::string, Ref<IND2MemoryWindow>> mws_;
    std::map<std::string, Ref<IND2SharedReceiveQueue>> srqs_;
    bool pump_ = true;
    bool exit_ = false;
    std::string warnings_;
};

PConn &Server::C(const Msg &m, const char *key) {
    size_t i = m.U64(key, ~0ull);
    Need(i < conns_.size() && conns_[i], "no connection " + m.Str(key));
    return *conns_[i];
}

Mem &Server::M(const std::string &name) {
    auto it = mems_.find(name);
    Need(it != mems_.end(), "no registered buffer named " + name);
    return *it->second;
}

QpShape Server::Shape(const Msg &m) {
    QpShape s;
    s.receive_depth = static_cast<ULONG>(m.U64("rdepth", s.receive_depth));
    s.initiator_depth = static_cast<ULONG>(m.U64("idepth", s.initiator_depth));
    s.receive_sge = static_cast<ULONG>(m.U64("rsge", s.receive_sge));
    s.initiator_sge = static_cast<ULONG>(m.U64("isge", s.initiator_sge));
    if (m.Has("inline")) s.inline_size = static_cast<ULONG>(m.U64("inline"));
    if (m.Has("srq")) {
        auto it = srqs_.find(m.Str("srq"));
        Need(it != srqs_.end(), "no SRQ named " + m.Str("srq"));
        s.srq = it->second.get();
    }
    return s;
}

PConn &Server::NewConn(const Msg &m) {
    auto pc = std::make_unique<PConn>();
    QpShape s = Shape(m);
    ULONG depth = static_cast<ULONG>(m.U64("cqdepth", s.receive_depth + s.initiator_depth + 16));
    NeedHr(pc->cq.Create(node_.adapter.get(), node_.file, depth), "CreateCompletionQueue");
    NeedHr(pc->c.Create(node_, pc->cq, pc->cq, s, pc.get()), "CreateQueuePair/CreateConnector");
    conns_.push_back(std::move(pc));
    PostRecvs(*conns_.back(), m);
    return *conns_.back();
}

void Server::PostRecvs(PConn &pc, const Msg &m) {
    size_t n = m.U64("recvs", 0), size = m.U64("recvsize", 0);
    if (n == 0) return;
    pc.rx = std::make_unique<Mem>(std::max<size_t>(1, n * size));
    NeedHr(pc.rx->Register(node_.adapter.get(), node_.file, kAllRights), "Register (receive buffers)");
    for (size_t i = 0; i < n; ++i) NeedHr(pc.c.PostReceive(*pc.rx, i * size, size), "Receive");
}

Msg Server::RequestInfo(PConn &pc, size_t index) {
    Msg r = Ok();
    r.Set("c", static_cast<uint64_t>(index));
    ULONG in = 0, out = 0;
    HRESULT hr = pc.c.connector->GetReadLimits(&in, &out);
    r.Set("rlstatus", static_cast<int64_t>(hr)).Set("in", in).Set("out", out);
    ULONG len = 0;
    hr = pc.c.connector->GetPrivateData(nullptr, &len);
    r.Set("pdsize_status", static_cast<int64_t>(hr)).Set("pdlen", len);
    std::vector<char> pd(len + 1);
    ULONG len2 = len;
    hr = pc.c.connector->GetPrivateData(pd.data(), &len2);
    r.Set("pdstatus", static_cast<int64_t>(hr)).Set("pd", ToHex(pd.data(), std::min(len, len2)));
    IpAddress peer;
    ULONG alen = sizeof peer.storage;
    hr = pc.c.connector->GetPeerAddress(peer.sa(), &alen);
    r.Set("peerstatus", static_cast<int64_t>(hr));
    if (SUCCEEDED(hr)) r.Set("peer", IpText(peer, true));
    return r;
}

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

Msg Server::Bind(const Msg &m) {
    std::string name = m.Str("name");
    Ref<IND2MemoryWindow> &mw = mws_[name];
    if (!mw) NeedHr(node_.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.pv()), "CreateMemoryWindow");
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t off = m.U64("off"), len = m.U64("len");
    static char marker;
    HRESULT hr = pc.c.qp->Bind(&marker, mem.mr(), mw.get(), mem.data() + off, len, static_cast<ULONG>(m.U64("flags")));
    UINT32 token = mw->GetRemoteToken();  // valid as soon as Bind returns (R081)
    Msg r = Ok();
    r.Set("hr", static_cast<int64_t>(hr)).Set("token", static_cast<uint64_t>(token)).Set("addr", mem.addr(off));
    if (SUCCEEDED(hr) && !(m.U64("flags") & ND_OP_FLAG_SILENT_SUCCESS)) {
        ND2_RESULT res;
        bool got = pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestContext == &marker; }, &res);
        r.Set("status", static_cast<int64_t>(got ? res.Status : kHang));
        r.Set("token_after", static_cast<uint64_t>(mw->GetRemoteToken()));
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

Msg Server::Dispatch(const Msg &m) {
    const std::string &v = m.verb();
    if (v == "open") {
        std::string err = node_.Open(ParseIp(m.Str("addr")));
        Need(err.empty(), err);
        return Ok();
    }
    if (v == "exit") {
        exit_ = true;
        return Ok();
    }
    Need(node_.adapter.get() != nullptr, "the adapter is not open");
    if (v == "listen") {
        auto l = std::make_unique<Listener>();
        IpAddress a = m.Has("addr") ? ParseIp(m.Str("addr")) : node_.local;
        std::string err = l->Start(node_, WithPort(a, static_cast<uint16_t>(m.U64("port"))),
                                   static_cast<ULONG>(m.U64("backlog")));
        Need(err.empty(), err);
        uint16_t port = l->port;
        listeners_[m.Str("name", "l")] = std::move(l);
        return Ok().Set("port", static_cast<uint64_t>(port));
    }
    if (v == "unlisten") {
        listeners_.erase(m.Str("name", "l"));
        return Ok();
    }
    if (v == "getreq") {
        auto lit = listeners_.find(m.Str("l", "l"));
        Need(lit != listeners_.end(), "no listener");
        PConn &pc = NewConn(m);
        size_t index = conns_.size() - 1;
        HRESULT hr = lit->second->Get(pc.c, m.U64("ms", 0));
        NeedHr(hr, "GetConnectionRequest");
        return RequestInfo(pc, index);
    }
    if (v == "accept") {
        PConn &pc = C(m);
        std::vector<uint8_t> pd = FromHex(m.Str("pd"));
        if (m.Has("delay")) SleepMs(m.U64("delay"));
        pc.ov_accept.Reuse();
        HRESULT hr = pc.c.connector->Accept(pc.c.qp.get(), static_cast<ULONG>(m.U64("in", 8)),
                                            static_cast<ULONG>(m.U64("out", 8)), pd.empty() ? nullptr : pd.data(),
                                            static_cast<ULONG>(pd.size()), &pc.ov_accept);
        if (m.U64("async", 0)) {
            pc.accept_pending = hr == ND_PENDING;
            return Ok().Set("status", static_cast<int64_t>(hr));
        }
        hr = Finish(pc.c.connector.get(), &pc.ov_accept, hr);
        return Ok().Set("status", static_cast<int64_t>(hr));
    }
    if (v == "acceptwait") {
        PConn &pc = C(m);
        Need(pc.accept_pending, "no Accept pending");
        HRESULT hr = Finish(pc.c.connector.get(), &pc.ov_accept, ND_PENDING, m.U64("ms", 0));
        pc.accept_pending = false;
        return Ok().Set("status", static_cast<int64_t>(hr));
    }
    if (v == "acceptpoll") {  // the state of a pending Accept, without waiting
        PConn &pc = C(m);
        Need(pc.accept_pending, "no Accept pending");
        HRESULT hr = pc.c.connector->GetOverlappedResult(&pc.ov_accept, FALSE);
        if (hr != ND_PENDING) pc.accept_pending = false;
        return Ok().Set("status", static_cast<int64_t>(hr));
    }
    if (v == "reject") {
        PConn &pc = C(m);
        std::vector<uint8_t> pd = FromHex(m.Str("pd"));
        HRESULT hr = pc.c.connector->Reject(pd.empty() ? nullptr : pd.data(), static_cast<ULONG>(pd.size()));
        return Ok().Set("status", static_cast<int64_t>(hr));
    }
    if (v == "serve") return Serve(m);
    if (v == "connect") return Connect(m);
    if (v == "connectmany") return ConnectMany(m);
    if (v == "completeconnect") return Ok().Set("status", static_cast<int64_t>(C(m).c.CompleteConnect()));
    if (v == "reg") {
        auto mem = std::make_unique<Mem>(m.U64("size"));
        if (m.Has("seed")) {
            if (m.U64("anti", 0))
                FillAntiPattern(mem->data(), mem->size(), static_cast<uint32_t>(m.U64("seed")));
            else
                FillPattern(mem->data(), mem->size(), static_cast<uint32_t>(m.U64("seed")));
        }
        HRESULT hr = mem->Register(node_.adapter.get(), node_.file, static_cast<ULONG>(m.U64("flags", kAllRights)));
        NeedHr(hr, "Register");
        Msg r = Ok().Set("addr", mem->addr()).Set("token", static_cast<uint64_t>(mem->remote_token()));
        r.Set("ltoken", static_cast<uint64_t>(mem->local_token()));
        mems_[m.Str("name")] = std::move(mem);
        return r;
    }
    if (v == "dereg") return Ok().Set("status", static_cast<int64_t>(M(m.Str("name")).Deregister()));
    if (v == "free") {
        mems_.erase(m.Str("name"));
        return Ok();
    }
    if (v == "fill") {
        Mem &mem = M(m.Str("name"));
        size_t off = m.U64("off"), len = m.U64("len", mem.size() - off);
        if (m.U64("anti", 0))
            FillAntiPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        else
            FillPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        return Ok();
    }
    if (v == "check") {
        Mem &mem = M(m.Str("name"));
        size_t off = m.U64("off"), len = m.U64("len", mem.size() - off);
        std::string bad = CheckPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        Need(bad.empty(), bad);
        return Ok();
    }
    if (v == "recv") {
        Mem &mem = M(m.Str("mem"));
        size_t n = m.U64("n", 1), off = m.U64("off"), len = m.U64("len"), stride = m.U64("stride", len);
        std::string target = m.Str("c");
        for (size_t i = 0; i < n; ++i) {
            ND2_SGE sge = mem.Sge(off + i * stride, len);
            void *ctx = reinterpret_cast<void *>(m.U64("ctx") + i);
            HRESULT hr;
            if (target.rfind("srq:", 0) == 0) {
                auto it = srqs_.find(target.substr(4));
                Need(it != srqs_.end(), "no SRQ " + target);
                hr = it->second->Receive(ctx, len ? &sge : nullptr, len ? 1 : 0);
            } else {
                hr = C(m).c.qp->Receive(ctx, len ? &sge : nullptr, len ? 1 : 0);
            }
            NeedHr(hr, "Receive " + std::to_string(i));
        }
        return Ok();
    }
    if (v == "srq") {
        Ref<IND2SharedReceiveQueue> &s = srqs_[m.Str("name")];
        NeedHr(node_.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node_.file,
                                                       static_cast<ULONG>(m.U64("depth", 64)),
                                                       static_cast<ULONG>(m.U64("sge", 1)),
                                                       static_cast<ULONG>(m.U64("threshold", 0)), 0, 0, s.pv()),
               "CreateSharedReceiveQueue");
        return Ok();
    }
    if (v == "send") return Send(m);
    if (v == "write") return Rdma(m, true);
    if (v == "read") return Rdma(m, false);
    if (v == "reap") return Reap(m);
    if (v == "mw") return Bind(m);
    if (v == "inval") {
        auto it = mws_.find(m.Str("name"));
        Need(it != mws_.end(), "no window " + m.Str("name"));
        PConn &pc = C(m);
        static char marker;
        HRESULT hr = pc.c.qp->Invalidate(&marker, it->second.get(), static_cast<ULONG>(m.U64("flags")));
        Msg r = Ok().Set("hr", static_cast<int64_t>(hr));
        if (SUCCEEDED(hr)) {
            ND2_RESULT res;
            bool got = pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestContext == &marker; }, &res);
            r.Set("status", static_cast<int64_t>(got ? res.Status : kHang));
        }
        return r;
    }
    if (v == "mwfree") {
        mws_.erase(m.Str("name"));
        return Ok();
    }
    if (v == "disconnect") return Ok().Set("status", static_cast<int64_t>(C(m).c.Disconnect()));
    if (v == "notifydisc") {
        PConn &pc = C(m);
        pc.ov_notify.Reuse();
        HRESULT hr = pc.c.connector->NotifyDisconnect(&pc.ov_notify);
        pc.notify_pending = hr == ND_PENDING;
        return Ok().Set("hr", static_cast<int64_t>(hr));
    }
    if (v == "notifydiscwait") {
        PConn &pc = C(m);
        Need(pc.notify_pending, "no NotifyDisconnect pending");
        HRESULT hr = Finish(pc.c.connector.get(), &pc.ov_notify, ND_PENDING, m.U64("ms", 0));
        pc.notify_pending = false;
        return Ok().Set("status", static_cast<int64_t>(hr));
    }
    if (v == "release") {
        PConn &pc = C(m);
        std::string what = m.Str("what", "both");
        if (what == "connector" || what == "both") {
            pc.accept_pending = pc.notify_pending = false;  // the object is going away
            pc.c.connector.reset();
        }
        if (what == "qp" || what == "both") pc.c.qp.reset();
        if (what == "all") conns_[m.U64("c")].reset();
        return Ok();
    }
    if (v == "quiet") {
        SleepMs(m.U64("ms"));
        return Ok();
    }
    if (v == "pump") {
        pump_ = m.U64("on", 1) != 0;
        return Ok();
    }
    if (v == "spinlast") return SpinLast(m);
    if (v == "stream") return Stream(m);
    if (v == "echo") return Echo(m);
    if (v == "sink") return Sink(m);
    if (v == "simul") return Simul(m);
    throw PeerError{"unknown command " + v};
}

int Server::Run() {
    SetReporter([this](const std::string &w) { warnings_ += (warnings_.empty() ? "" : "; ") + w; });
    for (;;) {
        Msg m;
        bool closed = false;
        if (!ch_.Recv(&m, 24 * 3600 * 1000ull, [this] { if (pump_) PumpAll(); }, &closed)) {
            if (closed) return 0;  // the test process went away
            continue;
        }
        Msg r;
        try {
            r = Dispatch(m);
        } catch (const PeerError &e) {
            r = Err(e.what);
        }
        if (r.verb().empty()) continue;  // the command replied itself
        if (!warnings_.empty()) {
            r.Set("warn", warnings_);
            warnings_.clear();
        }
        if (!ch_.Send(r)) return 0;
        if (exit_) {
            // Release in a sensible order: connections, then the rest.
            conns_.clear();
            listeners_.clear();
            mws_.clear();
            mems_.clear();
            srqs_.clear();
            return 0;
        }
    }
}

}  // namespace

int RunPeer(int control_fd) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test process
    Server s(control_fd);
    return s.Run();
}

}  // namespace ndc
