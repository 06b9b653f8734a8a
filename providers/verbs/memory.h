// Memory regions and windows. A region is one ibv_reg_mr with ND's rights
// as verbs access flags. A window can be a type 2 memory window where the
// device has them (rxe, mlx4/5, irdma; OPENND_VERBS_WINDOWS=1, not yet the
// default): Bind posts IBV_WR_BIND_MW with the next key (the window's
// token, known as soon as Bind returns), Invalidate IBV_WR_LOCAL_INV, and
// the window works only through the queue pair it was bound on (R078).
// By default it is emulated the way Microsoft's own ND2 provider for mlx4
// did it (VERBS-MAPPING §1.1): Bind
// registers the window's range again with the window's rights (its rkey is
// the window's token, known as soon as Bind returns), Invalidate drops that
// registration; each also posts a zero-length RDMA Write to the connected
// peer (rkey 0; measured harmless on rxe and siw, docs/verbs.md) so its
// completion comes in order with the queue pair's other requests.
// Remote tokens are in network byte order (R077); local ones are the lkey.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <atomic>
#include <memory>

#include "device.h"
#include "opennd/kit/memory_region.h"
#include "opennd/kit/memory_window.h"

namespace opennd::verbs {

class Region : public kit::MemoryRegion {
public:
    Region(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file);
    ~Region() override;
    static Region *Find(IUnknown *u);
    const Device *device() const { return device_.get(); }

    UINT32 STDMETHODCALLTYPE GetLocalToken() override { return local_.load(); }
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return htonl(remote_.load()); }
    // The registration (while a window is bound to it, it stays).
    ibv_mr *mr() const { return mr_; }

private:
    HRESULT DoRegister(const kit::Registration &r) override;
    void DoDeregister() override;

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    ibv_mr *mr_ = nullptr;
    std::atomic<uint32_t> local_{0}, remote_{0};
};

class Window : public kit::MemoryWindow {
public:
    Window(std::shared_ptr<Device> device, IND2Adapter *adapter);
    ~Window() override;
    static Window *Find(IUnknown *u);
    const Device *device() const { return device_.get(); }

    // A device window (type 2), or none (emulated).
    ibv_mw *mw() const { return mw_; }
    // Under the kit's window lock (BindTo, UnbindWith). Emulated: the
    // registration that is the binding. Device window: the key the next
    // binding takes (ibv_inc_rkey), and the one to invalidate.
    // `remote`: the address the peer uses (a fast registration; else `address`).
    HRESULT Register(uint64_t address, uint64_t length, ULONG flags, uint64_t remote);
    // Bound by a registration (emulated, or fast-registered) rather than the device.
    bool registered() const { return mr_ != nullptr; }
    void Drop();
    uint32_t NextKey() {
        rkey_ = ibv_inc_rkey(rkey_.load());
        return rkey_;
    }
    uint32_t key() const { return rkey_.load(); }

    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return htonl(rkey_.load()); }

private:
    void OnFinalRelease() override;

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    ibv_mr *mr_ = nullptr;
    ibv_mw *mw_ = nullptr;
    std::atomic<uint32_t> rkey_{0};
    uint32_t device_key_ = 0;  // a device window's key while a registration binds it
};

}  // namespace opennd::verbs
