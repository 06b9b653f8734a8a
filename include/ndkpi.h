/* NetworkDirect Kernel Provider Interface (NDKPI 1.2) for Linux programs.
 *
 * The NDK object model: every object starts with an NDK_OBJECT_HEADER and a
 * pointer to its dispatch table; calls go through the table, completions and
 * events come back through consumer callbacks. Tables list their functions in
 * the documented order. Valid C and C++.
 *
 * Callback model (see ndk/README.md):
 *  - create, close and request calls return STATUS_SUCCESS (done, no
 *    callback), STATUS_PENDING (exactly one completion callback later) or an
 *    error (nothing happened, no callback);
 *  - work requests (Send, Receive, Read, ...) return STATUS_SUCCESS (one CQ
 *    entry later, unless SILENT_SUCCESS and it succeeds) or an error (none);
 *  - callbacks run on one thread per adapter, never inside the call that
 *    caused them; a callback may call any function, including closing its
 *    own object;
 *  - a close completes after every callback on the object has returned;
 *    closing a parent first is legal and completes once its children closed.
 * The connection objects, the adapter and the OpenND entry points
 * (NdkOpenAdapter, NdkCloseAdapter) are in opennd/ndkpi_connect.h, included
 * at the end.
 */
#ifndef OPENND_NDKPI_H
#define OPENND_NDKPI_H

#include "opennd/ndkinfo.h"
#include "opennd/ndkstatus.h"
#include "opennd/ndktypes.h"

OPENND_EXTERN_C_BEGIN

typedef enum _NDK_OBJECT_TYPE {
    NdkObjectTypeUndefined = 0,
    NdkObjectTypeAdapter = 1,
    NdkObjectTypeQp = 2,
    NdkObjectTypeCq = 3,
    NdkObjectTypeMr = 4,
    NdkObjectTypeMw = 5,
    NdkObjectTypePd = 6,
    NdkObjectTypeSharedEndpoint = 7,
    NdkObjectTypeConnector = 8,
    NdkObjectTypeListener = 9,
    NdkObjectTypeSrq = 10,
    NdkObjectTypeMax = 11
} NDK_OBJECT_TYPE;

typedef struct _NDK_OBJECT_HEADER_RESERVED_BLOCK {
    PVOID rf[4]; /* reserved: zero, not touched by consumers */
} NDK_OBJECT_HEADER_RESERVED_BLOCK;

typedef struct _NDK_OBJECT_HEADER {
    NDK_VERSION Version;
    NDK_OBJECT_TYPE ObjectType;
    NDK_OBJECT_HEADER_RESERVED_BLOCK NdkReserved;
} NDK_OBJECT_HEADER;

typedef struct _NDK_RESULT {
    NTSTATUS Status;
    ULONG BytesTransferred; /* valid for receives */
    PVOID QPContext;
    PVOID RequestContext;
} NDK_RESULT;

typedef enum _NDK_OPERATION_TYPE {
    NdkOperationTypeReceive = 1,
    NdkOperationTypeReceiveAndInvalidate = 32769,
    NdkOperationTypeSend = 2,
    NdkOperationTypeFastRegister = 4,
    NdkOperationTypeBind = 8,
    NdkOperationTypeInvalidate = 16,
    NdkOperationTypeRead = 32,
    NdkOperationTypeWrite = 64
} NDK_OPERATION_TYPE;

typedef struct _NDK_RESULT_EX {
    NTSTATUS Status;
    ULONG BytesTransferred;
    PVOID QPContext;
    PVOID RequestContext;
    NDK_OPERATION_TYPE Type;
    ULONG_PTR TypeSpecificCompletionOutput; /* invalidated token (ReceiveAndInvalidate) */
} NDK_RESULT_EX;

typedef PHYSICAL_ADDRESS NDK_LOGICAL_ADDRESS;

typedef struct _NDK_LOGICAL_ADDRESS_MAPPING {
    PVOID AdapterContext;
    ULONG AdapterPageCount;
    NDK_LOGICAL_ADDRESS AdapterPageArray[1]; /* AdapterPageCount entries */
} NDK_LOGICAL_ADDRESS_MAPPING;

