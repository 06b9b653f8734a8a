/* NetworkDirect Service Provider Interface, version 2.
 *
 * The ten IND2 interfaces as pure-virtual classes with their methods in the
 * documented vtable order, and their IIDs. Including this header alone also
 * brings in the Win32 types and calls (events, completion ports) and the ND
 * status codes, as <ndspi.h> does on Windows.
 */
#ifndef OPENND_NDSPI_H
#define OPENND_NDSPI_H

#include "opennd/win32.h"
#include "ndstatus.h"
#include "nddef.h"

#ifdef __cplusplus

OPENND_DEFINE_GUID(IID_IND2Provider, 0x49eae6c1, 0x76c4, 0x46d0, 0x80, 0x03, 0x5c, 0x2e, 0xaa, 0x2c, 0x9a, 0x8e);
OPENND_DEFINE_GUID(IID_IND2Adapter, 0xd89c798c, 0x4823, 0x4d69, 0x84, 0x6c, 0xdf, 0xdc, 0xcf, 0xf9, 0xe5, 0xf3);
OPENND_DEFINE_GUID(IID_IND2Overlapped, 0xabf72719, 0xb016, 0x4a40, 0xa6, 0xf7, 0x62, 0x27, 0x91, 0xa7, 0x04, 0x4c);
OPENND_DEFINE_GUID(IID_IND2CompletionQueue, 0x20cc445e, 0x64a0, 0x4cbb, 0xaa, 0x75, 0xf6, 0xa7, 0x25, 0x1f, 0xda,
                   0x9e);
OPENND_DEFINE_GUID(IID_IND2MemoryRegion, 0x55dfea2f, 0xbc56, 0x4982, 0x8a, 0x45, 0x03, 0x01, 0xbe, 0x46, 0xc4, 0x13);
OPENND_DEFINE_GUID(IID_IND2MemoryWindow, 0x070fe1f5, 0x0ab5, 0x4361, 0x88, 0xdb, 0x97, 0x4b, 0xa7, 0x04, 0xd4, 0xb9);
OPENND_DEFINE_GUID(IID_IND2SharedReceiveQueue, 0xaabd67dc, 0x459a, 0x4db1, 0x82, 0x6b, 0x56, 0xcf, 0xcc, 0x27, 0x88,
                   0x83);
OPENND_DEFINE_GUID(IID_IND2QueuePair, 0xeef2f332, 0xb75d, 0x4063, 0xbc, 0xe3, 0x3a, 0x0b, 0xad, 0x2d, 0x02, 0xce);
OPENND_DEFINE_GUID(IID_IND2Connector, 0x7dd615c4, 0x6b4c, 0x4866, 0x95, 0x0c, 0xf3, 0xb1, 0xd2, 0x5a, 0x53, 0x02);
OPENND_DEFINE_GUID(IID_IND2Listener, 0x65d23d83, 0x3a57, 0x4e02, 0x86, 0xa4, 0x35, 0x01, 0x65, 0xc2, 0xd1, 0x30);

struct IND2Overlapped : public IUnknown {
    STDMETHOD(CancelOverlappedRequests)() PURE;
    STDMETHOD(GetOverlappedResult)(OVERLAPPED *pOverlapped, BOOL wait) PURE;
};

struct IND2CompletionQueue : public IND2Overlapped {
    STDMETHOD(GetNotifyAffinity)(USHORT *pGroup, KAFFINITY *pAffinity) PURE;
    STDMETHOD(Resize)(ULONG queueDepth) PURE;
    STDMETHOD(Notify)(ULONG type, OVERLAPPED *pOverlapped) PURE;
    STDMETHOD_(ULONG, GetResults)(ND2_RESULT results[], ULONG nResults) PURE;
};

