/* OpenND extensions: operations NDKPI asks of a provider that ND2 has no
 * call for (fast-register memory regions; later remote invalidation). The
 * NDK layer (libopennd_ndk) uses them; an ND2 application never needs to,
 * and never sees their request types unless it uses them.
 *
 * Ask an adapter which extensions it has with IND2Adapter::QueryInterface(
 * IID_IOpenNdAdapterExt); a provider that does not answer has none. The
 * operations themselves are on the queue pair: IND2QueuePair::
 * QueryInterface(IID_IOpenNdQueuePairExt). */
#ifndef OPENND_ND_EXTENSIONS_H
#define OPENND_ND_EXTENSIONS_H

#include "ndspi.h"

/* IOpenNdAdapterExt::Extensions() bits. */
#define OPENND_EXT_FAST_REGISTER 0x00000001u /* IOpenNdQueuePairExt::FastRegister */

/* ND2_RESULT::RequestType of a FastRegister's completion. ND2's own types
 * are 0-5; a value of the enum must stay within 0-7 (the range its
 * enumerators span: anything else is undefined behaviour in C++). */
#define OPENND_REQUEST_TYPE_FAST_REGISTER ((ND2_REQUEST_TYPE)6)

#ifdef __cplusplus
/* {4F70656E-4E44-4578-7465-6E7300000001} */
OPENND_DEFINE_GUID(IID_IOpenNdAdapterExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00, 0x00,
                   0x01);
/* {4F70656E-4E44-4578-7465-6E7300000002} */
OPENND_DEFINE_GUID(IID_IOpenNdQueuePairExt, 0x4F70656E, 0x4E44, 0x4578, 0x74, 0x65, 0x6E, 0x73, 0x00, 0x00, 0x00,
                   0x02);

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
};
#endif

#endif