typedef struct _NDK_SGE {
    union {
        PVOID VirtualAddress;
        NDK_LOGICAL_ADDRESS LogicalAddress;
    };
    ULONG Length;
    UINT32 MemoryRegionToken;
} NDK_SGE;

/* ---- consumer callbacks ---- */
typedef VOID (*NDK_FN_CLOSE_COMPLETION)(PVOID Context);
typedef VOID (*NDK_FN_REQUEST_COMPLETION)(PVOID Context, NTSTATUS Status);
typedef VOID (*NDK_FN_CREATE_COMPLETION)(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER *pNdkObject);
typedef VOID (*NDK_FN_CQ_NOTIFICATION_CALLBACK)(PVOID CqNotificationContext, NTSTATUS CqStatus);
typedef VOID (*NDK_FN_SRQ_NOTIFICATION_CALLBACK)(PVOID SrqNotificationContext, NTSTATUS SrqStatus);
typedef VOID (*NDK_FN_DISCONNECT_EVENT_CALLBACK)(PVOID DisconnectEventContext);

/* ---- functions every object has ---- */
typedef NTSTATUS (*NDK_FN_CLOSE_OBJECT)(NDK_OBJECT_HEADER *pNdkObject, NDK_FN_CLOSE_COMPLETION CloseCompletion,
                                        PVOID RequestContext);
typedef struct _NDK_EXTENSION_INTERFACE {
    CONST VOID *Dispatch;
} NDK_EXTENSION_INTERFACE;
typedef NTSTATUS (*NDK_FN_QUERY_EXTENSION_INTERFACE)(NDK_OBJECT_HEADER *pNdkObject, GUID *ExtensionInterfaceID,
                                                     NDK_VERSION ExtensionInterfaceVersion,
                                                     NDK_EXTENSION_INTERFACE *pExtensionInterface);

typedef struct _NDK_ADAPTER NDK_ADAPTER;
typedef struct _NDK_PD NDK_PD;
typedef struct _NDK_CQ NDK_CQ;
typedef struct _NDK_MR NDK_MR;
typedef struct _NDK_MW NDK_MW;
typedef struct _NDK_SRQ NDK_SRQ;
typedef struct _NDK_QP NDK_QP;
typedef struct _NDK_SHARED_ENDPOINT NDK_SHARED_ENDPOINT;
typedef struct _NDK_CONNECTOR NDK_CONNECTOR;
typedef struct _NDK_LISTENER NDK_LISTENER;

/* ---- CQ ---- */
#define NDK_CQ_NOTIFY_ERRORS 0
#define NDK_CQ_NOTIFY_ANY 1
#define NDK_CQ_NOTIFY_SOLICITED 2
typedef NTSTATUS (*NDK_FN_RESIZE_CQ)(NDK_CQ *pNdkCq, ULONG CqDepth, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext);
typedef VOID (*NDK_FN_ARM_CQ)(NDK_CQ *pNdkCq, ULONG Type);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS)(NDK_CQ *pNdkCq, NDK_RESULT Results[], ULONG nResults);
typedef NTSTATUS (*NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION)(NDK_CQ *pNdkCq, ULONG ModerationInterval,
                                                           ULONG ModerationCount);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS_EX)(NDK_CQ *pNdkCq, NDK_RESULT_EX Results[], ULONG nResults);
typedef struct _NDK_CQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseCq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_RESIZE_CQ NdkResizeCq;
    NDK_FN_ARM_CQ NdkArmCq;
    NDK_FN_GET_CQ_RESULTS NdkGetCqResults;
    NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION NdkControlCqInterruptModeration;
    NDK_FN_GET_CQ_RESULTS_EX NdkGetCqResultsEx;
} NDK_CQ_DISPATCH;
struct _NDK_CQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CQ_DISPATCH *Dispatch;
};

