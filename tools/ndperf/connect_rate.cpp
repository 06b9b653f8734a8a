// ndperf connect-rate: connections established and torn down per second.
// The client keeps --inflight connections going at once, each through
// CreateQueuePair + CreateConnector, Connect, CompleteConnect, Disconnect and
// Release, driven by completions on one port; the setup latency is Connect
// to CompleteConnect done. The server accepts in a loop the same way (Accept,
// NotifyDisconnect, Disconnect, Release) until a last request says goodbye.
// Every operation here is expected to return ND_PENDING and complete on the
// port (what the provider kit does); one that returns at once is carried on
// in place, and a packet for an operation not pending any more is ignored.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "endpoint.h"

namespace ndperf {
namespace {

constexpr uint32_t kGoodbye = 0xFFFFFFFF;  // Hello.index of the last request
constexpr uint32_t kIdleMs = 30000;
constexpr uint32_t kGraceMs = 1000;

struct Conn {
    OVERLAPPED ov{};  // first member: the port hands back &ov
    IND2Connector *connector = nullptr;
    IND2QueuePair *qp = nullptr;
    enum Stage { Idle, Connecting, Completing, Accepting, Connected, Closing } stage = Idle;
    uint64_t t0 = 0;
    Conn() = default;
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;
    void Close() {
        if (connector) connector->Release();
        if (qp) qp->Release();
        connector = nullptr;
        qp = nullptr;
        stage = Idle;
    }
    ~Conn() { Close(); }
};

// A completion from the port, or nullptr after `ms`.
OVERLAPPED *NextPacket(HANDLE port, DWORD ms) {
    DWORD n;
    ULONG_PTR key;
    OVERLAPPED *got = nullptr;
    GetQueuedCompletionStatus(port, &n, &key, &got, ms);
    return got;
}

// The shared pieces of both sides: one overlapped file bound to a port, one CQ.
struct Setup {
    IND2Adapter *adapter = nullptr;
    HANDLE file = nullptr;
    IND2CompletionQueue *cq = nullptr;
    void NewConn(Conn &c, bool connector) {
        Check(adapter->CreateQueuePair(IID_IND2QueuePair, cq, cq, nullptr, 1, 1, 1, 1, 0,
                                       reinterpret_cast<void **>(&c.qp)),
              "CreateQueuePair");
        if (connector)
            Check(adapter->CreateConnector(IID_IND2Connector, file, reinterpret_cast<void **>(&c.connector)),
                  "CreateConnector");
    }
    ~Setup() {
        if (cq) cq->Release();
    }
};

}  // namespace

int RunConnectRateClient(const Options &o, std::vector<Result> *results) {
    opennd::net::IpAddress dest = ParseAddressOrThrow(o.address), local = LocalAddressFor(dest);
    opennd::net::SetPort(dest.sa(), o.port);
    Adapter adapter;
    adapter.Open(local, o.provider);
    adapter.CheckTransport(o.transport);
    HANDLE file = nullptr;
    Check(adapter.get()->CreateOverlappedFile(&file), "CreateOverlappedFile");
    HANDLE port = CreateIoCompletionPort(file, nullptr, 0, 0);
    Setup setup{adapter.get(), file, nullptr};
    uint32_t count = o.connections ? o.connections : 2000;
    uint32_t inflight = std::min(o.inflight, count);
    Check(adapter.get()->CreateCompletionQueue(IID_IND2CompletionQueue, file, inflight * 4 + 8, 0, 0,
                                               reinterpret_cast<void **>(&setup.cq)),
          "CreateCompletionQueue");
    std::vector<Conn> conns(inflight);
    Result r;
    r.test = "connect";
    Label(o, adapter, &r);
    r.inflight = inflight;
    r.samples_us.reserve(count);
    uint32_t started = 0, done = 0;
    uint64_t start = NowNs(), guard = static_cast<uint64_t>(o.max_seconds * 1e9);
    auto begin = [&](Conn &c) -> HRESULT {
        setup.NewConn(c, true);
        Hello h{kHelloMagic, static_cast<uint32_t>(Mode::ConnectRate), started++, count};
        c.stage = Conn::Connecting;
        c.t0 = NowNs();
        return c.connector->Connect(c.qp, dest.sa(), dest.length(), 1, 1, &h, sizeof h, &c.ov);
    };
    // Carries a connection on until an operation is pending.
    auto advance = [&](Conn &c, HRESULT hr) {
        for (; hr != ND_PENDING;) {
            Check(hr, c.stage == Conn::Connecting ? "Connect" : c.stage == Conn::Completing ? "CompleteConnect"
                                                                                          : "Disconnect");
            if (c.stage == Conn::Connecting) {
                c.stage = Conn::Completing;
                hr = c.connector->CompleteConnect(&c.ov);
            } else if (c.stage == Conn::Completing) {
                r.samples_us.push_back((NowNs() - c.t0) / 1000.0);
                c.stage = Conn::Closing;
                hr = c.connector->Disconnect(&c.ov);
            } else {
                c.Close();
                ++done;
                if (done % 256 == 0)
                    Progress(o, "connect-rate: " + std::to_string(done) + "/" + std::to_string(count));
                if (started >= count || r.truncated) return;
                hr = begin(c);
            }
        }
    };
    try {
        for (auto &c : conns) advance(c, begin(c));
        while (done < started) {
            OVERLAPPED *got = NextPacket(port, 10000);
            if (!got) throw std::runtime_error("no connection event within 10 s");
            auto it = std::find_if(conns.begin(), conns.end(), [&](Conn &c) { return &c.ov == got; });
            if (it == conns.end() || it->stage == Conn::Idle) continue;
            HRESULT hr = it->connector->GetOverlappedResult(&it->ov, FALSE);
            if (hr == ND_PENDING) continue;
            advance(*it, hr);
            if (!r.truncated && NowNs() - start > guard) r.truncated = true;
        }
    } catch (...) {
        conns.clear();
        CloseHandle(port);
        CloseHandle(file);
        throw;
    }
    r.seconds = (NowNs() - start) / 1e9;
    r.messages = done;
    r.iters = done;
    // Goodbye: one more request, which the server refuses and then exits.
    Conn bye;
    setup.NewConn(bye, true);
    Hello h{kHelloMagic, static_cast<uint32_t>(Mode::ConnectRate), kGoodbye, count};
    HRESULT hr = Wait(bye.connector, &bye.ov, bye.connector->Connect(bye.qp, dest.sa(), dest.length(), 1, 1, &h,
                                                                    sizeof h, &bye.ov));
    bye.Close();
    CloseHandle(port);
    CloseHandle(file);
    // Refused, as the server rejects it; over TCP the rejecting side's Release
    // may reset the stream before the MPA reject is read: aborted.
    if (hr != ND_CONNECTION_REFUSED && hr != ND_CONNECTION_ABORTED)
        throw std::runtime_error("the server did not take the goodbye: " + StatusName(hr));
    results->push_back(std::move(r));
    return 0;
}

int ServeConnectRate(std::shared_ptr<Adapter> adapter, Listener &listener, IND2Connector *first, const Hello &hello) {
    Setup setup{adapter->get(), listener.file(), nullptr};
    Check(adapter->get()->CreateCompletionQueue(IID_IND2CompletionQueue, listener.file(), 1024, 0, 0,
                                                reinterpret_cast<void **>(&setup.cq)),
          "CreateCompletionQueue");
    std::unordered_map<OVERLAPPED *, std::unique_ptr<Conn>> conns;
    bool goodbye = false;
    auto advance = [&](Conn *c, HRESULT hr) {
        for (; hr != ND_PENDING;) {
            if (FAILED(hr) || c->stage == Conn::Closing) {  // a client that gave up is no error here
                conns.erase(&c->ov);
                return;
            }
            if (c->stage == Conn::Accepting) {
                c->stage = Conn::Connected;
                hr = c->connector->NotifyDisconnect(&c->ov);
            } else {
                c->stage = Conn::Closing;
                hr = c->connector->Disconnect(&c->ov);
            }
        }
    };
    auto request = [&](IND2Connector *connector, const Hello &h) {
        if (h.index == kGoodbye || h.mode != static_cast<uint32_t>(Mode::ConnectRate)) {
            connector->Reject(nullptr, 0);
            connector->Release();
            goodbye = true;
            return;
        }
        auto c = std::make_unique<Conn>();
        c->connector = connector;
        setup.NewConn(*c, false);
        c->stage = Conn::Accepting;
        Conn *p = c.get();
        conns[&p->ov] = std::move(c);
        advance(p, p->connector->Accept(p->qp, 1, 1, nullptr, 0, &p->ov));
    };
    OVERLAPPED req{};
    IND2Connector *next = nullptr;
    auto listen = [&]() -> HRESULT {
        next = listener.NewConnector();
        return listener.get()->GetConnectionRequest(next, &req);
    };
    auto take = [&](HRESULT hr) {  // a request completed with hr; the next one is asked for
        for (; hr != ND_PENDING && !goodbye;) {
            Check(hr, "GetConnectionRequest");
            Hello h{};
            ReadHello(next, &h);
            request(next, h);
            next = nullptr;
            if (!goodbye) hr = listen();
        }
    };
    request(first, hello);
    take(listen());
    while (!goodbye || !conns.empty()) {
        // The goodbye comes after the client has torn every connection down:
        // one still waiting for its disconnect after a grace second has
        // missed it (a provider fault worth a warning, not a hang).
        OVERLAPPED *got = NextPacket(listener.port(), goodbye ? kGraceMs : kIdleMs);
        if (!got && goodbye) {
            std::fprintf(stderr, "ndperf server: warning: %zu connection(s) never saw the client's disconnect "
                                 "(NotifyDisconnect did not complete)\n", conns.size());
            break;
        }
        if (!got) throw std::runtime_error("connect-rate server: nothing happened for 30 s");
        if (got == &req) {
            HRESULT hr = listener.get()->GetOverlappedResult(&req, FALSE);
            if (hr != ND_PENDING && next) take(hr);
            continue;
        }
        auto it = conns.find(got);
        if (it == conns.end()) continue;
        HRESULT hr = it->second->connector->GetOverlappedResult(got, FALSE);
        if (hr != ND_PENDING) advance(it->second.get(), hr);
    }
    conns.clear();
    if (next) next->Release();
    return 0;
}

}  // namespace ndperf
