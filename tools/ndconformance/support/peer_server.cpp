// The peer process's command loop: the connection verbs here, memory
// verbs in peer_server_memory.cpp, data verbs in peer_server_data.cpp
// (the commands: peer_server.h).
#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/peer_server.h"
#include "support/simultaneous.h"

namespace ndc {
namespace peer_server {

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
    if (std::optional<Msg> r = MemoryVerb(m)) return *r;
    if (v == "send") return Send(m);
    if (v == "write") return Rdma(m, true);
    if (v == "read") return Rdma(m, false);
    if (v == "reap") return Reap(m);
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
    if (v == "tables") {  // memory-region tables mapped in this process (its own is one)
        std::ifstream maps("/proc/self/maps");
        uint64_t n = 0;
        for (std::string line; std::getline(maps, line);) n += line.find("opennd-mr-table") != std::string::npos;
        return Ok().Set("count", n);
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
    if (v == "writeloop") return WriteLoop(m);
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

}  // namespace peer_server

int RunPeer(int control_fd) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test process
    peer_server::Server s(control_fd);
    return s.Run();
}

}  // namespace ndc
