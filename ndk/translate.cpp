#include "translate.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "opennd/nd_extensions.h"

namespace opennd::ndk {
namespace {

static_assert(sizeof(NDK_SGE) == sizeof(ND2_SGE), "SGE layouts must match");
static_assert(offsetof(NDK_SGE, VirtualAddress) == offsetof(ND2_SGE, Buffer), "SGE layouts must match");
static_assert(offsetof(NDK_SGE, Length) == offsetof(ND2_SGE, BufferLength), "SGE layouts must match");
static_assert(offsetof(NDK_SGE, MemoryRegionToken) == offsetof(ND2_SGE, MemoryRegionToken), "SGE layouts must match");

// ---- statuses: ND2 value -> NTSTATUS. ND codes not listed map to themselves
// (they are NTSTATUS values already); listed here are the ones that are not
// NTSTATUS (COM HRESULTs) and the ND names whose NTSTATUS name differs.
struct StatusEntry {
    HRESULT nd;
    NTSTATUS ndk;
};
constexpr StatusEntry kStatuses[] = {
    {ND_SUCCESS, STATUS_SUCCESS},
    {ND_TIMEOUT, STATUS_TIMEOUT},
    {ND_PENDING, STATUS_PENDING},
    {ND_CANCELED, STATUS_CANCELLED},
    {ND_REMOTE_ERROR, STATUS_REMOTE_RESOURCES},  // same value, different name
    {S_FALSE, STATUS_SUCCESS},
    {E_OUTOFMEMORY, STATUS_NO_MEMORY},
    {E_INVALIDARG, STATUS_INVALID_PARAMETER},
    {E_POINTER, STATUS_INVALID_PARAMETER},
    {E_NOINTERFACE, STATUS_NOT_SUPPORTED},
    {E_NOTIMPL, STATUS_NOT_IMPLEMENTED},
    {E_FAIL, STATUS_UNSUCCESSFUL},
};

// ---- work-request flags: one row per NDK bit.
enum class Rule { Map, Drop, NotSupported };
struct OpFlagEntry {
    ULONG ndk;
    ULONG nd;
    Rule rule;
};
constexpr OpFlagEntry kOpFlags[] = {
    {NDK_OP_FLAG_SILENT_SUCCESS, ND_OP_FLAG_SILENT_SUCCESS, Rule::Map},
    {NDK_OP_FLAG_READ_FENCE, ND_OP_FLAG_READ_FENCE, Rule::Map},
    {NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, ND_OP_FLAG_SEND_AND_SOLICIT_EVENT, Rule::Map},
    {NDK_OP_FLAG_ALLOW_REMOTE_READ, ND_OP_FLAG_ALLOW_READ, Rule::Map},
    // ALLOW_LOCAL_WRITE (0x10) is for fast-register MRs; ALLOW_REMOTE_WRITE
    // (0x30) is it plus 0x20, which is what ND2 calls ALLOW_WRITE.
    {NDK_OP_FLAG_ALLOW_LOCAL_WRITE, 0, Rule::Drop},
    {NDK_OP_FLAG_ALLOW_REMOTE_WRITE & ~NDK_OP_FLAG_ALLOW_LOCAL_WRITE, ND_OP_FLAG_ALLOW_WRITE, Rule::Map},
    {NDK_OP_FLAG_INLINE, ND_OP_FLAG_INLINE, Rule::Map},
    {NDK_OP_FLAG_RDMA_READ_SINK, 0, Rule::Drop},                      // fast-register access hint
    {NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, 0, Rule::NotSupported},  // a Read's only: NdkRead takes it off
    {NDK_OP_FLAG_DEFER, 0, Rule::Drop},                               // doorbell batching hint
};
constexpr ULONG kOpFlagBits = 0x400;  // every NDK flag is below this

// The table above, expanded for every combination of bits once, so a post
// pays one load. Entry: ND flags, or a status (NOT_SUPPORTED / INVALID).
struct OpFlagLookup {
    std::array<ULONG, kOpFlagBits> nd{};
    std::array<NTSTATUS, kOpFlagBits> status{};
    OpFlagLookup() {
        for (ULONG combo = 0; combo < kOpFlagBits; ++combo) {
            ULONG rest = combo, out = 0;
            NTSTATUS st = STATUS_SUCCESS;
            for (const OpFlagEntry &e : kOpFlags) {
                if (!(rest & e.ndk)) continue;
                rest &= ~e.ndk;
                if (e.rule == Rule::Map) out |= e.nd;
                if (e.rule == Rule::NotSupported && st == STATUS_SUCCESS) st = STATUS_NOT_SUPPORTED;
            }
            nd[combo] = out;
            status[combo] = rest ? STATUS_INVALID_PARAMETER : st;
        }
    }
};
const OpFlagLookup kOpFlagLookup;

// ---- memory-registration flags (same values in both; kept as a table so a
// difference would be one line).
struct MrFlagEntry {
    ULONG ndk;
    ULONG nd;
};
constexpr MrFlagEntry kMrFlags[] = {
    {NDK_MR_FLAG_ALLOW_REMOTE_WRITE, ND_MR_FLAG_ALLOW_REMOTE_WRITE},  // 0x5: includes LOCAL_WRITE, so first
    {NDK_MR_FLAG_ALLOW_LOCAL_WRITE, ND_MR_FLAG_ALLOW_LOCAL_WRITE},
    {NDK_MR_FLAG_ALLOW_REMOTE_READ, ND_MR_FLAG_ALLOW_REMOTE_READ},
    {NDK_MR_FLAG_RDMA_READ_SINK, ND_MR_FLAG_RDMA_READ_SINK},
};

// ---- completion types: ND2 numbers them 0..5, NDK uses bits.
constexpr NDK_OPERATION_TYPE kOperations[] = {
    NdkOperationTypeReceive,     // Nd2RequestTypeReceive
    NdkOperationTypeSend,        // Nd2RequestTypeSend
    NdkOperationTypeBind,        // Nd2RequestTypeBind
    NdkOperationTypeInvalidate,  // Nd2RequestTypeInvalidate
    NdkOperationTypeRead,        // Nd2RequestTypeRead
    NdkOperationTypeWrite,       // Nd2RequestTypeWrite
};

// ---- adapter flags.
constexpr MrFlagEntry kAdapterFlags[] = {
    {NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, ND_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED},
    {NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, ND_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED},
    {NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED},
    {NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED},
    // ND2 has no call to control it: a provider that sets the flag answers
    // IOpenNdCqModeration on its CQs (opennd/cq_moderation.h).
    {NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED},
};

}  // namespace

bool MdlCovers(const MDL *mdl, SIZE_T length) {
    auto expected = reinterpret_cast<ULONG_PTR>(MmGetMdlVirtualAddress(mdl));
    SIZE_T total = 0;
    for (const MDL *m = mdl; m && total < length; m = m->Next) {
        if (reinterpret_cast<ULONG_PTR>(MmGetMdlVirtualAddress(m)) != expected) return false;
        total += MmGetMdlByteCount(m);
        expected += MmGetMdlByteCount(m);
    }
    return total >= length;
}

NTSTATUS StatusFromNdSlow(HRESULT hr) {
    for (const StatusEntry &e : kStatuses)
        if (e.nd == hr) return e.ndk;
    return static_cast<NTSTATUS>(hr);
}

NTSTATUS SizeStatusFromNd(HRESULT hr) {
    return hr == ND_BUFFER_OVERFLOW ? STATUS_BUFFER_TOO_SMALL : StatusFromNd(hr);
}

NTSTATUS BindStatusFromNd(HRESULT hr) {
    return static_cast<NTSTATUS>(hr) == STATUS_ADDRESS_ALREADY_ASSOCIATED ? STATUS_SHARING_VIOLATION
                                                                          : StatusFromNd(hr);
}

NTSTATUS OpFlagsToNdSlow(ULONG ndk, ULONG *nd) {
    if (ndk >= kOpFlagBits) return STATUS_INVALID_PARAMETER;
    *nd = kOpFlagLookup.nd[ndk];
    return kOpFlagLookup.status[ndk];
}

NTSTATUS MrFlagsToNd(ULONG ndk, ULONG *nd) {
    ULONG rest = ndk, out = 0;
    for (const MrFlagEntry &e : kMrFlags) {
        if ((rest & e.ndk) != e.ndk) continue;
        rest &= ~e.ndk;
        out |= e.nd;
    }
    if (rest) return STATUS_INVALID_PARAMETER;
    *nd = out;
    return STATUS_SUCCESS;
}

NDK_OPERATION_TYPE OperationFromNd(ND2_REQUEST_TYPE type) {
    if (type == OPENND_REQUEST_TYPE_FAST_REGISTER) return NdkOperationTypeFastRegister;
    auto i = static_cast<size_t>(type);
    return i < std::size(kOperations) ? kOperations[i] : NdkOperationTypeSend;
}

void ResultFromNd(const ND2_RESULT &in, NDK_RESULT *out) {
    out->Status = StatusFromNd(in.Status);
    out->BytesTransferred = in.BytesTransferred;
    out->QPContext = in.QueuePairContext;
    out->RequestContext = in.RequestContext;
}

void ResultExFromNd(const ND2_RESULT &in, NDK_RESULT_EX *out) {
    out->Status = StatusFromNd(in.Status);
    out->BytesTransferred = in.BytesTransferred;
    out->QPContext = in.QueuePairContext;
    out->RequestContext = in.RequestContext;
    out->Type = OperationFromNd(in.RequestType);
    out->TypeSpecificCompletionOutput = 0;
}

void ResultExFromNd(const OPENND_RESULT_EX &in, NDK_RESULT_EX *out) {
    const bool invalidated = in.RequestType == OPENND_REQUEST_TYPE_RECEIVE_INVALIDATE;
    ResultExFromNd(ND2_RESULT{in.Status, in.BytesTransferred, in.QueuePairContext, in.RequestContext,
                              invalidated ? Nd2RequestTypeReceive : in.RequestType},
                   out);
    if (!invalidated) return;
    out->Type = NdkOperationTypeReceiveAndInvalidate;
    out->TypeSpecificCompletionOutput = in.InvalidatedToken;
}

ULONG FastRegisterPages(const ND2_ADAPTER_INFO &in, ULONG extensions) {
    if (!(extensions & OPENND_EXT_FAST_REGISTER)) return 0;
    // A fast-registered region is a window (opennd/nd_extensions.h): as many
    // pages as a window spans, up to 1 GiB (NDKPI asks for at least 16).
    constexpr uint64_t kMostPages = (uint64_t(1) << 30) / PAGE_SIZE;
    return static_cast<ULONG>(std::min<uint64_t>(in.MaxWindowSize / PAGE_SIZE, kMostPages));
}

void AdapterInfoFromNd(const ND2_ADAPTER_INFO &in, ULONG extensions, NDK_VERSION version, NDK_ADAPTER_INFO *out) {
    *out = NDK_ADAPTER_INFO{};
    out->Version = version;
    out->VendorId = in.VendorId;
    out->DeviceId = in.DeviceId;
    out->MaxRegistrationSize = in.MaxRegistrationSize;
    out->MaxWindowSize = in.MaxWindowSize;
    out->FRMRPageCount = FastRegisterPages(in, extensions);
    out->MaxInitiatorRequestSge = in.MaxInitiatorSge;
    out->MaxReceiveRequestSge = in.MaxReceiveSge;
    out->MaxReadRequestSge = in.MaxReadSge;
    out->MaxTransferLength = in.MaxTransferLength;
    out->MaxInlineDataSize = in.MaxInlineDataSize;
    out->MaxInboundReadLimit = in.MaxInboundReadLimit;
    out->MaxOutboundReadLimit = in.MaxOutboundReadLimit;
    out->MaxReceiveQueueDepth = in.MaxReceiveQueueDepth;
    out->MaxInitiatorQueueDepth = in.MaxInitiatorQueueDepth;
    out->MaxSrqDepth = in.MaxSharedReceiveQueueDepth;
    out->MaxCqDepth = in.MaxCompletionQueueDepth;
    out->LargeRequestThreshold = in.LargeRequestThreshold;
    out->MaxCallerData = in.MaxCallerData;
    out->MaxCalleeData = in.MaxCalleeData;
    for (const MrFlagEntry &e : kAdapterFlags)
        if (in.AdapterFlags & e.nd) out->AdapterFlags |= e.ndk;
    // NDK 1.2's flag: a Read may invalidate its fast-registered sink (qp.cpp).
    if ((extensions & OPENND_EXT_FAST_REGISTER) && version.Minor >= 2)
        out->AdapterFlags |= NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED;
    out->RdmaTechnology = NdkUndefined;  // ND2 does not say
}

}  // namespace opennd::ndk
