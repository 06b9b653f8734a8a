/* OpenND NDK: NDK_VERSION and NDK_ADAPTER_INFO (Windows <ndkinfo.h>).
 *
 * Layout is the Windows x64 one (104 bytes; the two SIZE_T fields are 8
 * bytes). OpenND reports NDKPI 1.2.
 */
#ifndef OPENND_NDKINFO_H
#define OPENND_NDKINFO_H

#include "opennd/ndktypes.h"

typedef struct _NDK_VERSION {
    USHORT Major;
    USHORT Minor;
} NDK_VERSION;

/* The NDKPI version this implementation speaks: 1.2 (Windows Server 2012 R2:
 * GetCqResultsEx and SendAndInvalidate in the dispatch tables). */
#define NDK_VERSION_MAJOR 1
#define NDK_VERSION_MINOR 2

typedef enum _NDK_RDMA_TECHNOLOGY {
    NdkUndefined = 0,
    NdkiWarp = 1,
    NdkInfiniBand = 2,
    NdkRoCE = 3,
    NdkRoCEv2 = 4,
    NdkMaxTechnology = 5
} NDK_RDMA_TECHNOLOGY;

typedef struct _NDK_ADAPTER_INFO {
    NDK_VERSION Version;
    UINT32 VendorId;
    UINT32 DeviceId;
    SIZE_T MaxRegistrationSize;
    SIZE_T MaxWindowSize;
    ULONG FRMRPageCount; /* 0 here: OpenND has no fast-register MRs */
    ULONG MaxInitiatorRequestSge;
    ULONG MaxReceiveRequestSge;
    ULONG MaxReadRequestSge;
    ULONG MaxTransferLength;
    ULONG MaxInlineDataSize;
    ULONG MaxInboundReadLimit;
    ULONG MaxOutboundReadLimit;
    ULONG MaxReceiveQueueDepth;
    ULONG MaxInitiatorQueueDepth;
    ULONG MaxSrqDepth; /* 0: no SRQ */
    ULONG MaxCqDepth;
    ULONG LargeRequestThreshold;
    ULONG MaxCallerData;
    ULONG MaxCalleeData;
    ULONG AdapterFlags;
    NDK_RDMA_TECHNOLOGY RdmaTechnology;
} NDK_ADAPTER_INFO;

#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED 0x00000001
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED 0x00000002
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED 0x00000004
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED 0x00000008
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED 0x00000100
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED 0x00010000

OPENND_NDK_STATIC_ASSERT(sizeof(NDK_VERSION) == 4, "NDK_VERSION layout");
OPENND_NDK_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxRegistrationSize) == 16, "NDK_ADAPTER_INFO layout");
OPENND_NDK_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, FRMRPageCount) == 32, "NDK_ADAPTER_INFO layout");
OPENND_NDK_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, RdmaTechnology) == 96, "NDK_ADAPTER_INFO layout");
OPENND_NDK_STATIC_ASSERT(sizeof(NDK_ADAPTER_INFO) == 104, "NDK_ADAPTER_INFO layout");

#endif /* OPENND_NDKINFO_H */
