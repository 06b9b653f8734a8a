// Data integrity from 0 B to 32 MiB for Send/Receive, RDMA Write and RDMA
// Read, with one and several SGEs and odd offsets. Each 8-byte word encodes
// its offset and a per-transfer seed, so a misplaced block names where it
// came from. RDMA Write lands last byte last: the target spins on its last
// byte without provider calls. Run once per address.
#include "suite.h"

namespace ndc {
namespace {

NDC_INSTANTIATE_ADDRESSES(DataIntegrity);

constexpr size_t kMax = 32u << 20;

// Sizes from 0 B up to 32 MiB (or the adapter's MaxTransferLength; Sends
// stop 1 KiB short of 32 MiB, the least COMPAT requires).
// A receive for any message: as long as one transfer may be.
size_t ReceiveLength(const ND2_ADAPTER_INFO &info) { return std::min<size_t>(kMax, info.MaxTransferLength); }

std::vector<size_t> Sizes(const ND2_ADAPTER_INFO &info, bool send) {
    std::vector<size_t> out = {0, 1, 7, 8, 9, 63, 64, 65, 4095, 4096, 4097, 65535, 65536, (1u << 20) + 13, (4u << 20) + 5};
    size_t top = send ? kMax - 1024 : kMax;
    top = std::min<size_t>(top, info.MaxTransferLength);
    out.push_back(top);
    return out;
}

// Splits [off, off+len) of m into n SGEs of uneven sizes (the first a
// fifth, the rest shared), none empty.
std::vector<ND2_SGE> Split(const Mem &m, size_t off, size_t len, ULONG n) {
    std::vector<ND2_SGE> sge;
    if (len == 0) return sge;
    n = static_cast<ULONG>(std::min<size_t>(n, len));
    size_t at = off, left = len;
    for (ULONG k = 0; k < n; ++k) {
        size_t remaining = n - k;
        size_t piece = remaining == 1 ? left : (k == 0 ? std::max<size_t>(1, len / 5) : left / remaining);
        piece = std::max<size_t>(1, std::min(piece, left - (remaining - 1)));
        sge.push_back(m.Sge(at, piece));
        at += piece;
        left -= piece;
    }
    return sge;
}

ULONG SgeCount(const ND2_ADAPTER_INFO &info, bool read) {
    return std::min<ULONG>(3, read ? info.MaxReadSge : info.MaxInitiatorSge);
}

struct DataPair {
    Pair p;
    Mem local{kMax + 4096};
    std::string Setup(Node &node, const IpAddress &addr) {
        QpShape s;
        s.initiator_sge = std::min<ULONG>(3, node.info.MaxInitiatorSge);
        s.receive_sge = std::min<ULONG>(3, node.info.MaxReceiveSge);
        std::string err = p.Connect(node, addr, Msg("serve"), s);
        if (!err.empty()) return err;
        HRESULT hr = local.Register(node.adapter.get(), node.file, kAllRights);
        if (FAILED(hr)) return "Register: " + StatusName(hr);
        Msg r = p.peer.Call(Msg("reg").Set("name", "r").Set("size", kMax + 4096));
        return r.ok() ? "" : r.error();
    }
};

// Send/Receive, us to the peer: one SGE and three, at an odd offset.
TEST_P(DataIntegrity, SendReceiveToPeer) {
    DataPair d;
    std::string err = d.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    uint32_t seed = 1;
    for (size_t size : Sizes(node.info, true)) {
        for (ULONG nsge : {ULONG(1), SgeCount(node.info, false)}) {
            SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(nsge) + " SGEs");
            ++seed;
            size_t off = 3;
            FillPattern(d.local.data() + off, size, seed);
            PEER_OK(rv, d.p.peer.Call(Msg("recv").Set("c", 0).Set("mem", "r").Set("off", 5).Set("len", ReceiveLength(node.info))));
            std::vector<ND2_SGE> sge = Split(d.local, off, size, nsge);
            ASSERT_ND(ND_SUCCESS, d.p.conn.qp->Send(nullptr, sge.empty() ? nullptr : sge.data(),
                                                    static_cast<ULONG>(sge.size()), 0));
            ASSERT_TRUE(NextIs(d.p.rcq, ND_SUCCESS, Nd2RequestTypeSend));
            PEER_OK(r, d.p.peer.Call(Msg("reap").Set("c", 0)));
            ASSERT_ND(ND_SUCCESS, ST(r, "s0"));
            ASSERT_EQ(r.U64("b0"), size) << "BytesTransferred";
            Msg k = d.p.peer.Call(Msg("check").Set("name", "r").Set("off", 5).Set("len", size).Set("seed", seed));
            ASSERT_TRUE(k.ok()) << k.error();
        }
    }
}

// Send/Receive, the peer to us, scattered over three receive SGEs.
TEST_P(DataIntegrity, SendReceiveFromPeer) {
    DataPair d;
    std::string err = d.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    uint32_t seed = 100;
    for (size_t size : Sizes(node.info, true)) {
        for (ULONG nsge : {ULONG(1), std::min<ULONG>(3, node.info.MaxReceiveSge)}) {
            SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(nsge) + " receive SGEs");
            ++seed;
            FillAntiPattern(d.local.data(), size + 16, seed);
            std::vector<ND2_SGE> sge = Split(d.local, 0, std::min(std::max<size_t>(size, 1) + 8, ReceiveLength(node.info)), nsge);
            ASSERT_ND(ND_SUCCESS, d.p.conn.qp->Receive(nullptr, sge.data(), static_cast<ULONG>(sge.size())));
            PEER_OK(s, d.p.peer.Call(Msg("send").Set("c", 0).Set("mem", "r").Set("off", 11).Set("len", size).Set(
                "seed", seed)));
            ND2_RESULT r;
            ASSERT_TRUE(NextIs(d.p.rcq, ND_SUCCESS, Nd2RequestTypeReceive, &r));
            ASSERT_EQ(r.BytesTransferred, size);
            ASSERT_EQ(CheckPattern(d.local.data(), size, seed), "");
            PEER_OK(pr, d.p.peer.Call(Msg("reap").Set("c", 0)));
            ASSERT_ND(ND_SUCCESS, ST(pr, "s0"));
        }
    }
}

