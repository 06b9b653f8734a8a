// What every ndconformance case includes: GoogleTest, the support code, and
// the case conventions.
//
// Conventions
//  - A case's test suite name is its group (the summary counts per group);
//    cases parameterised over the addresses are instantiated as "Addr/".
//  - Every wait is bounded (ndc::WaitMs()); a hang is a failure that names
//    the case. Statuses are compared exactly, and printed by name.
//  - A missing feature is a skip only when the provider says so: a call
//    returns ND_NOT_SUPPORTED, or MaxSharedReceiveQueueDepth is 0.
//    NDC_SKIP_UNSUPPORTED does that and nothing else.
//  - Two-sided cases run the other end in a separate process (ndc::Peer).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/control.h"
#include "support/objects.h"
#include "support/peer.h"
#include "support/util.h"

namespace ndc {

// Status comparison that prints names: "Connect(...) returned
// ND_CONNECTION_REFUSED (0xC0000236), expected ND_SUCCESS (0x00000000)".
inline ::testing::AssertionResult NdEq(const char *, const char *actual_text, HRESULT expected, HRESULT actual) {
    if (expected == actual) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << actual_text << "\n  returned " << StatusName(actual) << ", expected "
                                         << StatusName(expected);
}
#define EXPECT_ND(expected, actual) EXPECT_PRED_FORMAT2(::ndc::NdEq, expected, actual)
#define ASSERT_ND(expected, actual) ASSERT_PRED_FORMAT2(::ndc::NdEq, expected, actual)
// One of several acceptable statuses.
inline ::testing::AssertionResult NdIn(const char *, const char *actual_text, std::vector<HRESULT> allowed,
                                       HRESULT actual) {
    std::string list;
    for (HRESULT a : allowed) {
        if (a == actual) return ::testing::AssertionSuccess();
        list += (list.empty() ? "" : " or ") + StatusName(a);
    }
    return ::testing::AssertionFailure() << actual_text << "\n  returned " << StatusName(actual) << ", expected "
                                         << list;
}
template <class... T>
std::vector<HRESULT> Any(T... v) {
    return {static_cast<HRESULT>(v)...};
}
#define EXPECT_ND_IN(allowed, actual) EXPECT_PRED_FORMAT2(::ndc::NdIn, allowed, actual)
#define ASSERT_ND_IN(allowed, actual) ASSERT_PRED_FORMAT2(::ndc::NdIn, allowed, actual)

// A status from a peer reply field.
#define ST(msg, key) static_cast<HRESULT>((msg).I64(key, ::ndc::kHang))

// The only reason a case may skip: the provider reported the feature as
// unsupported.
#define NDC_SKIP_UNSUPPORTED(hr, what)                                                         \
    do {                                                                                       \
        if ((hr) == ND_NOT_SUPPORTED) GTEST_SKIP() << "skipped: " << (what) << " (ND_NOT_SUPPORTED)"; \
    } while (0)

// A peer reply that must be "ok".
#define PEER_OK(var, expr) \
    ::ndc::Msg var = (expr); \
    ASSERT_TRUE(var.ok()) << var.error()

// The addresses the suite runs on (--address; default 127.0.0.1 and ::1,
// those the provider serves).
const std::vector<std::string> &TestAddresses();
void SetTestAddresses(const std::vector<std::string> &a);
IpAddress PrimaryAddress();
std::string AddressParamName(const ::testing::TestParamInfo<std::string> &info);

#define NDC_INSTANTIATE_ADDRESSES(Suite) \
    INSTANTIATE_TEST_SUITE_P(Addr, Suite, ::testing::ValuesIn(::ndc::TestAddresses()), ::ndc::AddressParamName)

// A node (adapter + overlapped file) on the primary address.
class NodeTest : public ::testing::Test {
protected:
    void SetUp() override;
    IpAddress addr;
    Node node;
};

// The same, on the parameter's address.
class AddrTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override;
    IpAddress addr;
    Node node;
};

// The groups' fixtures (shared by every file that adds cases to a group;
// parameterised groups are instantiated once, in their main case file).
class Overlapped : public NodeTest {};
class Limits : public NodeTest {};
class MemoryRegion : public NodeTest {};
class MemoryWindow : public NodeTest {};
class CompletionQueue : public NodeTest {};
class SharedReceiveQueue : public NodeTest {};
class Scale : public AddrTest {};
class QueuePair : public AddrTest {};
class Connection : public AddrTest {};
class Disconnect : public AddrTest {};
class RemoteAccess : public AddrTest {};
class DataIntegrity : public AddrTest {};

// A local QP connected to a peer process that listens and accepts. The
// peer's end is its connection 0; its QP shape and receives come from
// `serve` (fields of the peer's "serve" command: recvs, recvsize, rdepth…).
struct Pair {
    Peer peer;
    Cq rcq, icq;
    Conn conn;
    uint16_t port = 0;
    IpAddress dest;
    // "" or why not. split_cq: separate receive and initiator CQs.
    std::string Connect(Node &node, const IpAddress &address, Msg serve = Msg("serve"),
                        const QpShape &shape = QpShape(), bool split_cq = false, ULONG cq_depth = 1024);
    // Connect's first half: the peer listens (dest) and is sent `request`;
    // the CQ(s) and conn exist, nothing is connected yet.
    std::string Prepare(Node &node, const IpAddress &address, Msg request, const QpShape &shape = QpShape(),
                        bool split_cq = false, ULONG cq_depth = 1024);
    // For cases that drive the active side by hand: Prepare with the peer
    // waiting for the request (getreq), a 64-entry CQ, and conn's connector
    // bound to `address`, port 0.
    std::string PrepareActive(Node &node, const IpAddress &address);
};

// Two local QPs on one CQ connected to one peer process: its connections 0
// and 1, in that order. The peer's `serve` gets n = 2 and the fields given.
struct TwoConnections {
    Peer peer;
    Cq cq;
    Conn c[2];
    std::string Connect(Node &node, const IpAddress &address, Msg serve = Msg("serve"));
};

// The remote buffer a peer registered ("reg").
struct Remote {
    uint64_t addr = 0;
    UINT32 token = 0;
    uint64_t size = 0;
};
// Has the peer register `size` bytes as `name` (flags, optional pattern seed).
Remote PeerRegister(Peer &p, const std::string &name, uint64_t size, ULONG flags = kAllRights, int64_t seed = -1,
                    bool anti = false);

// One completion from the CQ (bounded); a failure names what was expected.
::testing::AssertionResult NextIs(Cq &cq, HRESULT status, ND2_REQUEST_TYPE type, ND2_RESULT *out = nullptr,
                                  uint64_t ms = 0);

std::string PdHex(const std::string &text);

}  // namespace ndc
