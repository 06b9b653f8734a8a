/* NDKPI (see <ndkpi.h>, which includes this file): shared endpoints,
 * connectors, listeners, the adapter dispatch table, and the OpenND entry
 * points that open and close adapters. */
#ifndef OPENND_NDKPI_CONNECT_H
#define OPENND_NDKPI_CONNECT_H

#include "ndkpi.h"

OPENND_EXTERN_C_BEGIN

/* ---- shared endpoint ---- */
typedef NTSTATUS (*NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS)(NDK_SHARED_ENDPOINT *pNdkSharedEndpoint,
                                                             PSOCKADDR pAddress, ULONG *pAddressLength);
typedef struct _NDK_SHARED_ENDPOINT_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSharedEndpoint;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS NdkGetLocalAddress;
} NDK_SHARED_ENDPOINT_DISPATCH;
struct _NDK_SHARED_ENDPOINT {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SHARED_ENDPOINT_DISPATCH *Dispatch;
};

/* ---- connector ---- */
typedef NTSTATUS (*NDK_FN_CONNECT)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, CONST PSOCKADDR pSrcAddress,
                                   ULONG SrcAddressLength, CONST PSOCKADDR pDestAddress, ULONG DestAddressLength,
                                   ULONG InboundReadLimit, ULONG OutboundReadLimit, CONST PVOID pPrivateData,
                                   ULONG PrivateDataLength, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                   PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_CONNECT_WITH_SHARED_ENDPOINT)(
    NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, NDK_SHARED_ENDPOINT *pNdkSharedEndpoint,
    CONST PSOCKADDR pDestAddress, ULONG DestAddressLength, ULONG InboundReadLimit, ULONG OutboundReadLimit,
    CONST PVOID pPrivateData, ULONG PrivateDataLength, NDK_FN_REQUEST_COMPLETION RequestCompletion,
    PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_COMPLETE_CONNECT)(NDK_CONNECTOR *pNdkConnector, NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                                            PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                            PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_ACCEPT)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, ULONG InboundReadLimit,
                                  ULONG OutboundReadLimit, CONST PVOID pPrivateData, ULONG PrivateDataLength,
                                  NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent, PVOID DisconnectEventContext,
                                  NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_REJECT)(NDK_CONNECTOR *pNdkConnector, CONST PVOID pPrivateData, ULONG PrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_CONNECTION_DATA)(NDK_CONNECTOR *pNdkConnector, ULONG *pInboundReadLimit,
                                               ULONG *pOutboundReadLimit, PVOID pPrivateData,
                                               ULONG *pPrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_LOCAL_ADDRESS)(NDK_CONNECTOR *pNdkConnector, PSOCKADDR pAddress, ULONG *pAddressLength);
typedef NTSTATUS (*NDK_FN_GET_PEER_ADDRESS)(NDK_CONNECTOR *pNdkConnector, PSOCKADDR pAddress, ULONG *pAddressLength);
typedef NTSTATUS (*NDK_FN_DISCONNECT)(NDK_CONNECTOR *pNdkConnector, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                      PVOID RequestContext);
typedef struct _NDK_CONNECTOR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseConnector;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CONNECT NdkConnect;
    NDK_FN_CONNECT_WITH_SHARED_ENDPOINT NdkConnectWithSharedEndpoint;
    NDK_FN_COMPLETE_CONNECT NdkCompleteConnect;
    NDK_FN_ACCEPT NdkAccept;
    NDK_FN_REJECT NdkReject;
    NDK_FN_GET_CONNECTION_DATA NdkGetConnectionData;
    NDK_FN_GET_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_GET_PEER_ADDRESS NdkGetPeerAddress;
    NDK_FN_DISCONNECT NdkDisconnect;
} NDK_CONNECTOR_DISPATCH;
struct _NDK_CONNECTOR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CONNECTOR_DISPATCH *Dispatch;
};

/* ---- listener ---- */
typedef VOID (*NDK_FN_CONNECT_EVENT_CALLBACK)(PVOID ConnectEventContext, NDK_CONNECTOR *pNdkConnector);
typedef NTSTATUS (*NDK_FN_LISTEN)(NDK_LISTENER *pNdkListener, CONST PSOCKADDR pAddress, ULONG AddressLength,
                                  NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_GET_LISTENER_LOCAL_ADDRESS)(NDK_LISTENER *pNdkListener, PSOCKADDR pAddress,
                                                      ULONG *pAddressLength);
typedef VOID (*NDK_FN_CONTROL_CONNECT_EVENTS)(NDK_LISTENER *pNdkListener, BOOLEAN Pause);
typedef struct _NDK_LISTENER_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseListener;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_LISTEN NdkListen;
    NDK_FN_GET_LISTENER_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_CONTROL_CONNECT_EVENTS NdkControlConnectEvents;
} NDK_LISTENER_DISPATCH;
struct _NDK_LISTENER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_LISTENER_DISPATCH *Dispatch;
};

