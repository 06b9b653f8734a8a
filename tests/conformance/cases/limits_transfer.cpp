// Limits: the transfer length, one past MaxTransferLength, for Read.
#include "suite.h"

namespace ndc {
namespace {

// R096: a Read of more than MaxTransferLength bytes is refused: at
// once (ND_BUFFER_OVERFLOW) or in the completion (ND_DATA_OVERRUN).
TEST_F(Limits, ReadLengthOnePastTheLimitR096) {
    ULONG max = node.info.MaxTransferLength;
    QpShape s;
    s.initiator_sge = std::min<ULONG>(2, std::min(node.info.MaxInitiatorSge, node.info.MaxReadSge));
    Pair p;
    std::string err = p.Connect(node, addr, Msg("serve"), s);
    ASSERT_TRUE(err.empty()) << err;
    // One SGE of max + 1 bytes; if that does not fit a ULONG, two SGEs over
    // one region of half the size. The memory is never touched.
    bool two = max == 0xFFFFFFFFu;
    if (two && s.initiator_sge < 2) {
        SUCCEED() << "MaxTransferLength is the largest ULONG and only one SGE is allowed: it cannot be exceeded";
        return;
    }
    size_t half = two ? max / 2 + 1 : size_t(max) + 1;
    Mem m(half);
    ASSERT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    Remote rb = PeerRegister(p.peer, "rb", uint64_t(max) + 1);  // large enough: only the length is wrong
    ND2_SGE sge[2] = {m.Sge(0, half), m.Sge(0, two ? max + 1 - half : 0)};
    ULONG nsge = two ? 2 : 1;
    auto outcome = [&](HRESULT hr, ND2_REQUEST_TYPE type) {
        if (hr == ND_SUCCESS) {
            ND2_RESULT r;
            if (!p.rcq.Next(&r)) return kHang;
            EXPECT_EQ(r.RequestType, type);
            return r.Status;
        }
        return hr;
    };
    EXPECT_ND_IN(Any(ND_BUFFER_OVERFLOW, ND_DATA_OVERRUN),
                 outcome(p.conn.qp->Read(nullptr, sge, nsge, rb.addr, rb.token, 0), Nd2RequestTypeRead))
        << "Read of MaxTransferLength + 1 bytes";
}

}  // namespace
}  // namespace ndc
