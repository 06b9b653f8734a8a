// IND2Provider and IND2Adapter for every provider: the SPI's argument checks
// of each Create* call (§5, R040-R047), in the spec's order, against the
// limits the adapter declares, so the limits Query reports are exactly the
// ones enforced. A provider supplies its addresses and makes its objects
// (the New* hooks, called with checked arguments); a kind of object it does
// not have is ND_NOT_SUPPORTED.
//
// Setup path only: the hooks are virtual, nothing here runs per message.
#pragma once

#include <vector>

#include "ndspi.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"

namespace opennd::kit {

class CompletionQueue;

// A queue pair's checked creation arguments. `srq` is null for
// CreateQueuePair; for CreateQueuePairWithSrq it is one the provider
// accepted (OwnsSharedReceiveQueue), and receive_depth and receive_sge are 0.
struct QueuePairArgs {
    IUnknown *receive_cq = nullptr;
    IUnknown *initiator_cq = nullptr;
    IUnknown *srq = nullptr;
    void *context = nullptr;
    ULONG receive_depth = 0, initiator_depth = 0;
    ULONG receive_sge = 0, initiator_sge = 0;
    ULONG inline_size = 0;
};

struct SharedReceiveQueueArgs {
    HANDLE file = nullptr;
    ULONG depth = 0, max_sge = 0, threshold = 0;
    USHORT group = 0;
    KAFFINITY affinity = 0;
};

class Adapter : public Unknown<IND2Adapter> {
public:
    // `info`: what this adapter declares. Query reports it (with the
    // caller's InfoVersion, D02) and every check below enforces it.
    explicit Adapter(const ND2_ADAPTER_INFO &info) : info_(info) {}
    const ND2_ADAPTER_INFO &info() const { return info_; }

    HRESULT STDMETHODCALLTYPE CreateOverlappedFile(HANDLE *file) final;
    HRESULT STDMETHODCALLTYPE Query(ND2_ADAPTER_INFO *info, ULONG *size) final;
    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *size) final;
    HRESULT STDMETHODCALLTYPE CreateCompletionQueue(REFIID iid, HANDLE file, ULONG depth, USHORT group,
                                                    KAFFINITY affinity, VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateMemoryRegion(REFIID iid, HANDLE file, VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateMemoryWindow(REFIID iid, VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateSharedReceiveQueue(REFIID iid, HANDLE file, ULONG depth, ULONG max_sge,
                                                       ULONG threshold, USHORT group, KAFFINITY affinity,
                                                       VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateQueuePair(REFIID iid, IUnknown *receive_cq, IUnknown *initiator_cq,
                                              VOID *context, ULONG receive_depth, ULONG initiator_depth,
                                              ULONG receive_sge, ULONG initiator_sge, ULONG inline_size,
                                              VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateQueuePairWithSrq(REFIID iid, IUnknown *receive_cq, IUnknown *initiator_cq,
                                                     IUnknown *srq, VOID *context, ULONG initiator_depth,
                                                     ULONG initiator_sge, ULONG inline_size, VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateConnector(REFIID iid, HANDLE file, VOID **pp) final;
    HRESULT STDMETHODCALLTYPE CreateListener(REFIID iid, HANDLE file, VOID **pp) final;

protected:
    // The addresses this adapter serves (QueryAddressList).
    virtual std::vector<IpAddress> Addresses() = 0;
    // Whether `cq` / `srq` is one of this adapter's (else _2/_3, _4). The
    // default takes any CQ of the kit's in this library.
    virtual bool OwnsCompletionQueue(IUnknown *cq);
    virtual bool OwnsSharedReceiveQueue(IUnknown *) { return false; }

    // Makes the object and hands it out (kit::Hand / HandIfValid). The
    // default CQ is the kit's; the others are ND_NOT_SUPPORTED.
    virtual HRESULT NewCompletionQueue(HANDLE file, ULONG depth, KAFFINITY affinity, REFIID iid, void **pp);
    virtual HRESULT NewMemoryRegion(HANDLE, REFIID, void **) { return ND_NOT_SUPPORTED; }
    virtual HRESULT NewMemoryWindow(REFIID, void **) { return ND_NOT_SUPPORTED; }
    virtual HRESULT NewSharedReceiveQueue(const SharedReceiveQueueArgs &, REFIID, void **) {
        return ND_NOT_SUPPORTED;
    }
    virtual HRESULT NewQueuePair(const QueuePairArgs &, REFIID, void **) { return ND_NOT_SUPPORTED; }
    virtual HRESULT NewConnector(HANDLE, REFIID, void **) { return ND_NOT_SUPPORTED; }
    virtual HRESULT NewListener(HANDLE, REFIID, void **) { return ND_NOT_SUPPORTED; }

private:
    const ND2_ADAPTER_INFO info_;
};

// IND2Provider over a fixed set of adapters, each serving some addresses:
// QueryAddressList is their union, ResolveAddress finds the adapter that
// serves an address (ND_INVALID_ADDRESS if none), OpenAdapter opens one of
// them (ND_INVALID_PARAMETER for any other id).
class Provider : public Unknown<IND2Provider> {
public:
    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *size) override;
    HRESULT STDMETHODCALLTYPE ResolveAddress(const sockaddr *address, ULONG size, UINT64 *adapter_id) override;
    HRESULT STDMETHODCALLTYPE OpenAdapter(REFIID iid, UINT64 adapter_id, VOID **pp) override;

protected:
    virtual std::vector<UINT64> AdapterIds() = 0;
    virtual std::vector<IpAddress> AdapterAddresses(UINT64 adapter_id) = 0;
    // Called with one of AdapterIds(); *pp is already null.
    virtual HRESULT NewAdapter(UINT64 adapter_id, REFIID iid, void **pp) = 0;
};

}  // namespace opennd::kit