TEST_P(DataIntegrity, RdmaWrite) {
    DataPair d;
    std::string err = d.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(reg, d.p.peer.Call(Msg("reg").Set("name", "w").Set("size", kMax + 4096)));
    uint64_t raddr = reg.U64("addr");
    UINT32 token = static_cast<UINT32>(reg.U64("token"));
    uint32_t seed = 200;
    for (size_t size : Sizes(node.info, false)) {
        for (ULONG nsge : {ULONG(1), SgeCount(node.info, false)}) {
            SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(nsge) + " SGEs");
            ++seed;
            FillPattern(d.local.data() + 1, size, seed);
            std::vector<ND2_SGE> sge = Split(d.local, 1, size, nsge);
            ASSERT_ND(ND_SUCCESS, d.p.conn.qp->Write(nullptr, sge.empty() ? nullptr : sge.data(),
                                                     static_cast<ULONG>(sge.size()), raddr + 7, token, 0));
            ASSERT_TRUE(NextIs(d.p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
            Msg k = d.p.peer.Call(Msg("check").Set("name", "w").Set("off", 7).Set("len", size).Set("seed", seed));
            ASSERT_TRUE(k.ok()) << k.error();
        }
    }
}

TEST_P(DataIntegrity, RdmaRead) {
    DataPair d;
    std::string err = d.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(reg, d.p.peer.Call(Msg("reg").Set("name", "src").Set("size", kMax + 4096)));
    uint64_t raddr = reg.U64("addr");
    UINT32 token = static_cast<UINT32>(reg.U64("token"));
    uint32_t seed = 300;
    for (size_t size : Sizes(node.info, false)) {
        for (ULONG nsge : {ULONG(1), SgeCount(node.info, true)}) {
            SCOPED_TRACE("size " + std::to_string(size) + ", " + std::to_string(nsge) + " SGEs");
            ++seed;
            PEER_OK(f, d.p.peer.Call(Msg("fill").Set("name", "src").Set("off", 13).Set("len", size).Set("seed", seed)));
            FillAntiPattern(d.local.data() + 2, size, seed);
            std::vector<ND2_SGE> sge = Split(d.local, 2, size, nsge);
            ASSERT_ND(ND_SUCCESS, d.p.conn.qp->Read(nullptr, sge.empty() ? nullptr : sge.data(),
                                                    static_cast<ULONG>(sge.size()), raddr + 13, token, 0));
            ASSERT_TRUE(NextIs(d.p.rcq, ND_SUCCESS, Nd2RequestTypeRead));
            ASSERT_EQ(CheckPattern(d.local.data() + 2, size, seed), "");
        }
    }
}

// COMPAT: RDMA Write lands in address order, last byte last; the target
// spins on its last byte with no provider call and then finds every other
// byte in place.
TEST_P(DataIntegrity, RdmaWriteLastByteLast) {
    DataPair d;
    std::string err = d.Setup(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    PEER_OK(reg, d.p.peer.Call(Msg("reg").Set("name", "w").Set("size", kMax)));
    uint64_t raddr = reg.U64("addr");
    UINT32 token = static_cast<UINT32>(reg.U64("token"));
    uint32_t seed = 400;
    std::vector<size_t> sizes = {1, 4096, 65536 + 3, 1u << 20, std::min<size_t>(kMax, node.info.MaxTransferLength)};
    for (size_t size : sizes) {
        for (int round = 0; round < 3; ++round) {
            SCOPED_TRACE("size " + std::to_string(size) + ", round " + std::to_string(round));
            ++seed;
            PEER_OK(f, d.p.peer.Call(Msg("fill").Set("name", "w").Set("len", size).Set("seed", seed).Set("anti", 1)));
            ASSERT_TRUE(d.p.peer.Post(Msg("spinlast").Set("mem", "w").Set("len", size).Set("seed", seed)));
            SleepMs(2);  // let the target start spinning
            FillPattern(d.local.data(), size, seed);
            std::vector<ND2_SGE> sge = Split(d.local, 0, size, round == 2 ? SgeCount(node.info, false) : 1);
            ASSERT_ND(ND_SUCCESS, d.p.conn.qp->Write(nullptr, sge.data(), static_cast<ULONG>(sge.size()), raddr, token, 0));
            PEER_OK(s, d.p.peer.Wait());
            ASSERT_TRUE(NextIs(d.p.rcq, ND_SUCCESS, Nd2RequestTypeWrite));
        }
    }
}

// A one-byte RDMA Write (the smallest non-empty transfer), plain and with
// the target spinning on that byte (COMPAT: last byte last).
TEST_P(DataIntegrity, RdmaWriteOfOneByte) {
    Pair p;
    std::string err = p.Connect(node, addr);
    ASSERT_TRUE(err.empty()) << err;
    Mem m(4096);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    PEER_OK(reg, p.peer.Call(Msg("reg").Set("name", "w").Set("size", 4096)));
    uint64_t raddr = reg.U64("addr");
    UINT32 token = static_cast<UINT32>(reg.U64("token"));
    for (uint64_t off : {uint64_t(0), uint64_t(7), uint64_t(4095)}) {
        SCOPED_TRACE("remote offset " + std::to_string(off));
        uint32_t seed = static_cast<uint32_t>(500 + off);
        PEER_OK(f, p.peer.Call(Msg("fill").Set("name", "w").Set("off", off).Set("len", 1).Set("seed", seed).Set("anti", 1)));
        ASSERT_TRUE(p.peer.Post(Msg("spinlast").Set("mem", "w").Set("off", off).Set("len", 1).Set("seed", seed)));
        FillPattern(m.data(), 1, seed);
        ND2_SGE sge = m.Sge(0, 1);
        ASSERT_ND(ND_SUCCESS, p.conn.qp->Write(nullptr, &sge, 1, raddr + off, token, 0));
        ND2_RESULT r;
        ASSERT_TRUE(NextIs(p.rcq, ND_SUCCESS, Nd2RequestTypeWrite, &r));
        PEER_OK(s, p.peer.Wait());
    }
}

}  // namespace
}  // namespace ndc
