/* NetworkDirect helper library: provider discovery and adapter opening over
 * the catalog (NdStartup ... NdOpenAdapter). */
#ifndef OPENND_NDSUPPORT_H
#define OPENND_NDSUPPORT_H

#include "ndspi.h"

#define ND_QUERY_EXCLUDE_EMULATOR_ADDRESSES 0x00000001
#define ND_QUERY_EXCLUDE_NDv1_ADDRESSES 0x00000002
#define ND_QUERY_EXCLUDE_NDv2_ADDRESSES 0x00000004

#ifdef __cplusplus
OPENND_EXTERN_C_BEGIN

OPENND_API HRESULT NdStartup(void);
OPENND_API HRESULT NdCleanup(void);
OPENND_API void NdFlushProviders(void);
OPENND_API HRESULT NdQueryAddressList(DWORD flags, SOCKET_ADDRESS_LIST *pAddressList, SIZE_T *pcbAddressList);
OPENND_API HRESULT NdResolveAddress(const struct sockaddr *pRemoteAddress, SIZE_T cbRemoteAddress,
                                    struct sockaddr *pLocalAddress, SIZE_T *pcbLocalAddress);
OPENND_API HRESULT NdCheckAddress(const struct sockaddr *pAddress, SIZE_T cbAddress);
OPENND_API HRESULT NdOpenAdapter(REFIID iid, const struct sockaddr *pAddress, SIZE_T cbAddress, void **ppIAdapter);
/* Microsoft's ND v1 entry point, declared as its ndsupport.h declares it. OpenND
 * has no v1 providers: always ND_NOT_SUPPORTED, with *ppIAdapter set to NULL. */
OPENND_API HRESULT NdOpenV1Adapter(const struct sockaddr *pAddress, SIZE_T cbAddress, INDAdapter **ppIAdapter);

OPENND_EXTERN_C_END
#endif

#endif