/* ---- MR ---- */
#define NDK_MR_FLAG_ALLOW_LOCAL_READ 0x00000000
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE 0x00000001
#define NDK_MR_FLAG_ALLOW_REMOTE_READ 0x00000002
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE 0x00000005
#define NDK_MR_FLAG_RDMA_READ_SINK 0x00000008
typedef NTSTATUS (*NDK_FN_REGISTER_MR)(NDK_MR *pNdkMr, MDL *Mdl, SIZE_T Length, ULONG Flags,
                                       NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_DEREGISTER_MR)(NDK_MR *pNdkMr, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                         PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_INITIALIZE_FAST_REGISTER_MR)(NDK_MR *pNdkMr, ULONG AdapterPageCount, BOOLEAN RemoteAccess,
                                                       NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                                       PVOID RequestContext);
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MR)(NDK_MR *pNdkMr);
typedef UINT32 (*NDK_FN_GET_LOCAL_TOKEN_FROM_MR)(NDK_MR *pNdkMr);
typedef struct _NDK_MR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMr;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_REGISTER_MR NdkRegisterMr;
    NDK_FN_DEREGISTER_MR NdkDeregisterMr;
    NDK_FN_INITIALIZE_FAST_REGISTER_MR NdkInitializeFastRegisterMr;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MR NdkGetRemoteTokenFromMr;
    NDK_FN_GET_LOCAL_TOKEN_FROM_MR NdkGetLocalTokenFromMr;
} NDK_MR_DISPATCH;
struct _NDK_MR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MR_DISPATCH *Dispatch;
};

/* ---- MW ---- */
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MW)(NDK_MW *pNdkMw);
typedef struct _NDK_MW_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMw;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MW NdkGetRemoteTokenFromMw;
} NDK_MW_DISPATCH;
struct _NDK_MW {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MW_DISPATCH *Dispatch;
};

/* ---- SRQ ---- */
typedef NTSTATUS (*NDK_FN_MODIFY_SRQ)(NDK_SRQ *pNdkSrq, ULONG SrqDepth, ULONG NotifyThreshold,
                                      NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_SRQ_RECEIVE)(NDK_SRQ *pNdkSrq, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge);
typedef struct _NDK_SRQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSrq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_MODIFY_SRQ NdkModifySrq;
    NDK_FN_SRQ_RECEIVE NdkSrqReceive;
} NDK_SRQ_DISPATCH;
struct _NDK_SRQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SRQ_DISPATCH *Dispatch;
};

/* ---- QP ---- (flag values differ from ND2's ND_OP_FLAG_*) */
#define NDK_OP_FLAG_SILENT_SUCCESS 0x00000001
#define NDK_OP_FLAG_READ_FENCE 0x00000002
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT 0x00000004
#define NDK_OP_FLAG_ALLOW_REMOTE_READ 0x00000008
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE 0x00000010
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE 0x00000030
#define NDK_OP_FLAG_INLINE 0x00000040
#define NDK_OP_FLAG_RDMA_READ_SINK 0x00000080
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE 0x00000100
#define NDK_OP_FLAG_DEFER 0x00000200
typedef VOID (*NDK_FN_FLUSH)(NDK_QP *pNdkQp);
typedef NTSTATUS (*NDK_FN_SEND)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, ULONG Flags);
typedef NTSTATUS (*NDK_FN_RECEIVE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge);
typedef NTSTATUS (*NDK_FN_BIND)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_MR *pMr, NDK_MW *pMw, PVOID VirtualAddress,
                                SIZE_T Length, ULONG Flags);
typedef NTSTATUS (*NDK_FN_FAST_REGISTER)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_MR *pMr, ULONG AdapterPageCount,
                                         CONST NDK_LOGICAL_ADDRESS *AdapterPageArray, ULONG FBO, SIZE_T Length,
                                         PVOID BaseVirtualAddress, ULONG Flags);
typedef NTSTATUS (*NDK_FN_INVALIDATE)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_OBJECT_HEADER *pNdkMrOrMw,
                                      ULONG Flags);