struct IND2MemoryRegion : public IND2Overlapped {
    STDMETHOD(Register)(const VOID *pBuffer, SIZE_T cbBuffer, ULONG flags, OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(Deregister)(OVERLAPPED *pOverlapped) PURE;
    STDMETHOD_(UINT32, GetLocalToken)() PURE;
    STDMETHOD_(UINT32, GetRemoteToken)() PURE;
};

struct IND2MemoryWindow : public IUnknown {
    STDMETHOD_(UINT32, GetRemoteToken)() PURE;
};

struct IND2SharedReceiveQueue : public IND2Overlapped {
    STDMETHOD(GetNotifyAffinity)(USHORT *pGroup, KAFFINITY *pAffinity) PURE;
    STDMETHOD(Modify)(ULONG queueDepth, ULONG notifyThreshold) PURE;
    STDMETHOD(Notify)(OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(Receive)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge) PURE;
};

struct IND2QueuePair : public IUnknown {
    STDMETHOD(Flush)() PURE;
    STDMETHOD(Send)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge, ULONG flags) PURE;
    STDMETHOD(Receive)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge) PURE;
    STDMETHOD(Bind)(VOID *requestContext, IUnknown *pMemoryRegion, IUnknown *pMemoryWindow, const VOID *pBuffer,
                    SIZE_T cbBuffer, ULONG flags) PURE;
    STDMETHOD(Invalidate)(VOID *requestContext, IUnknown *pMemoryWindow, ULONG flags) PURE;
    STDMETHOD(Read)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge, UINT64 remoteAddress,
                    UINT32 remoteToken, ULONG flags) PURE;
    STDMETHOD(Write)(VOID *requestContext, const ND2_SGE sge[], ULONG nSge, UINT64 remoteAddress,
                     UINT32 remoteToken, ULONG flags) PURE;
};

