// Loopback provider child objects: the memory region and the factories
// (queue pair: queue_pair.cpp; connector and listener: connection.cpp).
// Each object keeps its adapter alive (ComPtr).
#include "objects.h"

#include <atomic>

#include "loopback.h"
#include "opennd/kit/com.h"
#include "opennd/kit/memory_region.h"
#include "queue_pair.h"

namespace loopback {
namespace kit = opennd::kit;

namespace {

// The kit's region; its tokens are random numbers.
class MemoryRegion : public kit::MemoryRegion {
public:
    MemoryRegion(IND2Adapter *adapter, HANDLE file) : kit::MemoryRegion(file, SIZE_T(1) << 40), adapter_(adapter, true) {}

    UINT32 STDMETHODCALLTYPE GetLocalToken() override { return local_.load(); }
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return remote_.load(); }

private:
    HRESULT DoRegister(const kit::Registration &) override {
        local_ = RandomToken();
        remote_ = RandomToken();
        return ND_SUCCESS;
    }
    void DoDeregister() override {}
    bool CompletesInline(const kit::Registration &r) const override { return (r.flags & kLoopbackInline) != 0; }

    kit::ComPtr<IND2Adapter> adapter_;
    std::atomic<uint32_t> local_{0}, remote_{0};
};

}  // namespace

HRESULT MakeMemoryRegion(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp) {
    return kit::HandIfValid(new MemoryRegion(adapter, file), iid, pp, ND_INVALID_HANDLE);
}

HRESULT MakeQueuePair(IND2Adapter *adapter, const kit::QueuePairArgs &args, REFIID iid, void **pp) {
    return kit::Hand(new QueuePair(adapter, args), iid, pp);
}

}  // namespace loopback
