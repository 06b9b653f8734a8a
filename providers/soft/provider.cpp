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
#include "opennd/kit/address.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/adapter_notes.h"
#include "opennd/overlapped_file.h"
#include "queue_pair.h"
#include "srq.h"

namespace opennd::kit {
OPENND_KIT_IIDS(IOpenNdAdapterNotes, &IID_IOpenNdAdapterNotes);
}

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
    const char *transport = getenv("OPENND_SOFT_TRANSPORT");
    bool tcp_forced = transport && std::string(transport) == "tcp";
    std::string notes = tcp_forced ? "data path: iWARP over TCP for every peer (OPENND_SOFT_TRANSPORT=tcp)"
                                   : "data path: shared-memory rings between processes on this host";
    const char *off = getenv("OPENND_SOFT_CMA");
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

class Notes : public kit::Unknown<IOpenNdAdapterNotes> {
public:
    HRESULT STDMETHODCALLTYPE GetNotes(char *buffer, ULONG *size) override {
        if (!size) return ND_INVALID_PARAMETER_2;
        std::string text = DataPathNotes();
        if (!buffer || *size < text.size() + 1) {
            *size = static_cast<ULONG>(text.size() + 1);
            return ND_BUFFER_OVERFLOW;
        }
        std::memcpy(buffer, text.c_str(), text.size() + 1);
        *size = static_cast<ULONG>(text.size() + 1);
        return ND_SUCCESS;
    }
};


