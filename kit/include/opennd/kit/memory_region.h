// IND2MemoryRegion's rules for every provider (§8, R070-R076, R104-R105):
// the argument checks of Register in the spec's order, one buffer per
// region, overlapped completion of Register and Deregister, and the count of
// memory windows bound to the region (Deregister while one is bound:
// ND_DEVICE_BUSY). A provider only makes and drops its registration
// (DoRegister, DoDeregister) and hands out its tokens.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "ndspi.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"

namespace opennd::kit {

// ND_MR_FLAG_ALLOW_REMOTE_WRITE is 0x5 (D04): its own bit is 0x4, and it
// implies local write.
inline constexpr ULONG kMrRemoteWriteBit = 0x4;

// A registration: the buffer and the ND_MR_FLAG_* it was registered with.
struct Registration {
    uint64_t address = 0;
    uint64_t length = 0;
    ULONG flags = 0;
    bool Covers(uint64_t a, uint64_t len) const { return a >= address && len <= length && a - address <= length - len; }
    bool LocalWrite() const { return (flags & (ND_MR_FLAG_ALLOW_LOCAL_WRITE | kMrRemoteWriteBit)) != 0; }
};

// True if every page of [p, p + len) is mapped in this process.
bool Mapped(const void *p, size_t len);
// True if every byte of [p, p + len) lies in a mapping this process may
// write (a region with write rights on read-only memory would have a peer's
// Write fault us; a NIC's registration refuses it too).
bool Writable(const void *p, size_t len);
// Copies len bytes from this process's `src`, which the application gave
// and may not be readable: false (nothing faults) if it is not.
bool CopyFromApplication(void *dst, const void *src, size_t len);

class MemoryRegion : public Unknown<IND2MemoryRegion> {
public:
    // `max_size`: the adapter's MaxRegistrationSize.
    MemoryRegion(HANDLE overlapped_file, SIZE_T max_size) : requests_(overlapped_file), max_size_(max_size) {}
    bool Valid() const { return requests_.Valid(); }

    // The registration, if there is one.
    bool Current(Registration *r);
    // A window over [address, +length) is being bound: checked against the
    // registration (R104; `write`: a window granting remote write needs a
    // region with local write, R105) and counted in one step, so a
    // Deregister either comes first (and the bind fails) or sees the window.
    bool ReserveWindow(uint64_t address, uint64_t length, bool write);
    void WindowUnbound() { windows_.fetch_sub(1, std::memory_order_acq_rel); }

    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override { return requests_.CancelAll(); }
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override {
        return requests_.Result(ov, wait);
    }
    HRESULT STDMETHODCALLTYPE Register(const VOID *buffer, SIZE_T size, ULONG flags, OVERLAPPED *ov) final;
    HRESULT STDMETHODCALLTYPE Deregister(OVERLAPPED *ov) final;

protected:
    // Under the region's lock, with checked arguments and no registration:
    // makes it (and the tokens). A failure is returned to the caller.
    virtual HRESULT DoRegister(const Registration &r) = 0;
    // Under the lock: drops the registration. No window is bound.
    virtual void DoDeregister() = 0;
    // Outside the lock, before Deregister completes: wait until no access
    // that checked the old registration is still running (the memory may
    // be freed as soon as Deregister completes).
    virtual void AfterDeregister() {}
    // True to report a Register done at once as ND_SUCCESS, with no
    // completion (the SPI allows it; applications handle both); the default
    // reports ND_PENDING and completes it, what ND applications expect (COMPAT).
    virtual bool CompletesInline(const Registration &) const { return false; }
    std::mutex &lock() { return mu_; }
    bool RegisteredLocked() const { return registered_; }

private:
    OverlappedRequests requests_;
    const SIZE_T max_size_;
    std::mutex mu_;
    bool registered_ = false;
    Registration registration_;
    std::atomic<int> windows_{0};
};

}  // namespace opennd::kit
