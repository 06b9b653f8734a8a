/* OpenND extensions: operations NDKPI asks of a provider that ND2 has no
 * call for (fast-register memory regions, remote invalidation). The
 * NDK layer (libopennd_ndk) uses them; an ND2 application never needs to,
 * and never sees their request types unless it uses them.
 *
 * Ask an adapter which extensions it has with IND2Adapter::QueryInterface(
 * IID_IOpenNdAdapterExt); a provider that does not answer has none. The
 * operations themselves are on the queue pair: IND2QueuePair::
 * QueryInterface(IID_IOpenNdQueuePairExt); what a receiver learns of a
 * remote invalidation comes through IND2CompletionQueue::QueryInterface(
 * IID_IOpenNdCompletionQueueExt). */
#ifndef OPENND_ND_EXTENSIONS_H
#define OPENND_ND_EXTENSIONS_H

#include "ndspi.h"

/* IOpenNdAdapterExt::Extensions() bits. */
#define OPENND_EXT_FAST_REGISTER 0x00000001u   /* IOpenNdQueuePairExt::FastRegister */
#define OPENND_EXT_SEND_INVALIDATE 0x00000002u /* IOpenNdQueuePairExt::SendInvalidate */
#define OPENND_EXT_SHARED_ENDPOINT 0x00000004u /* IOpenNdConnectorExt::BindShared */

/* ND2_RESULT::RequestType of a FastRegister's completion. ND2's own types
 * are 0-5; a value of the enum must stay within 0-7 (the range its
 * enumerators span: anything else is undefined behaviour in C++). */
#define OPENND_REQUEST_TYPE_FAST_REGISTER ((ND2_REQUEST_TYPE)6)
/* RequestType, in IOpenNdCompletionQueueExt::GetResultsEx only, of a receive
 * whose Send invalidated one of this adapter's tokens (InvalidatedToken).
 * IND2CompletionQueue::GetResults reports the same completion as an
 * ordinary ND2_REQUEST_TYPE_RECEIVE. */
#define OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE ((ND2_REQUEST_TYPE)7)

/* ND2_RESULT and the token a Send with Invalidate invalidated. The first five
 * members are ND2_RESULT's, at the same offsets; InvalidatedToken sits in
 * what is ND2_RESULT's tail padding on LP64, so both are 32 bytes. */
typedef struct _OPENND_RESULT_EX {
    HRESULT Status;
    ULONG BytesTransferred;
    VOID *QueuePairContext;
    VOID *RequestContext;
    ND2_REQUEST_TYPE RequestType;
    UINT32 InvalidatedToken; /* RequestType OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE only; else 0 */
} OPENND_RESULT_EX;

#ifdef __cplusplus
/* {4F70656E-4E44-4578-7465-6E7300000001} */
OPENND_DEFINE_GUID(IID_IOpenNdAdapterExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00, 0x00,
                   0x01);
/* {4F70656E-4E44-4578-7465-6E7300000002} */
OPENND_DEFINE_GUID(IID_IOpenNdQueuePairExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00, 0x00,
                   0x02);
/* {4F70656E-4E44-4578-7465-6E7300000004} */
OPENND_DEFINE_GUID(IID_IOpenNdConnectorExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00, 0x00,
                   0x04);
/* {4F70656E-4E44-4578-7465-6E7300000003} */
OPENND_DEFINE_GUID(IID_IOpenNdCompletionQueueExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00,
                   0x00, 0x03);

struct IOpenNdAdapterExt : public IUnknown {
    /* OPENND_EXT_* bits: the extensions this adapter's objects carry out. */
    STDMETHOD_(ULONG, Extensions)() PURE;
};

struct IOpenNdQueuePairExt : public IUnknown {
    /* Bind, with the window addressed by the peer at `remote_address`
     * instead of at `buffer`: a Read or Write of [remote_address + i] through
     * the window's token reaches buffer[i], for i < size. This is a
     * fast-registered region (NDKPI's NdkFastRegister) as a window: the
     * same checks, flags and ordering as IND2QueuePair::Bind, reachable
     * through this queue pair's connection (and, on a provider whose
     * windows are registrations, through the adapter's other connections
     * too), Invalidate and Release of the window as for any window.
     * Completes with RequestType OPENND_REQUEST_TYPE_FAST_REGISTER.
     * ND_INVALID_PARAMETER_6 if remoteAddress + cbBuffer passes the end of
     * the address space. ND_NOT_SUPPORTED where the adapter does not report
     * OPENND_EXT_FAST_REGISTER, and (returned, nothing queued) for a
     * remoteAddress other than pBuffer where the device can place a region
     * only at its own address (siw). */
    STDMETHOD(FastRegister)(VOID *requestContext, IUnknown *pMemoryRegion, IUnknown *pMemoryWindow,
                            const VOID *pBuffer, SIZE_T cbBuffer, UINT64 remoteAddress, ULONG flags) PURE;
    /* IND2QueuePair::Send (the same checks, flags, ordering and completion)
     * that also invalidates `remoteToken` at the peer once the message is
     * placed: RFC 5040's Send with Invalidate, NDKPI's NdkSendAndInvalidate.
     * The token is a memory window's or a fast-registered region's the peer
     * bound through this connection; the peer's receive completes with
     * OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE and the token (GetResultsEx),
     * and from then on the token gives no access. A token the peer cannot
     * invalidate (unknown, a memory region's, bound through another
     * connection) invalidates nothing: this request completes with
     * ND_ACCESS_VIOLATION (the peer reports the error), the peer's receive
     * with ND_REMOTE_ERROR, and the connection fails. ND_NOT_SUPPORTED
     * where the adapter does not report OPENND_EXT_SEND_INVALIDATE. */
    STDMETHOD(SendInvalidate)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge, ULONG flags,
                              UINT32 remoteToken) PURE;
};

struct IOpenNdConnectorExt : public IUnknown {
    /* IND2Connector::Bind, sharing the address (NDKPI's shared endpoints):
     * every connector bound to the same address and port this way, in this
     * process or another of the same user, has it at once and makes its own
     * connection from it (to different destinations: a second connection
     * between the same two addresses and ports may be refused, as TCP
     * refuses it). While any holds it, a Bind that does not share it, or a
     * listener, is refused the address. Port 0: a free port, which
     * GetLocalAddress then reports, for the others to bind. Bind's statuses
     * otherwise; ND_NOT_SUPPORTED where the adapter does not report
     * OPENND_EXT_SHARED_ENDPOINT. */
    STDMETHOD(BindShared)(const struct sockaddr *pAddress, ULONG cbAddress) PURE;
};

struct IOpenNdCompletionQueueExt : public IUnknown {
    /* IND2CompletionQueue::GetResults with OPENND_RESULT_EX entries: the same
     * entries, in the same order, except that a receive whose Send
     * invalidated a token has RequestType OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE
     * and the token. The two calls take from one queue. */
    STDMETHOD_(ULONG, GetResultsEx)(OPENND_RESULT_EX results[], ULONG nResults) PURE;
};
#endif

#endif
