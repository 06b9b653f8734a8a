// What a verbs completion or rdma_cm event means to an ND application
// (VERBS-MAPPING §3: Microsoft's own mlx4 ND2 table, which Windows ND
// applications are written against, where it differs from the ND docs).
// Pure functions, tested on any host (tests/verbs/status_test.cpp).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ndspi.h"
#include "opennd/nd_extensions.h"

namespace opennd::verbs {

// STATUS_DATA_ERROR and STATUS_REQUEST_ABORTED: what MS's mlx4 provider
// returns for a malformed or aborted request at the responder.
inline constexpr HRESULT kStatusDataError = static_cast<HRESULT>(0xC000003Eu);
inline constexpr HRESULT kStatusRequestAborted = static_cast<HRESULT>(0xC0000240u);

// A work completion's status as ND2_RESULT::Status (§3.1), for a request
// of `type`: a window's Bind or Invalidate fails only as the matrix of
// ND2_RESULT allows (SPI §2.5.4).
inline HRESULT CompletionStatus(ibv_wc_status s, ND2_REQUEST_TYPE type = Nd2RequestTypeSend);

inline HRESULT VerbsStatus(ibv_wc_status s) {
    switch (s) {
    case IBV_WC_SUCCESS: return ND_SUCCESS;
    case IBV_WC_LOC_LEN_ERR: return ND_DATA_OVERRUN;  // the receive was too small
    case IBV_WC_WR_FLUSH_ERR: return ND_CANCELED;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_QP_OP_ERR:  // rxe: a receive or Send whose region was deregistered
    case IBV_WC_MW_BIND_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_REM_ACCESS_ERR: return ND_ACCESS_VIOLATION;
    case IBV_WC_BAD_RESP_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR: return kStatusDataError;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:  // a Send with no receive posted (ND_IO_TIMEOUT, not ND_TIMEOUT)
    case IBV_WC_RESP_TIMEOUT_ERR: return ND_IO_TIMEOUT;
    case IBV_WC_REM_ABORT_ERR: return kStatusRequestAborted;
    default: return ND_INTERNAL_ERROR;  // LOC_EEC_OP, LOC_RDD_VIOL, FATAL, GENERAL, ...
    }
}

inline HRESULT CompletionStatus(ibv_wc_status s, ND2_REQUEST_TYPE type) {
    const HRESULT hr = VerbsStatus(s);
    if (type != Nd2RequestTypeBind && type != Nd2RequestTypeInvalidate && type != OPENND_REQUEST_TYPE_FAST_REGISTER)
        return hr;
    return hr == ND_SUCCESS || hr == ND_CANCELED ? hr : ND_INTERNAL_ERROR;
}

// A failed request whose status names no cause the application can act
// on, told by its memory (`key_gone()`: the request's first key is not,
// or no longer, a live registration of this provider; asked only then).
// rxe reports LOC_QP_OP_ERR for memory deregistered under a request, for
// a message longer than the receive and for a link gone down, and siw for
// a Send or Write it was transmitting when the connection broke; siw
// GENERAL_ERR for a receive whose memory is not registered
// (siw_proc_send's failed SGE check, then siw_rdmap_complete). Over live
// memory, an initiator request the queue pair could not carry is flushed
// (ND_CANCELED), as Windows completes what was outstanding when a
// connection is lost.
template <class KeyGone>
HRESULT LocalFailure(ibv_wc_status s, ND2_REQUEST_TYPE type, KeyGone &&key_gone) {
    if (s != IBV_WC_LOC_QP_OP_ERR && s != IBV_WC_GENERAL_ERR) return CompletionStatus(s, type);
    if (key_gone()) return CompletionStatus(IBV_WC_LOC_PROT_ERR, type);
    if (s == IBV_WC_GENERAL_ERR) return ND_INTERNAL_ERROR;
    return type == Nd2RequestTypeReceive ? ND_DATA_OVERRUN : ND_CANCELED;
}

// How a failed Connect ends, from rdma_cm's event and its status (§3.3).
inline HRESULT ConnectFailure(rdma_cm_event_type type, int status) {
    switch (type) {
    case RDMA_CM_EVENT_ADDR_ERROR:
        if (status == -ENETUNREACH) return ND_NETWORK_UNREACHABLE;
        if (status == -ENODEV || status == -EADDRNOTAVAIL || status == -EINVAL) return ND_INVALID_ADDRESS;
        return ND_HOST_UNREACHABLE;
    case RDMA_CM_EVENT_ROUTE_ERROR: return ND_HOST_UNREACHABLE;
    case RDMA_CM_EVENT_REJECTED: return ND_CONNECTION_REFUSED;  // every reason, no listener included
    case RDMA_CM_EVENT_UNREACHABLE: return ND_IO_TIMEOUT;        // never ND_TIMEOUT in ND2
    case RDMA_CM_EVENT_DEVICE_REMOVAL: return ND_DEVICE_REMOVED;
    default: return ND_CONNECTION_ABORTED;  // CONNECT_ERROR and anything unexpected
    }
}

}  // namespace opennd::verbs
