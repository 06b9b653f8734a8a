// The verbs provider and its adapters: one adapter per RDMA device
// (AdapterId: the node GUID), serving the addresses rdma_cm maps to it.
// The kit answers IND2Provider and IND2Adapter and checks every argument
// against the ND2_ADAPTER_INFO the device declares (device.cpp).
#include "completion_queue.h"
#include "device.h"
#include "objects.h"
#include "opennd/kit/adapter.h"
#include "opennd/kit/adapter_notes.h"
#include "opennd/kit/extensions.h"
#include "shared_receive_queue.h"

namespace opennd::verbs {
namespace {

// {4F70656E-4E44-5662-7273-000000000001}
constexpr GUID kProviderGuid = {0x4F70656E, 0x4E44, 0x5662, {0x72, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}};

class Adapter : public kit::Adapter {
public:
    explicit Adapter(std::shared_ptr<Device> device) : kit::Adapter(device->info()), device_(std::move(device)) {}

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override {
        if (ppv && iid == IID_IOpenNdAdapterNotes) return kit::AdapterNotes::Make(device_->Notes(), ppv);
        if (ppv && iid == IID_IOpenNdAdapterExt) return kit::AdapterExt::Make(OPENND_EXT_FAST_REGISTER | OPENND_EXT_SHARED_ENDPOINT, ppv);
        return kit::Adapter::QueryInterface(iid, ppv);
    }

private:
    std::vector<kit::IpAddress> Addresses() override { return device_->Addresses(); }
    bool OwnsCompletionQueue(IUnknown *cq) override {
        CompletionQueue *c = CompletionQueue::Find(cq);
        return c && c->device() == device_.get();
    }
    HRESULT NewCompletionQueue(HANDLE file, ULONG depth, KAFFINITY affinity, REFIID iid, void **pp) override {
        auto *cq = new CompletionQueue(device_, file, depth, affinity);
        if (!cq->Valid()) {
            const bool bad_file = !static_cast<kit::CompletionQueue *>(cq)->kit::CompletionQueue::Valid();
            cq->Release();
            return bad_file ? ND_INVALID_HANDLE : ND_INSUFFICIENT_RESOURCES;
        }
        return kit::Hand(static_cast<kit::CompletionQueue *>(cq), iid, pp);
    }
    bool OwnsSharedReceiveQueue(IUnknown *u) override {
        SharedReceiveQueue *srq = SharedReceiveQueue::Find(u);
        return srq && srq->device() == device_.get();
    }
    HRESULT NewSharedReceiveQueue(const kit::SharedReceiveQueueArgs &a, REFIID iid, void **pp) override {
        auto *srq = new SharedReceiveQueue(device_, this, a);
        if (!srq->Valid()) {
            const bool bad_file = !static_cast<kit::SharedReceiveQueue *>(srq)->kit::SharedReceiveQueue::Valid();
            srq->Release();
            return bad_file ? ND_INVALID_HANDLE : ND_INSUFFICIENT_RESOURCES;
        }
        return kit::Hand(static_cast<kit::SharedReceiveQueue *>(srq), iid, pp);
    }
    HRESULT NewMemoryRegion(HANDLE file, REFIID iid, void **pp) override {
        return MakeMemoryRegion(device_, this, file, iid, pp);
    }
    HRESULT NewMemoryWindow(REFIID iid, void **pp) override { return MakeMemoryWindow(device_, this, iid, pp); }
    HRESULT NewQueuePair(const kit::QueuePairArgs &a, REFIID iid, void **pp) override {
        return MakeQueuePair(device_, this, a, iid, pp);
    }
    HRESULT NewConnector(HANDLE file, REFIID iid, void **pp) override {
        return MakeConnector(device_, this, file, iid, pp);
    }
    HRESULT NewListener(HANDLE file, REFIID iid, void **pp) override {
        return MakeListener(device_, this, file, iid, pp);
    }

    std::shared_ptr<Device> device_;
};

class Provider : public kit::Provider {
    std::vector<UINT64> AdapterIds() override {
        std::vector<UINT64> ids;
        for (const DeviceEntry &d : Devices()) ids.push_back(d.guid);
        return ids;
    }
    std::vector<kit::IpAddress> AdapterAddresses(UINT64 id) override {
        std::vector<kit::IpAddress> out;
        for (const auto &a : kit::LocalIpAddresses())
            if (ibv_context *ctx = DeviceOf(a); ctx && ibv_get_device_guid(ctx->device) == id) out.push_back(a);
        return out;
    }
    HRESULT NewAdapter(UINT64 id, REFIID iid, void **pp) override {
        for (const DeviceEntry &d : Devices()) {
            if (d.guid != id) continue;
            std::shared_ptr<Device> device = Device::Get(d.context);
            if (!device) return ND_INSUFFICIENT_RESOURCES;
            return kit::Hand(new Adapter(std::move(device)), iid, pp);
        }
        return ND_INVALID_PARAMETER;
    }
};

HRESULT MakeProvider(REFCLSID clsid, REFIID iid, void **ppv) {
    if (!ppv) return E_POINTER;
    *ppv = nullptr;
    if (clsid != kProviderGuid) return CLASS_E_CLASSNOTAVAILABLE;
    return kit::Hand(new Provider, iid, ppv);
}

}  // namespace
}  // namespace opennd::verbs

OPENND_PROVIDER_EXPORTS(opennd::verbs::MakeProvider)