struct IND2Connector : public IND2Overlapped {
    STDMETHOD(Bind)(const struct sockaddr *pAddress, ULONG cbAddress) PURE;
    STDMETHOD(Connect)(IUnknown *pQueuePair, const struct sockaddr *pDestAddress, ULONG cbDestAddress,
                       ULONG inboundReadLimit, ULONG outboundReadLimit, const VOID *pPrivateData,
                       ULONG cbPrivateData, OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(CompleteConnect)(OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(Accept)(IUnknown *pQueuePair, ULONG inboundReadLimit, ULONG outboundReadLimit,
                      const VOID *pPrivateData, ULONG cbPrivateData, OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(Reject)(const VOID *pPrivateData, ULONG cbPrivateData) PURE;
    STDMETHOD(GetReadLimits)(ULONG *pInboundReadLimit, ULONG *pOutboundReadLimit) PURE;
    STDMETHOD(GetPrivateData)(VOID *pPrivateData, ULONG *pcbPrivateData) PURE;
    STDMETHOD(GetLocalAddress)(struct sockaddr *pAddress, ULONG *pcbAddress) PURE;
    STDMETHOD(GetPeerAddress)(struct sockaddr *pAddress, ULONG *pcbAddress) PURE;
    STDMETHOD(NotifyDisconnect)(OVERLAPPED *pOverlapped) PURE;
    STDMETHOD(Disconnect)(OVERLAPPED *pOverlapped) PURE;
};

struct IND2Listener : public IND2Overlapped {
    STDMETHOD(Bind)(const struct sockaddr *pAddress, ULONG cbAddress) PURE;
    STDMETHOD(Listen)(ULONG backlog) PURE;
    STDMETHOD(GetLocalAddress)(struct sockaddr *pAddress, ULONG *pcbAddress) PURE;
    STDMETHOD(GetConnectionRequest)(IUnknown *pConnector, OVERLAPPED *pOverlapped) PURE;
};

struct IND2Adapter : public IUnknown {
    STDMETHOD(CreateOverlappedFile)(HANDLE *phOverlappedFile) PURE;
    STDMETHOD(Query)(ND2_ADAPTER_INFO *pInfo, ULONG *pcbInfo) PURE;
    STDMETHOD(QueryAddressList)(SOCKET_ADDRESS_LIST *pAddressList, ULONG *pcbAddressList) PURE;
    STDMETHOD(CreateCompletionQueue)(REFIID iid, HANDLE hOverlappedFile, ULONG queueDepth, USHORT group,
                                     KAFFINITY affinity, VOID **ppCompletionQueue) PURE;
    STDMETHOD(CreateMemoryRegion)(REFIID iid, HANDLE hOverlappedFile, VOID **ppMemoryRegion) PURE;
    STDMETHOD(CreateMemoryWindow)(REFIID iid, VOID **ppMemoryWindow) PURE;
    STDMETHOD(CreateSharedReceiveQueue)(REFIID iid, HANDLE hOverlappedFile, ULONG queueDepth, ULONG maxRequestSge,
                                        ULONG notifyThreshold, USHORT group, KAFFINITY affinity,
                                        VOID **ppSharedReceiveQueue) PURE;
    STDMETHOD(CreateQueuePair)(REFIID iid, IUnknown *pReceiveCompletionQueue, IUnknown *pInitiatorCompletionQueue,
                               VOID *context, ULONG receiveQueueDepth, ULONG initiatorQueueDepth,
                               ULONG maxReceiveRequestSge, ULONG maxInitiatorRequestSge, ULONG inlineDataSize,
                               VOID **ppQueuePair) PURE;
    STDMETHOD(CreateQueuePairWithSrq)(REFIID iid, IUnknown *pReceiveCompletionQueue,
                                      IUnknown *pInitiatorCompletionQueue, IUnknown *pSharedReceiveQueue,
                                      VOID *context, ULONG initiatorQueueDepth, ULONG maxInitiatorRequestSge,
                                      ULONG inlineDataSize, VOID **ppQueuePair) PURE;
    STDMETHOD(CreateConnector)(REFIID iid, HANDLE hOverlappedFile, VOID **ppConnector) PURE;
    STDMETHOD(CreateListener)(REFIID iid, HANDLE hOverlappedFile, VOID **ppListener) PURE;
};

struct IND2Provider : public IUnknown {
    STDMETHOD(QueryAddressList)(SOCKET_ADDRESS_LIST *pAddressList, ULONG *pcbAddressList) PURE;
    STDMETHOD(ResolveAddress)(const struct sockaddr *pAddress, ULONG cbAddress, UINT64 *pAdapterId) PURE;
    STDMETHOD(OpenAdapter)(REFIID iid, UINT64 adapterId, VOID **ppAdapter) PURE;
};

/* The ND v1 SPI (HPC Pack 2008 SDK) interfaces, by name only: OpenND serves
 * ND v2 alone (NdOpenV1Adapter answers ND_NOT_SUPPORTED), but code written
 * against Microsoft's ndsupport.h names these types and IIDs. */
struct INDOverlapped;
struct INDCompletionQueue;
struct INDMemoryWindow;
struct INDEndpoint;
struct INDConnector;
struct INDListen;
struct INDAdapter;
struct INDProvider;
OPENND_DEFINE_GUID(IID_INDOverlapped, 0xc859e15e, 0x75e2, 0x4fe3, 0x8d, 0x6d, 0x0d, 0xff, 0x36, 0xf0, 0x24, 0x42);
OPENND_DEFINE_GUID(IID_INDCompletionQueue, 0x1245a633, 0x2a32, 0x473a, 0x83, 0x0c, 0xe0, 0x5d, 0x1f, 0x86, 0x9d,
                   0x02);
/* The v1 header gives the memory window the IID that v2 kept for IND2MemoryWindow. */
OPENND_DEFINE_GUID(IID_INDMemoryWindow, 0x070fe1f5, 0x0ab5, 0x4361, 0x88, 0xdb, 0x97, 0x4b, 0xa7, 0x04, 0xd4, 0xb9);
OPENND_DEFINE_GUID(IID_INDEndpoint, 0xdbd00eab, 0xb679, 0x44a9, 0xbd, 0x65, 0xe8, 0x2f, 0x3d, 0xe1, 0x2d, 0x1a);
OPENND_DEFINE_GUID(IID_INDConnector, 0x1bcaf2d1, 0xe274, 0x4aeb, 0xac, 0x57, 0xcd, 0x5d, 0x43, 0x76, 0xe0, 0xb7);
OPENND_DEFINE_GUID(IID_INDListen, 0xbb902588, 0xba3f, 0x4441, 0x9f, 0xe1, 0x3b, 0x67, 0x95, 0xe4, 0xe6, 0x68);
OPENND_DEFINE_GUID(IID_INDAdapter, 0xa023c5a0, 0x5b73, 0x43bc, 0x8d, 0x20, 0x33, 0xaa, 0x07, 0xe9, 0x51, 0x0f);
OPENND_DEFINE_GUID(IID_INDProvider, 0x0c5dd316, 0x5fdf, 0x47e6, 0xb2, 0xd0, 0x2a, 0x6e, 0xda, 0x8d, 0x39, 0xdd);

/* The two entry points every provider library exports. */
typedef HRESULT (*DLLGETCLASSOBJECT)(REFCLSID rclsid, REFIID riid, LPVOID *ppv);
typedef HRESULT (*DLLCANUNLOADNOW)(void);

#endif /* __cplusplus */
#endif
