/* Winsock service-provider catalog calls, as NetworkDirect uses them: the
 * catalog of ND providers (WSCInstallProvider and friends). On Linux the
 * catalog is a directory of drop-in files (see opennd/catalog.h). */
#ifndef OPENND_WS2SPI_H
#define OPENND_WS2SPI_H

#include "opennd/win32.h"

#define WSAPROTOCOL_LEN 255
#define MAX_PROTOCOL_CHAIN 7
#define BASE_PROTOCOL 1
#define LAYERED_PROTOCOL 0

/* dwServiceFlags1 bits ND providers register with. */
#define XP1_CONNECTIONLESS 0x00000001
#define XP1_GUARANTEED_DELIVERY 0x00000002
#define XP1_GUARANTEED_ORDER 0x00000004
#define XP1_MESSAGE_ORIENTED 0x00000008
#define XP1_PSEUDO_STREAM 0x00000010
#define XP1_GRACEFUL_CLOSE 0x00000020
#define XP1_EXPEDITED_DATA 0x00000040
#define XP1_CONNECT_DATA 0x00000080
#define XP1_DISCONNECT_DATA 0x00000100
#define XP1_SUPPORT_BROADCAST 0x00000200
#define XP1_SUPPORT_MULTIPOINT 0x00000400
#define XP1_QOS_SUPPORTED 0x00002000
#define XP1_IFS_HANDLES 0x00020000

/* dwProviderFlags bits. */
#define PFL_MULTIPLE_PROTO_ENTRIES 0x00000001
#define PFL_RECOMMENDED_PROTO_ENTRY 0x00000002
#define PFL_HIDDEN 0x00000004
#define PFL_MATCHES_PROTOCOL_ZERO 0x00000008
#define PFL_NETWORKDIRECT_PROVIDER 0x00000010

/* The address family numbers stored in the catalog are Linux's (AF_INET 2,
 * AF_INET6 10); the catalog files spell them by name. */

/* The Winsock error codes the catalog calls report through lpErrno
 * (WSAEFAULT, WSAEINVAL, WSAENOBUFS, WSAEACCES, WSANO_RECOVERY ...) are in
 * <opennd/win32.h>, as they are in <winsock2.h>. */

typedef struct _WSAPROTOCOLCHAIN {
    int ChainLen;
    DWORD ChainEntries[MAX_PROTOCOL_CHAIN];
} WSAPROTOCOLCHAIN, *LPWSAPROTOCOLCHAIN;

typedef struct _WSAPROTOCOL_INFOW {
    DWORD dwServiceFlags1;
    DWORD dwServiceFlags2;
    DWORD dwServiceFlags3;
    DWORD dwServiceFlags4;
    DWORD dwProviderFlags;
    GUID ProviderId;
    DWORD dwCatalogEntryId;
    WSAPROTOCOLCHAIN ProtocolChain;
    int iVersion;
    int iAddressFamily;
    int iMaxSockAddr;
    int iMinSockAddr;
    int iSocketType;
    int iProtocol;
    int iProtocolMaxOffset;
    int iNetworkByteOrder;
    int iSecurityScheme;
    DWORD dwMessageSize;
    DWORD dwProviderReserved;
    WCHAR szProtocol[WSAPROTOCOL_LEN + 1];
} WSAPROTOCOL_INFOW, *LPWSAPROTOCOL_INFOW;

OPENND_EXTERN_C_BEGIN

/* Adds a provider: one catalog entry per WSAPROTOCOL_INFOW (ND providers
 * register one, AF_INET6, covering both families). 0, or SOCKET_ERROR with
 * *lpErrno set (WSAEINVAL bad arguments or a library path that is not
 * absolute; WSAEACCES no permission on the catalog; WSANO_RECOVERY I/O error). */
OPENND_API int WSCInstallProvider(LPGUID lpProviderId, const WCHAR *lpszProviderDllPath,
                                  const LPWSAPROTOCOL_INFOW lpProtocolInfoList, DWORD dwNumberOfEntries,
                                  LPINT lpErrno);
/* Removes every entry of the provider. WSAEINVAL if there is none. */
OPENND_API int WSCDeinstallProvider(LPGUID lpProviderId, LPINT lpErrno);
/* Lists the valid catalog entries in catalog order. lpiProtocols is ignored
 * (NULL: all). Returns the count, or SOCKET_ERROR with WSAENOBUFS and
 * *lpdwBufferLength set to the bytes needed. */
OPENND_API int WSCEnumProtocols(LPINT lpiProtocols, LPWSAPROTOCOL_INFOW lpProtocolBuffer, LPDWORD lpdwBufferLength,
                                LPINT lpErrno);
/* The library path of a provider, as stored (relative paths resolved). */
OPENND_API int WSCGetProviderPath(LPGUID lpProviderId, WCHAR *lpszProviderDllPath, LPINT lpProviderDllPathLen,
                                  LPINT lpErrno);

OPENND_EXTERN_C_END

#endif