typedef NTSTATUS (*NDK_FN_READ)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);
typedef NTSTATUS (*NDK_FN_WRITE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                 UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);
typedef NTSTATUS (*NDK_FN_SEND_AND_INVALIDATE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                               ULONG Flags, UINT32 RemoteToken);
typedef struct _NDK_QP_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseQp;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_FLUSH NdkFlush;
    NDK_FN_SEND NdkSend;
    NDK_FN_RECEIVE NdkReceive;
    NDK_FN_BIND NdkBind;
    NDK_FN_FAST_REGISTER NdkFastRegister;
    NDK_FN_INVALIDATE NdkInvalidate;
    NDK_FN_READ NdkRead;
    NDK_FN_WRITE NdkWrite;
    NDK_FN_SEND_AND_INVALIDATE NdkSendAndInvalidate;
} NDK_QP_DISPATCH;
struct _NDK_QP {
    NDK_OBJECT_HEADER Header;
    CONST NDK_QP_DISPATCH *Dispatch;
};

/* ---- PD ---- */
typedef NTSTATUS (*NDK_FN_CREATE_MR)(NDK_PD *pNdkPd, BOOLEAN FastRegister, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_MR **ppNdkMr);
typedef NTSTATUS (*NDK_FN_CREATE_MW)(NDK_PD *pNdkPd, NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                     NDK_MW **ppNdkMw);
typedef NTSTATUS (*NDK_FN_CREATE_SRQ)(NDK_PD *pNdkPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge,
                                      ULONG NotifyThreshold, NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification,
                                      PVOID SrqNotificationContext, GROUP_AFFINITY *Affinity,
                                      NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                      NDK_SRQ **ppNdkSrq);
typedef NTSTATUS (*NDK_FN_CREATE_QP)(NDK_PD *pNdkPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq, PVOID QPContext,
                                     ULONG ReceiveQueueDepth, ULONG InitiatorQueueDepth, ULONG MaxReceiveRequestSge,
                                     ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                     NDK_QP **ppNdkQp);
typedef NTSTATUS (*NDK_FN_CREATE_QP_WITH_SRQ)(NDK_PD *pNdkPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq,
                                              NDK_SRQ *pSrq, PVOID QPContext, ULONG InitiatorQueueDepth,
                                              ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                              NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                              NDK_QP **ppNdkQp);
typedef VOID (*NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN)(NDK_PD *pNdkPd, UINT32 *pToken);
typedef struct _NDK_PD_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkClosePd;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CREATE_MR NdkCreateMr;
    NDK_FN_CREATE_MW NdkCreateMw;
    NDK_FN_CREATE_SRQ NdkCreateSrq;
    NDK_FN_CREATE_QP NdkCreateQp;
    NDK_FN_CREATE_QP_WITH_SRQ NdkCreateQpWithSrq;
    NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN NdkGetPrivilegedMemoryRegionToken;
} NDK_PD_DISPATCH;
struct _NDK_PD {
    NDK_OBJECT_HEADER Header;
    CONST NDK_PD_DISPATCH *Dispatch;
};

OPENND_EXTERN_C_END

/* Shared endpoints, connectors, listeners, the adapter and the entry points. */
#include "opennd/ndkpi_connect.h"

OPENND_NDK_STATIC_ASSERT(sizeof(NDK_OBJECT_HEADER) == 40, "NDK_OBJECT_HEADER layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_RESULT) == 24, "NDK_RESULT layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_RESULT_EX) == 40, "NDK_RESULT_EX layout");
OPENND_NDK_STATIC_ASSERT(offsetof(NDK_RESULT_EX, TypeSpecificCompletionOutput) == 32, "NDK_RESULT_EX layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_SGE) == 16, "NDK_SGE layout");
OPENND_NDK_STATIC_ASSERT(offsetof(NDK_SGE, MemoryRegionToken) == 12, "NDK_SGE layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_QP) == 48, "NDK object layout");

#endif /* OPENND_NDKPI_H */
