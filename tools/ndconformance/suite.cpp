#include "suite.h"

#include <cctype>

namespace ndc {

namespace {
std::vector<std::string> g_addresses;
}

const std::vector<std::string> &TestAddresses() { return g_addresses; }
void SetTestAddresses(const std::vector<std::string> &a) { g_addresses = a; }
IpAddress PrimaryAddress() { return ParseIp(g_addresses.empty() ? "127.0.0.1" : g_addresses[0]); }

std::string AddressParamName(const ::testing::TestParamInfo<std::string> &info) {
    IpAddress a = ParseIp(info.param);
    std::string out = a.family() == AF_INET6 ? "v6" : "v4";
    bool sep = true;
    for (char c : info.param) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            if (sep) out += '_';
            out += c;
            sep = false;
        } else {
            sep = true;
        }
    }
    return out;
}

void NodeTest::SetUp() {
    addr = PrimaryAddress();
    std::string err = node.Open(addr);
    ASSERT_TRUE(err.empty()) << err;
}

void AddrTest::SetUp() {
    addr = ParseIp(GetParam());
    std::string err = node.Open(addr);
    ASSERT_TRUE(err.empty()) << err;
}

std::string Pair::Prepare(Node &node, const IpAddress &address, Msg request, const QpShape &shape, bool split_cq,
                          ULONG cq_depth) {
    std::string err = peer.Start(address);
    if (!err.empty()) return err;
    Msg r = peer.Call(Msg("listen"));
    if (!r.ok()) return "peer listen: " + r.error();
    port = static_cast<uint16_t>(r.U64("port"));
    dest = WithPort(PeerIp(address), port);
    HRESULT hr = rcq.Create(node.adapter.get(), node.file, cq_depth);
    if (FAILED(hr)) return "CreateCompletionQueue: " + StatusName(hr);
    if (split_cq && FAILED(hr = icq.Create(node.adapter.get(), node.file, cq_depth)))
        return "CreateCompletionQueue: " + StatusName(hr);
    if (FAILED(hr = conn.Create(node, rcq, split_cq ? icq : rcq, shape)))
        return "CreateQueuePair/CreateConnector: " + StatusName(hr);
    if (!peer.Post(request)) return "cannot talk to the peer";
    return "";
}

std::string Pair::PrepareActive(Node &node, const IpAddress &address) {
    std::string err = Prepare(node, address, Msg("getreq"), QpShape(), false, 64);
    if (!err.empty()) return err;
    IpAddress local = WithPort(address, 0);
    HRESULT hr = conn.connector->Bind(local.sa(), local.length());
    return SUCCEEDED(hr) ? "" : "IND2Connector::Bind: " + StatusName(hr);
}

std::string Pair::Connect(Node &node, const IpAddress &address, Msg serve, const QpShape &shape, bool split_cq,
                          ULONG cq_depth) {
    if (serve.verb().empty()) serve = Msg("serve");
    std::string err = Prepare(node, address, serve, shape, split_cq, cq_depth);
    if (!err.empty()) return err;
    HRESULT hr = conn.Connect(dest);
    Msg s = peer.Wait();
    if (FAILED(hr)) return "Connect to " + IpText(dest, true) + ": " + StatusName(hr);
    if (!s.ok()) return "peer serve: " + s.error();
    if (FAILED(static_cast<HRESULT>(s.I64("status"))))
        return "peer Accept: " + StatusName(static_cast<HRESULT>(s.I64("status")));
    return "";
}

std::string TwoConnections::Connect(Node &node, const IpAddress &address, Msg serve) {
    std::string err = peer.Start(address);
    if (!err.empty()) return err;
    Msg l = peer.Call(Msg("listen"));
    if (!l.ok()) return "peer listen: " + l.error();
    IpAddress dest = WithPort(PeerIp(address), static_cast<uint16_t>(l.U64("port")));
    HRESULT hr = cq.Create(node.adapter.get(), node.file, 256);
    if (FAILED(hr)) return "CreateCompletionQueue: " + StatusName(hr);
    if (!peer.Post(serve.Set("n", uint64_t(2)))) return "the peer did not take serve";
    for (Conn &x : c) {
        if (FAILED(hr = x.Create(node, cq, cq))) return "creating a connection: " + StatusName(hr);
        if (FAILED(hr = x.Connect(dest))) {
            peer.Wait();
            return "Connect to " + IpText(dest, true) + ": " + StatusName(hr);
        }
    }
    Msg s = peer.Wait();
    return s.ok() ? "" : "peer serve: " + s.error();
}

Remote PeerRegister(Peer &p, const std::string &name, uint64_t size, ULONG flags, int64_t seed, bool anti) {
    Msg m("reg");
    m.Set("name", name).Set("size", size).Set("flags", static_cast<uint64_t>(flags));
    if (seed >= 0) m.Set("seed", static_cast<uint64_t>(seed)).Set("anti", anti ? 1 : 0);
    Msg r = p.Call(m);
    Remote out;
    if (!r.ok()) return out;
    out.addr = r.U64("addr");
    out.token = static_cast<UINT32>(r.U64("token"));
    out.size = size;
    return out;
}

::testing::AssertionResult NextIs(Cq &cq, HRESULT status, ND2_REQUEST_TYPE type, ND2_RESULT *out, uint64_t ms) {
    ND2_RESULT r;
    if (!cq.Next(&r, ms)) {
        return ::testing::AssertionFailure() << "no completion within " << (ms ? ms : WaitMs()) << " ms (expected "
                                             << RequestTypeName(type) << " " << StatusName(status) << ")";
    }
    if (out) *out = r;
    if (r.Status != status || r.RequestType != type)
        return ::testing::AssertionFailure() << "expected " << RequestTypeName(type) << " " << StatusName(status)
                                             << ", got " << Describe(r);
    return ::testing::AssertionSuccess();
}

std::string PdHex(const std::string &text) { return ToHex(text.data(), text.size()); }

}  // namespace ndc
