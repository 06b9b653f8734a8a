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
//
// This header is the server's own (peer_server*.cpp): peer.h is the
// interface tests use.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/objects.h"
#include "support/peer.h"

namespace ndc::peer_server {

struct PeerError {
    std::string what;
};
inline void Need(bool ok, const std::string &what) {
    if (!ok) throw PeerError{what};
}
inline void NeedHr(HRESULT hr, const std::string &what) {
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
    // reg, dereg, free, fill, check, recv, srq, mw, inval, mwfree; nullopt for any other verb.
    std::optional<Msg> MemoryVerb(const Msg &m);
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
    Msg WriteLoop(const Msg &m);
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

}  // namespace ndc::peer_server
