// opennd::client::Region: one memory region over memory its user owns
// (a vector, an mmap), registered and deregistered with bounded waits.
// Deregistered before it is released, as the SPI asks (R076).
#pragma once

#include <cstddef>

#include "common/await.h"
#include "common/com_ptr.h"
#include "common/status.h"
#include "ndspi.h"

namespace opennd::client {

constexpr ULONG kAllAccess =
    ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ | ND_MR_FLAG_ALLOW_REMOTE_WRITE;

// The bound on teardown's Deregister when the owner gives none.
constexpr uint64_t kTeardownMs = 10000;

class Region {
public:
    Region() = default;
    ~Region() { Reset(); }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;

    // A new region on (adapter, file) for [data, data + size); an earlier
    // one is deregistered and released first.
    Status Register(IND2Adapter *adapter, HANDLE file, void *data, size_t size, ULONG flags, Deadline d);
    // Asks the provider even if no Register succeeded (its answer is what
    // a caller testing it wants); ND_SUCCESS if there is no region at all.
    Status Deregister(Deadline d);
    // Deregisters a registration that succeeded (bounded by kTeardownMs)
    // and releases the region.
    void Reset();

    IND2MemoryRegion *get() const { return mr_.get(); }
    IND2MemoryRegion *operator->() const { return mr_.get(); }
    operator IND2MemoryRegion *() const { return mr_.get(); }  // as ComPtr's
    // Hands the object over without deregistering it (cases that test what
    // releasing a registered region does).
    ComPtr<IND2MemoryRegion> Take() {
        registered_ = false;
        return std::move(mr_);
    }

private:
    ComPtr<IND2MemoryRegion> mr_;
    bool registered_ = false;
};

}  // namespace opennd::client
