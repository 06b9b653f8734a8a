// The verbs statuses as ND results (VERBS-MAPPING §3): the table Windows
// ND applications are written against.
#include <gtest/gtest.h>

#include "status.h"

namespace opennd::verbs {
namespace {

TEST(VerbsStatus, CompletionStatusesAreTheWindowsProvidersOnes) {
    EXPECT_EQ(CompletionStatus(IBV_WC_SUCCESS), ND_SUCCESS);
    EXPECT_EQ(CompletionStatus(IBV_WC_WR_FLUSH_ERR), ND_CANCELED);
    EXPECT_EQ(CompletionStatus(IBV_WC_LOC_LEN_ERR), ND_DATA_OVERRUN);  // a receive too small
    // Remote access errors are access violations, not ND_REMOTE_ERROR.
    EXPECT_EQ(CompletionStatus(IBV_WC_REM_ACCESS_ERR), ND_ACCESS_VIOLATION);
    EXPECT_EQ(CompletionStatus(IBV_WC_LOC_PROT_ERR), ND_ACCESS_VIOLATION);
    EXPECT_EQ(CompletionStatus(IBV_WC_LOC_ACCESS_ERR), ND_ACCESS_VIOLATION);
    EXPECT_EQ(CompletionStatus(IBV_WC_MW_BIND_ERR), ND_ACCESS_VIOLATION);
    EXPECT_EQ(CompletionStatus(IBV_WC_REM_INV_REQ_ERR), kStatusDataError);
    EXPECT_EQ(CompletionStatus(IBV_WC_REM_OP_ERR), kStatusDataError);
    EXPECT_EQ(CompletionStatus(IBV_WC_BAD_RESP_ERR), kStatusDataError);
    // A Send with no receive posted (RNR) and a lost peer: ND_IO_TIMEOUT,
    // never ND_TIMEOUT (a success code ND1 applications retry on).
    EXPECT_EQ(CompletionStatus(IBV_WC_RNR_RETRY_EXC_ERR), ND_IO_TIMEOUT);
    EXPECT_EQ(CompletionStatus(IBV_WC_RETRY_EXC_ERR), ND_IO_TIMEOUT);
    EXPECT_EQ(CompletionStatus(IBV_WC_REM_ABORT_ERR), kStatusRequestAborted);
    EXPECT_EQ(CompletionStatus(IBV_WC_LOC_QP_OP_ERR), ND_ACCESS_VIOLATION);  // rxe's for a deregistered region
    // A window's Bind or Invalidate fails only as ND2_RESULT's matrix allows.
    EXPECT_EQ(CompletionStatus(IBV_WC_REM_ACCESS_ERR, Nd2RequestTypeBind), ND_INTERNAL_ERROR);
    EXPECT_EQ(CompletionStatus(IBV_WC_WR_FLUSH_ERR, Nd2RequestTypeInvalidate), ND_CANCELED);
    EXPECT_EQ(CompletionStatus(IBV_WC_SUCCESS, Nd2RequestTypeBind), ND_SUCCESS);
    EXPECT_EQ(CompletionStatus(IBV_WC_FATAL_ERR), ND_INTERNAL_ERROR);
    EXPECT_EQ(CompletionStatus(IBV_WC_GENERAL_ERR), ND_INTERNAL_ERROR);
    // Every failure is a failure (no verbs error reads as success).
    for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_TM_RNDV_INCOMPLETE; ++s)
        EXPECT_TRUE(FAILED(CompletionStatus(static_cast<ibv_wc_status>(s)))) << ibv_wc_status_str(ibv_wc_status(s));
}

// The statuses that name no cause: the request's memory tells.
TEST(VerbsStatus, AFailureOverMemoryNoLongerRegisteredIsAnAccessViolation) {
    const auto gone = [] { return true; };
    const auto live = [] { return false; };
    int asked = 0;
    const auto counted = [&] { ++asked; return false; };
    // rxe: deregistered memory, a receive too small; rxe and siw: a request
    // the connection broke under.
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_QP_OP_ERR, Nd2RequestTypeReceive, gone), ND_ACCESS_VIOLATION);
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_QP_OP_ERR, Nd2RequestTypeSend, gone), ND_ACCESS_VIOLATION);
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_QP_OP_ERR, Nd2RequestTypeReceive, live), ND_DATA_OVERRUN);
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_QP_OP_ERR, Nd2RequestTypeSend, live), ND_CANCELED);
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_QP_OP_ERR, Nd2RequestTypeWrite, live), ND_CANCELED);
    // siw: a receive into memory that is not registered.
    EXPECT_EQ(LocalFailure(IBV_WC_GENERAL_ERR, Nd2RequestTypeReceive, gone), ND_ACCESS_VIOLATION);
    EXPECT_EQ(LocalFailure(IBV_WC_GENERAL_ERR, Nd2RequestTypeReceive, live), ND_INTERNAL_ERROR);
    // A window operation fails only as ND2_RESULT's matrix allows.
    EXPECT_EQ(LocalFailure(IBV_WC_GENERAL_ERR, Nd2RequestTypeBind, gone), ND_INTERNAL_ERROR);
    // Every other status is the table's, and the keys are not looked up
    // for it (a lock on the completion path).
    EXPECT_EQ(LocalFailure(IBV_WC_SUCCESS, Nd2RequestTypeReceive, counted), ND_SUCCESS);
    EXPECT_EQ(LocalFailure(IBV_WC_WR_FLUSH_ERR, Nd2RequestTypeReceive, counted), ND_CANCELED);
    EXPECT_EQ(LocalFailure(IBV_WC_LOC_LEN_ERR, Nd2RequestTypeReceive, counted), ND_DATA_OVERRUN);
    EXPECT_EQ(asked, 0);
}

TEST(VerbsStatus, ConnectFailures) {
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_REJECTED, 8), ND_CONNECTION_REFUSED);  // no listener
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_REJECTED, 28), ND_CONNECTION_REFUSED);  // the application
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_REJECTED, -ECONNREFUSED), ND_CONNECTION_REFUSED);  // iWARP
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT), ND_IO_TIMEOUT);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH), ND_NETWORK_UNREACHABLE);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT), ND_HOST_UNREACHABLE);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_ADDR_ERROR, -ENODEV), ND_INVALID_ADDRESS);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT), ND_HOST_UNREACHABLE);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL), ND_CONNECTION_ABORTED);
    EXPECT_EQ(ConnectFailure(RDMA_CM_EVENT_DEVICE_REMOVAL, 0), ND_DEVICE_REMOVED);
}

}  // namespace
}  // namespace opennd::verbs