/* ---- adapter ---- */
typedef NTSTATUS (*NDK_FN_QUERY_ADAPTER_INFO)(NDK_ADAPTER *pNdkAdapter, NDK_ADAPTER_INFO *pInfo, ULONG *pBufferSize);
typedef NTSTATUS (*NDK_FN_CREATE_CQ)(NDK_ADAPTER *pNdkAdapter, ULONG CqDepth,
                                     NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification, PVOID CqNotificationContext,
                                     GROUP_AFFINITY *Affinity, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_CQ **ppNdkCq);
typedef NTSTATUS (*NDK_FN_CREATE_PD)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_PD **ppNdkPd);
typedef NTSTATUS (*NDK_FN_CREATE_SHARED_ENDPOINT)(NDK_ADAPTER *pNdkAdapter, CONST PSOCKADDR pAddress,
                                                  ULONG AddressLength, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                                  PVOID RequestContext, NDK_SHARED_ENDPOINT **ppNdkSharedEndpoint);
typedef NTSTATUS (*NDK_FN_CREATE_CONNECTOR)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                            PVOID RequestContext, NDK_CONNECTOR **ppNdkConnector);
typedef NTSTATUS (*NDK_FN_CREATE_LISTENER)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent,
                                           PVOID ConnectEventContext, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                           PVOID RequestContext, NDK_LISTENER **ppNdkListener);
typedef NTSTATUS (*NDK_FN_BUILD_LAM)(NDK_ADAPTER *pNdkAdapter, MDL *Mdl, SIZE_T Length,
                                     NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext,
                                     NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM, ULONG *pLAMSize, ULONG *pFBO);
typedef VOID (*NDK_FN_RELEASE_LAM)(NDK_ADAPTER *pNdkAdapter, NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM);
typedef struct _NDK_ADAPTER_DISPATCH {
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_QUERY_ADAPTER_INFO NdkQueryAdapterInfo;
    NDK_FN_CREATE_CQ NdkCreateCq;
    NDK_FN_CREATE_PD NdkCreatePd;
    NDK_FN_CREATE_SHARED_ENDPOINT NdkCreateSharedEndpoint;
    NDK_FN_CREATE_CONNECTOR NdkCreateConnector;
    NDK_FN_CREATE_LISTENER NdkCreateListener;
    NDK_FN_BUILD_LAM NdkBuildLAM;
    NDK_FN_RELEASE_LAM NdkReleaseLAM;
} NDK_ADAPTER_DISPATCH;
struct _NDK_ADAPTER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_ADAPTER_DISPATCH *Dispatch;
};

/* ---- OpenND entry points (libopennd_ndk) ----
 * NdkOpenAdapter: the NDK adapter of the network interface with index IfIndex
 * (if_nametoindex), served by the first ND provider that serves one of its IP
 * addresses. NdkOpenAdapterByAddress: the adapter serving that IP address.
 * Version: Major must be NDK_VERSION_MAJOR and Minor <= NDK_VERSION_MINOR,
 * else NDIS_STATUS_BAD_VERSION; the adapter and its objects report the
 * highest supported version (1.2). Other errors: STATUS_NOT_FOUND (no such
 * interface), STATUS_INVALID_ADDRESS (no provider serves it),
 * STATUS_INVALID_PARAMETER. Opening starts the adapter's callback thread.
 *
 * NdkCloseAdapter closes like NDK_FN_CLOSE_OBJECT: STATUS_SUCCESS once every
 * object created on the adapter is closed and every callback has returned
 * (blocking while closes already started are finishing); STATUS_PENDING if
 * objects are still open or when called from one of the adapter's
 * callbacks: CloseCompletion (optional) runs after the last one closes. */
OPENND_API NTSTATUS NdkOpenAdapter(NDK_VERSION Version, NET_IFINDEX IfIndex, NDK_ADAPTER **ppNdkAdapter);
OPENND_API NTSTATUS NdkOpenAdapterByAddress(NDK_VERSION Version, CONST SOCKADDR *pAddress, ULONG AddressLength,
                                            NDK_ADAPTER **ppNdkAdapter);
OPENND_API NTSTATUS NdkCloseAdapter(NDK_ADAPTER *pNdkAdapter, NDK_FN_CLOSE_COMPLETION CloseCompletion,
                                    PVOID Context);

OPENND_EXTERN_C_END

OPENND_NDK_STATIC_ASSERT(sizeof(NDK_CONNECTOR_DISPATCH) == 11 * sizeof(void *), "NDK_CONNECTOR_DISPATCH layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_ADAPTER_DISPATCH) == 9 * sizeof(void *), "NDK_ADAPTER_DISPATCH layout");

#endif /* OPENND_NDKPI_CONNECT_H */
