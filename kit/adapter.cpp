#include "opennd/kit/adapter.h"

#include <algorithm>

#include "opennd/kit/completion_queue.h"
#include "opennd/overlapped_file.h"

namespace opennd::kit {

HRESULT Adapter::CreateOverlappedFile(HANDLE *file) {
    if (!file) return ND_INVALID_PARAMETER_1;
    *file = OpenNdCreateOverlappedFile();
    return *file ? ND_SUCCESS : ND_NO_MEMORY;
}

HRESULT Adapter::Query(ND2_ADAPTER_INFO *info, ULONG *size) {
    if (!size) return ND_INVALID_PARAMETER_2;
    if (!info || *size < sizeof(ND2_ADAPTER_INFO)) {  // the buffer is left as it was (R035)
        *size = sizeof(ND2_ADAPTER_INFO);
        return ND_BUFFER_OVERFLOW;
    }
    const ULONG version = info->InfoVersion;  // the caller's value comes back (D02)
    *info = info_;
    info->InfoVersion = version;
    *size = sizeof(ND2_ADAPTER_INFO);
    return ND_SUCCESS;
}

HRESULT Adapter::QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *size) {
    if (!size) return ND_INVALID_PARAMETER_2;
    return WriteAddressList(Addresses(), list, size);
}

bool Adapter::OwnsCompletionQueue(IUnknown *cq) { return CompletionQueue::FromUnknown(cq) != nullptr; }

HRESULT Adapter::NewCompletionQueue(HANDLE file, ULONG depth, KAFFINITY affinity, REFIID iid, void **pp) {
    return HandIfValid(new CompletionQueue(file, depth, info_.MaxCompletionQueueDepth, affinity), iid, pp,
                       ND_INVALID_PARAMETER_2);
}

HRESULT Adapter::CreateCompletionQueue(REFIID iid, HANDLE file, ULONG depth, USHORT, KAFFINITY affinity,
                                       VOID **pp) {
    if (depth == 0 || depth > info_.MaxCompletionQueueDepth) return ND_INVALID_PARAMETER_3;  // R041
    return NewCompletionQueue(file, depth, affinity, iid, pp);
}

HRESULT Adapter::CreateMemoryRegion(REFIID iid, HANDLE file, VOID **pp) { return NewMemoryRegion(file, iid, pp); }

HRESULT Adapter::CreateMemoryWindow(REFIID iid, VOID **pp) { return NewMemoryWindow(iid, pp); }

HRESULT Adapter::CreateSharedReceiveQueue(REFIID iid, HANDLE file, ULONG depth, ULONG max_sge, ULONG threshold,
                                          USHORT group, KAFFINITY affinity, VOID **pp) {
    if (info_.MaxSharedReceiveQueueDepth == 0) return ND_NOT_SUPPORTED;
    if (depth == 0 || depth > info_.MaxSharedReceiveQueueDepth) return ND_INVALID_PARAMETER_3;
    if (max_sge > info_.MaxReceiveSge) return ND_INVALID_PARAMETER_4;
    return NewSharedReceiveQueue(SharedReceiveQueueArgs{file, depth, max_sge, threshold, group, affinity}, iid, pp);
}

HRESULT Adapter::CreateQueuePair(REFIID iid, IUnknown *receive_cq, IUnknown *initiator_cq, VOID *context,
                                 ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge, ULONG initiator_sge,
                                 ULONG inline_size, VOID **pp) {
    // R044, in parameter order.
    if (!OwnsCompletionQueue(receive_cq)) return ND_INVALID_PARAMETER_2;
    if (!OwnsCompletionQueue(initiator_cq)) return ND_INVALID_PARAMETER_3;
    if (receive_depth > info_.MaxReceiveQueueDepth) return ND_INVALID_PARAMETER_5;
    if (initiator_depth > info_.MaxInitiatorQueueDepth) return ND_INVALID_PARAMETER_6;
    if (receive_sge > info_.MaxReceiveSge) return ND_INVALID_PARAMETER_7;
    if (initiator_sge > info_.MaxInitiatorSge) return ND_INVALID_PARAMETER_8;
    if (inline_size > info_.MaxInlineDataSize) return ND_INVALID_PARAMETER_9;
    return NewQueuePair({.receive_cq = receive_cq, .initiator_cq = initiator_cq, .context = context,
                         .receive_depth = receive_depth, .initiator_depth = initiator_depth,
                         .receive_sge = receive_sge, .initiator_sge = initiator_sge, .inline_size = inline_size},
                        iid, pp);
}

HRESULT Adapter::CreateQueuePairWithSrq(REFIID iid, IUnknown *receive_cq, IUnknown *initiator_cq, IUnknown *srq,
                                        VOID *context, ULONG initiator_depth, ULONG initiator_sge, ULONG inline_size,
                                        VOID **pp) {
    if (info_.MaxSharedReceiveQueueDepth == 0) return ND_NOT_SUPPORTED;  // R037
    // R045, in parameter order.
    if (!OwnsCompletionQueue(receive_cq)) return ND_INVALID_PARAMETER_2;
    if (!OwnsCompletionQueue(initiator_cq)) return ND_INVALID_PARAMETER_3;
    if (!OwnsSharedReceiveQueue(srq)) return ND_INVALID_PARAMETER_4;
    if (initiator_depth > info_.MaxInitiatorQueueDepth) return ND_INVALID_PARAMETER_6;
    if (initiator_sge > info_.MaxInitiatorSge) return ND_INVALID_PARAMETER_7;
    if (inline_size > info_.MaxInlineDataSize) return ND_INVALID_PARAMETER_8;
    return NewQueuePair({.receive_cq = receive_cq, .initiator_cq = initiator_cq, .srq = srq, .context = context,
                         .initiator_depth = initiator_depth, .initiator_sge = initiator_sge,
                         .inline_size = inline_size},
                        iid, pp);
}

HRESULT Adapter::CreateConnector(REFIID iid, HANDLE file, VOID **pp) { return NewConnector(file, iid, pp); }

HRESULT Adapter::CreateListener(REFIID iid, HANDLE file, VOID **pp) { return NewListener(file, iid, pp); }

HRESULT Provider::QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *size) {
    if (!size) return ND_INVALID_PARAMETER_2;
    std::vector<IpAddress> all;
    for (UINT64 id : AdapterIds())
        for (const IpAddress &a : AdapterAddresses(id)) all.push_back(a);
    return WriteAddressList(all, list, size);
}

HRESULT Provider::ResolveAddress(const sockaddr *address, ULONG size, UINT64 *adapter_id) {
    if (!adapter_id) return ND_INVALID_PARAMETER_3;
    if (!IsIpSockaddr(address, size)) return ND_INVALID_ADDRESS;
    for (UINT64 id : AdapterIds())
        if (HasIp(AdapterAddresses(id), address)) {
            *adapter_id = id;
            return ND_SUCCESS;
        }
    return ND_INVALID_ADDRESS;
}

HRESULT Provider::OpenAdapter(REFIID iid, UINT64 adapter_id, VOID **pp) {
    if (!pp) return ND_INVALID_PARAMETER_3;
    *pp = nullptr;
    const std::vector<UINT64> ids = AdapterIds();
    if (std::find(ids.begin(), ids.end(), adapter_id) == ids.end()) return ND_INVALID_PARAMETER;
    return NewAdapter(adapter_id, iid, pp);
}

}  // namespace opennd::kit