class Adapter : public kit::Unknown<IND2Adapter> {
public:
    explicit Adapter(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override {
        if (ppv && iid == IID_IOpenNdAdapterNotes) {
            *ppv = static_cast<IOpenNdAdapterNotes *>(new Notes);
            return S_OK;
        }
        return kit::Unknown<IND2Adapter>::QueryInterface(iid, ppv);
    }

    HRESULT STDMETHODCALLTYPE CreateOverlappedFile(HANDLE *ph) override {
        if (!ph) return ND_INVALID_PARAMETER_1;
        *ph = OpenNdCreateOverlappedFile();
        return *ph ? ND_SUCCESS : ND_NO_MEMORY;
    }
    HRESULT STDMETHODCALLTYPE Query(ND2_ADAPTER_INFO *info, ULONG *pcb) override {
        if (!pcb) return ND_INVALID_PARAMETER_2;
        if (!info || *pcb < sizeof(ND2_ADAPTER_INFO)) {
            *pcb = sizeof(ND2_ADAPTER_INFO);
            return ND_BUFFER_OVERFLOW;
        }
        ULONG version = info->InfoVersion;  // the caller's value comes back (D02)
        *info = ND2_ADAPTER_INFO{};
        info->InfoVersion = version;
        info->VendorId = kVendorId;
        info->DeviceId = kDeviceId;
        info->AdapterId = kAdapterId;
        info->MaxRegistrationSize = kMaxRegistrationSize;
        info->MaxWindowSize = kMaxRegistrationSize;
        info->MaxInitiatorSge = info->MaxReceiveSge = info->MaxReadSge = kMaxSge;
        info->MaxTransferLength = kMaxTransferLength;
        info->MaxInlineDataSize = kMaxInlineData;
        info->MaxInboundReadLimit = info->MaxOutboundReadLimit = kMaxReadLimit;
        info->MaxReceiveQueueDepth = info->MaxInitiatorQueueDepth = kMaxQueueDepth;
        info->MaxSharedReceiveQueueDepth = kMaxQueueDepth;
        info->MaxCompletionQueueDepth = kMaxCqDepth;
        info->InlineRequestThreshold = kInlineRequestThreshold;
        info->LargeRequestThreshold = kLargeRequestThreshold;
        info->MaxCallerData = info->MaxCalleeData = kAdvertisedPrivateData;
        info->AdapterFlags = ND_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED | ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED |
                             ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
        *pcb = sizeof(ND2_ADAPTER_INFO);
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *pcb) override {
        if (!pcb) return ND_INVALID_PARAMETER_2;
        return kit::WriteAddressList(kit::LocalIpAddresses(), list, pcb);
    }
    HRESULT STDMETHODCALLTYPE CreateCompletionQueue(REFIID iid, HANDLE file, ULONG depth, USHORT, KAFFINITY affinity,
                                                    VOID **pp) override {
        if (depth == 0 || depth > kMaxCqDepth) return ND_INVALID_PARAMETER_3;
        return kit::HandIfValid(new Cq(engine_, file, depth, affinity), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT STDMETHODCALLTYPE CreateMemoryRegion(REFIID iid, HANDLE file, VOID **pp) override {
        return kit::HandIfValid(new MemoryRegion(this, engine_, file), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT STDMETHODCALLTYPE CreateMemoryWindow(REFIID iid, VOID **pp) override {
        return kit::Hand(new MemoryWindow(this, engine_), iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateSharedReceiveQueue(REFIID iid, HANDLE file, ULONG depth, ULONG max_sge,
                                                       ULONG threshold, USHORT, KAFFINITY affinity,
                                                       VOID **pp) override {
        if (depth == 0 || depth > kMaxQueueDepth) return ND_INVALID_PARAMETER_3;
        if (max_sge > kMaxSge) return ND_INVALID_PARAMETER_4;
        // Every queue takes as many SGEs as the adapter allows, whatever it was
        // created with, as hardware providers round up to the device's (COMPAT).
        return kit::HandIfValid(new SharedReceiveQueue(this, engine_, file, depth, kMaxSge, threshold, affinity), iid,
                                pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT STDMETHODCALLTYPE CreateQueuePair(REFIID iid, IUnknown *rcq, IUnknown *icq, VOID *context, ULONG rdepth,
                                              ULONG idepth, ULONG rsge, ULONG isge, ULONG inline_size,
                                              VOID **pp) override {
        kit::CompletionQueue *r = kit::CompletionQueue::FromUnknown(rcq);
        kit::CompletionQueue *i = kit::CompletionQueue::FromUnknown(icq);
        if (!r) return ND_INVALID_PARAMETER_2;
        if (!i) return ND_INVALID_PARAMETER_3;
        if (rdepth > kMaxQueueDepth) return ND_INVALID_PARAMETER_5;
        if (idepth > kMaxQueueDepth) return ND_INVALID_PARAMETER_6;
        if (rsge > kMaxSge) return ND_INVALID_PARAMETER_7;
        if (isge > kMaxSge) return ND_INVALID_PARAMETER_8;
        if (inline_size > kMaxInlineData) return ND_INVALID_PARAMETER_9;
        return kit::Hand(new QueuePair(this, engine_, r, i, nullptr, context, rdepth, idepth, kMaxSge, kMaxSge,
                                       inline_size),
                         iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateQueuePairWithSrq(REFIID iid, IUnknown *rcq, IUnknown *icq, IUnknown *srq_unknown,
                                                     VOID *context, ULONG idepth, ULONG isge, ULONG inline_size,
                                                     VOID **pp) override {
        kit::CompletionQueue *r = kit::CompletionQueue::FromUnknown(rcq);
        kit::CompletionQueue *i = kit::CompletionQueue::FromUnknown(icq);
        SharedReceiveQueue *srq = SharedReceiveQueue::Find(srq_unknown);
        if (!r) return ND_INVALID_PARAMETER_2;
        if (!i) return ND_INVALID_PARAMETER_3;
        if (!srq || srq->engine() != engine_.get()) return ND_INVALID_PARAMETER_4;
        if (idepth > kMaxQueueDepth) return ND_INVALID_PARAMETER_6;
        if (isge > kMaxSge) return ND_INVALID_PARAMETER_7;
        if (inline_size > kMaxInlineData) return ND_INVALID_PARAMETER_8;
        return kit::Hand(new QueuePair(this, engine_, r, i, srq, context, 0, idepth, kMaxSge, kMaxSge, inline_size),
                         iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateConnector(REFIID iid, HANDLE file, VOID **pp) override {
        return kit::HandIfValid(new Connector(this, engine_, file), iid, pp, ND_INVALID_PARAMETER_2);
    }
    HRESULT STDMETHODCALLTYPE CreateListener(REFIID iid, HANDLE file, VOID **pp) override {
        return kit::HandIfValid(new Listener(this, engine_, file), iid, pp, ND_INVALID_PARAMETER_2);
    }

private:
    std::shared_ptr<Engine> engine_;
};

class Provider : public kit::Unknown<IND2Provider> {
public:
    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *pcb) override {
        if (!pcb) return ND_INVALID_PARAMETER_2;
        return kit::WriteAddressList(kit::LocalIpAddresses(), list, pcb);
    }
    HRESULT STDMETHODCALLTYPE ResolveAddress(const sockaddr *sa, ULONG cb, UINT64 *id) override {
        if (!id) return ND_INVALID_PARAMETER_3;
        if (!kit::IsIpSockaddr(sa, cb)) return ND_INVALID_ADDRESS;
        for (const auto &a : kit::LocalIpAddresses())
            if (kit::SameIp(a.sa(), sa)) {
                *id = kAdapterId;
                return ND_SUCCESS;
            }
        return ND_INVALID_ADDRESS;
    }
    HRESULT STDMETHODCALLTYPE OpenAdapter(REFIID iid, UINT64 id, VOID **pp) override {
        if (!pp) return ND_INVALID_PARAMETER_3;
        *pp = nullptr;
        if (id != kAdapterId) return ND_INVALID_PARAMETER;
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
