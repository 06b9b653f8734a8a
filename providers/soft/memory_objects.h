// Memory regions and memory windows of the software provider. A region's
// registration is an entry in the engine's MR table (mr_table.h); so is a
// bound window, with the QP it was bound through.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "progress_engine.h"
#include "opennd/kit/com.h"
#include "opennd/kit/memory_region.h"
#include "opennd/kit/memory_window.h"

namespace soft {

// The kit's region shell (Register's checks, overlapped completion, bound
// windows) over an entry of the engine's table.
class MemoryRegion : public opennd::kit::MemoryRegion {
public:
    MemoryRegion(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file);
    ~MemoryRegion() override;
    static MemoryRegion *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    UINT32 STDMETHODCALLTYPE GetLocalToken() override;
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override;

private:
    HRESULT DoRegister(const opennd::kit::Registration &r) override;
    void DoDeregister() override;
    void AfterDeregister() override;

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    // 0: not registered. Written under the region's lock; the token getters
    // read it without (applications call them per request).
    std::atomic<uint32_t> token_{0};
};

// A window on the kit's (opennd/kit/memory_window.h): its binding here is
// an entry in the adapter's table, usable only through the queue pair that
// bound it.
class MemoryWindow : public opennd::kit::MemoryWindow {
public:
    MemoryWindow(IND2Adapter *adapter, std::shared_ptr<Engine> engine);
    ~MemoryWindow() override;
    static MemoryWindow *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    // Binds [address, address+length) of `mr` for `rights` through QP `qp_id`,
    // addressed by the peer at `remote` (fast registration; else `address`).
    // ND_INVALID_DEVICE_REQUEST if already bound, ND_INSUFFICIENT_RESOURCES if
    // the table is full.
    HRESULT Bind(MemoryRegion *mr, uint64_t address, uint64_t length, uint32_t rights, uint64_t qp_id,
                 uint64_t remote);
    // False if it was not bound (kit::MemoryWindow::UnbindWith: `region`).
    bool Invalidate(opennd::kit::ComPtr<opennd::kit::MemoryRegion> *region = nullptr);

    UINT32 STDMETHODCALLTYPE GetRemoteToken() override;

private:
    friend bool InvalidateForPeer(Engine &engine, uint32_t token, uint64_t qp_id, struct Unbound *out);
    void Unbind();  // under the kit's lock()

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    uint32_t token_ = 0;  // under the kit's lock()
    uint64_t qp_id_ = 0;  // the queue pair it is bound through; under the kit's lock()
};

// What a remote invalidation let go of: released by the caller once it holds
// none of its queue pair's locks (dropping a region's last reference runs
// the Deregister barrier; the window's, its destructor).
struct Unbound {
    opennd::kit::ComPtr<MemoryWindow> window;
    opennd::kit::ComPtr<opennd::kit::MemoryRegion> region;
};

// A Send with Invalidate from the peer of queue pair `qp_id` names `token`
// (host order): invalidates the window bound under that token through that
// queue pair, as the window's own Invalidate would. False, and nothing
// changed, for any other token (unknown, stale, a region's, a window bound
// through another connection). What it let go of goes to *out.
bool InvalidateForPeer(Engine &engine, uint32_t token, uint64_t qp_id, Unbound *out);

// ND tokens travel in network byte order (R077).
inline UINT32 ToWireToken(uint32_t t) { return __builtin_bswap32(t); }
inline uint32_t FromWireToken(UINT32 t) { return __builtin_bswap32(t); }

}  // namespace soft
