// Loopback provider and adapter objects.
#include <sys/random.h>

#include <cstring>
#include <vector>

#include "loopback.h"
#include "objects.h"
#include "opennd/kit/address.h"
#include "opennd/kit/com.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/overlapped_file.h"

namespace loopback {
namespace kit = opennd::kit;

namespace {

kit::IpAddress Addr(const char *text) {
    kit::IpAddress a;
    kit::ParseAddress(text, &a);
    return a;
}

std::vector<kit::IpAddress> AdapterAddresses(uint8_t mode, UINT64 adapter) {
    if (mode == 5) return adapter == 1 ? std::vector<kit::IpAddress>{Addr("127.0.0.1")} : std::vector<kit::IpAddress>{};
    if (adapter == 1) return {Addr("127.0.0.1"), Addr("::1")};
    if (adapter == 2 && mode == 1) return {Addr("127.0.0.2")};
    return {};
}

class Adapter : public kit::Unknown<IND2Adapter> {
public:
    Adapter(uint8_t mode, UINT64 id) : mode_(mode), id_(id) {}

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
        ULONG version = info->InfoVersion;
        *info = ND2_ADAPTER_INFO{};
        info->InfoVersion = version;
        info->VendorId = mode_;
        info->DeviceId = 0x4C42;
        info->AdapterId = id_;
        info->MaxRegistrationSize = SIZE_T(1) << 40;
        info->MaxWindowSize = SIZE_T(1) << 40;
        info->MaxInitiatorSge = info->MaxReceiveSge = info->MaxReadSge = kMaxSge;
        info->MaxTransferLength = 32u << 20;
        info->MaxInlineDataSize = 256;
        info->MaxReceiveQueueDepth = info->MaxInitiatorQueueDepth = kMaxQueueDepth;
        info->MaxCompletionQueueDepth = kMaxCqDepth;
        info->InlineRequestThreshold = 256;
        info->LargeRequestThreshold = 64 << 10;
        info->MaxCallerData = 56;
        info->MaxCalleeData = 148;
        info->AdapterFlags = ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED | ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
        *pcb = sizeof(ND2_ADAPTER_INFO);
        return ND_SUCCESS;
    }
    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *pcb) override {
        if (!pcb) return ND_INVALID_PARAMETER_2;
        return kit::WriteAddressList(AdapterAddresses(mode_, id_), list, pcb);
    }
    HRESULT STDMETHODCALLTYPE CreateCompletionQueue(REFIID iid, HANDLE file, ULONG depth, USHORT, KAFFINITY affinity,
                                                    VOID **pp) override {
        if (depth == 0 || depth > kMaxCqDepth) return ND_INVALID_PARAMETER_3;
        auto *cq = new kit::CompletionQueue(file, depth, kMaxCqDepth, affinity);
        if (!cq->Valid()) {
            cq->Release();
            return ND_INVALID_PARAMETER_2;
        }
        return kit::Hand(cq, iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateMemoryRegion(REFIID iid, HANDLE file, VOID **pp) override {
        return MakeMemoryRegion(this, file, iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateMemoryWindow(REFIID, VOID **) override { return ND_NOT_SUPPORTED; }
    HRESULT STDMETHODCALLTYPE CreateSharedReceiveQueue(REFIID, HANDLE, ULONG, ULONG, ULONG, USHORT, KAFFINITY,
                                                       VOID **) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE CreateQueuePair(REFIID iid, IUnknown *rcq, IUnknown *icq, VOID *context, ULONG rdepth,
                                              ULONG idepth, ULONG rsge, ULONG isge, ULONG inline_size,
                                              VOID **pp) override {
        return MakeQueuePair(this, iid, rcq, icq, context, rdepth, idepth, rsge, isge, inline_size, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateQueuePairWithSrq(REFIID, IUnknown *, IUnknown *, IUnknown *, VOID *, ULONG, ULONG,
                                                     ULONG, VOID **) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE CreateConnector(REFIID iid, HANDLE file, VOID **pp) override {
        return MakeConnector(this, file, iid, pp);
    }
    HRESULT STDMETHODCALLTYPE CreateListener(REFIID iid, HANDLE file, VOID **pp) override {
        return MakeListener(this, file, iid, pp, AdapterAddresses(mode_, id_));
    }

private:
    uint8_t mode_;
    UINT64 id_;
};

class Provider : public kit::Unknown<IND2Provider> {
public:
    explicit Provider(uint8_t mode) : mode_(mode) {}

    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *pcb) override {
        if (mode_ == 4) return ND_INSUFFICIENT_RESOURCES;
        if (!pcb) return ND_INVALID_PARAMETER_2;
        std::vector<kit::IpAddress> all = AdapterAddresses(mode_, 1);
        for (const auto &a : AdapterAddresses(mode_, 2)) all.push_back(a);
        return kit::WriteAddressList(all, list, pcb);
    }
    HRESULT STDMETHODCALLTYPE ResolveAddress(const sockaddr *sa, ULONG cb, UINT64 *id) override {
        if (!id) return ND_INVALID_PARAMETER_3;
        if (!kit::IsIpSockaddr(sa, cb)) return ND_INVALID_ADDRESS;
        for (UINT64 adapter : {UINT64(1), UINT64(2)})
            for (const auto &a : AdapterAddresses(mode_, adapter))
                if (kit::SameIp(a.sa(), sa)) {
                    *id = adapter;
                    return ND_SUCCESS;
                }
        return ND_INVALID_ADDRESS;
    }
    HRESULT STDMETHODCALLTYPE OpenAdapter(REFIID iid, UINT64 id, VOID **pp) override {
        if (!pp) return ND_INVALID_PARAMETER_3;
        *pp = nullptr;
        if (mode_ == 3) return ND_INSUFFICIENT_RESOURCES;
        if (AdapterAddresses(mode_, id).empty()) return ND_INVALID_PARAMETER;
        return kit::Hand(new Adapter(mode_, id), iid, pp);
    }

private:
    uint8_t mode_;
};

HRESULT MakeProvider(REFCLSID clsid, REFIID iid, void **ppv) {
    if (!ppv) return E_POINTER;
    *ppv = nullptr;
    if (!IsLoopbackGuid(clsid)) return CLASS_E_CLASSNOTAVAILABLE;
    uint8_t mode = clsid.Data4[7];
    if (mode == 2) return CLASS_E_CLASSNOTAVAILABLE;
    return kit::Hand(new Provider(mode), iid, ppv);
}

}  // namespace

uint32_t RandomToken() {
    uint32_t t = 0;
    while (t == 0)
        if (getrandom(&t, sizeof t, 0) != sizeof t) t = 0;
    return t;
}

}  // namespace loopback

OPENND_PROVIDER_EXPORTS(loopback::MakeProvider)
