// The OpenND software provider: IND2Provider and IND2Adapter. One adapter
// serves every local IPv4 and IPv6 address; same-host peers exchange data
// through shared memory and cross-memory attach.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "connector.h"
#include "soft_limits.h"
#include "listener.h"
#include "memory_objects.h"
#include "opennd/kit/adapter.h"
#include "opennd/kit/address.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/adapter_notes.h"
#include "opennd/kit/extensions.h"
#include "queue_pair.h"
#include "srq.h"
#include "opennd/params.h"

namespace soft {
namespace kit = opennd::kit;
namespace {

// A kit CQ that wakes the engine's progress thread when a Notify is armed,
// so completions still waiting in the rings reach it.
class Cq : public kit::CompletionQueue {
public:
    Cq(std::shared_ptr<Engine> engine, HANDLE file, ULONG depth, KAFFINITY affinity)
        : kit::CompletionQueue(file, depth, kMaxCqDepth, affinity), engine_(std::move(engine)) {}

protected:
    void OnArmed() override { engine_->Kick(); }

private:
    std::shared_ptr<Engine> engine_;
};

// How this adapter moves data, for ndinfo (IOpenNdAdapterNotes).
std::string DataPathNotes() {
    const char *transport = opennd::ParamText("OPENND_SOFT_TRANSPORT");
    bool tcp_forced = transport && std::string(transport) == "tcp";
    std::string notes = tcp_forced ? "data path: iWARP over TCP for every peer (OPENND_SOFT_TRANSPORT=tcp)"
                                   : "data path: shared-memory rings between processes on this host";
    const char *off = opennd::ParamText("OPENND_SOFT_CMA");
    int scope = -1;
    if (FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r")) {
        if (fscanf(f, "%d", &scope) != 1) scope = -1;
        fclose(f);
    }
    // Can this process use cross-memory attach at all? A seccomp filter
    // (containers) or a kernel without it refuses even our own pid.
    uint64_t word = 1, copy = 0;
    iovec local{&copy, sizeof copy}, remote{&word, sizeof word};
    errno = 0;
    const bool cma_works = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof word && copy == 1;
    const int cma_errno = errno;
    if (tcp_forced)
        notes += "\nlarge transfers and RDMA Read/Write: in FPDUs on the stream, placed by the target's provider";
    else if (off && off[0] == '0')
        notes += "\nlarge transfers: copied through the rings (OPENND_SOFT_CMA=0)";
    else if (!cma_works)
        notes += std::string("\nlarge transfers: copied through the rings (cross-memory attach is not available "
                             "here: process_vm_readv: ") + std::strerror(cma_errno) + ")";
    else if (scope <= 0)
        notes += "\nlarge transfers and RDMA Read/Write: cross-memory attach (process_vm_readv/writev), one copy; "
                 "Sends of 256 KiB or more copied from both ends at once when the sender is polling";
    else
        notes += "\nlarge transfers and RDMA Read/Write: cross-memory attach is restricted (kernel.yama.ptrace_scope=" +
                 std::to_string(scope) + "); peers that may not attach are served by copying through the rings";
    notes += "\nother hosts: iWARP over TCP (MPA rev 2, DDP/RDMAP; interoperates with Linux siw)";
    return notes;
}



// What this adapter declares; the kit enforces it at every Create*.
ND2_ADAPTER_INFO AdapterInfo() {
    ND2_ADAPTER_INFO info{};
    info.VendorId = kVendorId;
    info.DeviceId = kDeviceId;
    info.AdapterId = kAdapterId;
    info.MaxRegistrationSize = kMaxRegistrationSize;
    info.MaxWindowSize = kMaxRegistrationSize;
    info.MaxInitiatorSge = info.MaxReceiveSge = info.MaxReadSge = kMaxSge;
    info.MaxTransferLength = kMaxTransferLength;
    info.MaxInlineDataSize = kMaxInlineData;
    info.MaxInboundReadLimit = info.MaxOutboundReadLimit = kMaxReadLimit;
    info.MaxReceiveQueueDepth = info.MaxInitiatorQueueDepth = kMaxQueueDepth;
    info.MaxSharedReceiveQueueDepth = kMaxQueueDepth;
    info.MaxCompletionQueueDepth = kMaxCqDepth;
    info.InlineRequestThreshold = kInlineRequestThreshold;
    info.LargeRequestThreshold = kLargeRequestThreshold;
    info.MaxCallerData = info.MaxCalleeData = kAdvertisedPrivateData;
    // Interrupt moderation: the kit CQ's IOpenNdCqModeration.
    info.AdapterFlags = ND_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED | ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED |
                        ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED | ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
    return info;
}

class Adapter : public kit::Adapter {
public:
    explicit Adapter(std::shared_ptr<Engine> engine) : kit::Adapter(AdapterInfo()), engine_(std::move(engine)) {}

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override {
        if (ppv && iid == IID_IOpenNdAdapterNotes) return kit::AdapterNotes::Make(DataPathNotes(), ppv);
        if (ppv && iid == IID_IOpenNdAdapterExt) return kit::AdapterExt::Make(
                OPENND_EXT_FAST_REGISTER | OPENND_EXT_SEND_INVALIDATE | OPENND_EXT_SHARED_ENDPOINT, ppv);
        return kit::Adapter::QueryInterface(iid, ppv);
    }

private:
    std::vector<kit::IpAddress> Addresses() override { return kit::LocalIpAddresses(); }
    bool OwnsSharedReceiveQueue(IUnknown *u) override {
        SharedReceiveQueue *srq = SharedReceiveQueue::Find(u);
        return srq && srq->engine() == engine_.get();
    }
    HRESULT NewCompletionQueue(HANDLE file, ULONG depth, KAFFINITY affinity, REFIID iid, void **pp) override {
        return kit::HandIfValid(new Cq(engine_, file, depth, affinity), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT NewMemoryRegion(HANDLE file, REFIID iid, void **pp) override {
        return kit::HandIfValid(new MemoryRegion(this, engine_, file), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT NewMemoryWindow(REFIID iid, void **pp) override {
        return kit::Hand(new MemoryWindow(this, engine_), iid, pp);
    }
    HRESULT NewSharedReceiveQueue(const kit::SharedReceiveQueueArgs &a, REFIID iid, void **pp) override {
        // Every queue takes as many SGEs as the adapter allows, whatever it was
        // created with, as hardware providers round up to the device's (COMPAT).
        return kit::HandIfValid(new SharedReceiveQueue(this, engine_, a.file, a.depth, kMaxSge, a.threshold,
                                                       a.affinity),
                                iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT NewQueuePair(const kit::QueuePairArgs &a, REFIID iid, void **pp) override {
        // SGE limits rounded up as for the SRQ (COMPAT).
        kit::QueuePairArgs rounded = a;
        rounded.receive_sge = rounded.initiator_sge = kMaxSge;
        return kit::Hand(new QueuePair(this, engine_, rounded), iid, pp);
    }
    HRESULT NewConnector(HANDLE file, REFIID iid, void **pp) override {
        return kit::HandIfValid(new Connector(this, engine_, file, info()), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT NewListener(HANDLE file, REFIID iid, void **pp) override {
        return kit::HandIfValid(new Listener(this, engine_, file), iid, pp, ND_INVALID_PARAMETER_2);
    }

    std::shared_ptr<Engine> engine_;
};

// One adapter, serving every local address.
class Provider : public kit::Provider {
    std::vector<UINT64> AdapterIds() override { return {kAdapterId}; }
    std::vector<kit::IpAddress> AdapterAddresses(UINT64) override { return kit::LocalIpAddresses(); }
    HRESULT NewAdapter(UINT64, REFIID iid, void **pp) override {
        auto engine = Engine::Create();
        if (!engine) return ND_INSUFFICIENT_RESOURCES;
        return kit::Hand(new Adapter(std::move(engine)), iid, pp);
    }
};

HRESULT MakeProvider(REFCLSID, REFIID iid, void **ppv) {
    if (!ppv) return E_POINTER;
    *ppv = nullptr;
    return kit::Hand(new Provider, iid, ppv);
}

}  // namespace
}  // namespace soft

OPENND_PROVIDER_EXPORTS(soft::MakeProvider)
