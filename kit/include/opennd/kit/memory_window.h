// IND2MemoryWindow's rules for every provider (R104-R107, R075): one
// binding at a time (Bind on a bound window: ND_INVALID_DEVICE_REQUEST),
// checked against the region and counted in it in one step (so a Deregister
// either comes first and the Bind fails, or finds the window and is
// ND_DEVICE_BUSY), the region held while bound, and Invalidate of a window
// that is not bound reported to the caller (R107). The provider makes and
// drops its binding (its token, its table entry) in the calls it passes.
#pragma once

#include <mutex>
#include <utility>

#include "ndspi.h"
#include "opennd/kit/com.h"
#include "opennd/kit/memory_region.h"

namespace opennd::kit {

class MemoryWindow : public Unknown<IND2MemoryWindow> {
public:
    // Binds [address, +length) of `region`; `write`: it grants remote
    // write (R105). `bind()`, under the window's lock once the region
    // counted the window, makes the provider's binding: its failure is the
    // Bind's, and the count is undone.
    template <class Bind>
    HRESULT BindTo(MemoryRegion *region, uint64_t address, uint64_t length, bool write, Bind bind) {
        std::lock_guard<std::mutex> lock(mu_);
        if (region_) return ND_INVALID_DEVICE_REQUEST;
        // The region may have been deregistered since the poster checked it.
        if (!region->ReserveWindow(address, length, write)) return ND_ACCESS_VIOLATION;
        const HRESULT hr = bind();
        if (FAILED(hr)) {
            region->WindowUnbound();
            return hr;
        }
        region_ = ComPtr<MemoryRegion>(region, true);
        return ND_SUCCESS;
    }

    // False if the window was not bound. `unbind()` drops the provider's
    // binding under the window's lock. The region is handed to *region if
    // given, else dropped on return, never under the lock: its last
    // reference may run a provider's Deregister barrier, so a caller
    // holding one of its own locks takes it and drops it after unlocking.
    template <class Unbind>
    bool UnbindWith(Unbind unbind, ComPtr<MemoryRegion> *region = nullptr) {
        return UnbindIf([] { return true; }, unbind, region);
    }
    // UnbindWith, if `pred()` (under the window's lock, while bound) holds:
    // a remote invalidation names the binding it ends.
    template <class Pred, class Unbind>
    bool UnbindIf(Pred pred, Unbind unbind, ComPtr<MemoryRegion> *region) {
        ComPtr<MemoryRegion> held;
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (!region_ || !pred()) return false;
            unbind();
            region_->WindowUnbound();
            held = std::move(region_);
        }
        if (region) *region = std::move(held);
        return true;
    }

protected:
    std::mutex &lock() { return mu_; }

private:
    std::mutex mu_;
    ComPtr<MemoryRegion> region_;  // while bound
};

}  // namespace opennd::kit
