// Loopback provider and adapter: the kit's provider and adapter (every
// Create* check is the kit's), serving the addresses of the GUID's mode.
#include <sys/random.h>

#include <cstring>
#include <vector>

#include "loopback.h"
#include "objects.h"
#include "opennd/kit/adapter.h"

namespace loopback {
namespace kit = opennd::kit;

namespace {

opennd::net::IpAddress Addr(const char *text) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    return a;
}

std::vector<opennd::net::IpAddress> AdapterAddresses(uint8_t mode, UINT64 adapter) {
    if (mode == 5) return adapter == 1 ? std::vector<opennd::net::IpAddress>{Addr("127.0.0.1")} : std::vector<opennd::net::IpAddress>{};
    if (adapter == 1) return {Addr("127.0.0.1"), Addr("::1")};
    if (adapter == 2 && mode == 1) return {Addr("127.0.0.2")};
    return {};
}

ND2_ADAPTER_INFO AdapterInfo(uint8_t mode, UINT64 id) {
    ND2_ADAPTER_INFO info{};
    info.VendorId = mode;
    info.DeviceId = 0x4C42;
    info.AdapterId = id;
    info.MaxRegistrationSize = SIZE_T(1) << 40;
    info.MaxWindowSize = SIZE_T(1) << 40;
    info.MaxInitiatorSge = info.MaxReceiveSge = info.MaxReadSge = kMaxSge;
    info.MaxTransferLength = kMaxTransferLength;
    info.MaxInlineDataSize = kMaxInlineData;
    info.MaxReceiveQueueDepth = info.MaxInitiatorQueueDepth = kMaxQueueDepth;
    info.MaxCompletionQueueDepth = kMaxCqDepth;
    info.InlineRequestThreshold = kMaxInlineData;
    info.LargeRequestThreshold = 64 << 10;
    info.MaxInboundReadLimit = info.MaxOutboundReadLimit = 8;
    info.MaxCallerData = 56;
    info.MaxCalleeData = 148;
    info.AdapterFlags = ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED | ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED |
                        ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
    return info;  // no SRQ (MaxSharedReceiveQueueDepth 0), no windows; connections within the process
}

class Adapter : public kit::Adapter {
public:
    Adapter(uint8_t mode, UINT64 id) : kit::Adapter(AdapterInfo(mode, id)), mode_(mode), id_(id) {}

private:
    std::vector<opennd::net::IpAddress> Addresses() override { return AdapterAddresses(mode_, id_); }
    HRESULT NewMemoryRegion(HANDLE file, REFIID iid, void **pp) override {
        return MakeMemoryRegion(this, file, iid, pp);
    }
    HRESULT NewQueuePair(const kit::QueuePairArgs &a, REFIID iid, void **pp) override {
        return MakeQueuePair(this, a, iid, pp);
    }
    HRESULT NewConnector(HANDLE file, REFIID iid, void **pp) override {
        return MakeConnector(this, file, info(), iid, pp, AdapterAddresses(mode_, id_));
    }
    HRESULT NewListener(HANDLE file, REFIID iid, void **pp) override {
        return MakeListener(this, file, iid, pp, AdapterAddresses(mode_, id_));
    }

    uint8_t mode_;
    UINT64 id_;
};

class Provider : public kit::Provider {
public:
    explicit Provider(uint8_t mode) : mode_(mode) {}

    HRESULT STDMETHODCALLTYPE QueryAddressList(SOCKET_ADDRESS_LIST *list, ULONG *pcb) override {
        if (mode_ == 4) return ND_INSUFFICIENT_RESOURCES;
        return kit::Provider::QueryAddressList(list, pcb);
    }

private:
    std::vector<UINT64> AdapterIds() override {
        std::vector<UINT64> ids;
        for (UINT64 id : {UINT64(1), UINT64(2)})
            if (!loopback::AdapterAddresses(mode_, id).empty()) ids.push_back(id);
        return ids;
    }
    std::vector<opennd::net::IpAddress> AdapterAddresses(UINT64 id) override { return loopback::AdapterAddresses(mode_, id); }
    HRESULT NewAdapter(UINT64 id, REFIID iid, void **pp) override {
        if (mode_ == 3) return ND_INSUFFICIENT_RESOURCES;
        return kit::Hand(new Adapter(mode_, id), iid, pp);
    }

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
