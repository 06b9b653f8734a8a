// Memory regions and windows (memory.h).
#include <cerrno>

#include "memory.h"
#include "objects.h"
#include "opennd/kit/registry.h"

namespace opennd::verbs {
namespace {

using Regions = kit::Registry<Region, IND2MemoryRegion>;
using Windows = kit::Registry<Window, IND2MemoryWindow>;

int Access(ULONG flags, bool sink_needs_write, bool windows) {
    // Type 2 windows bind only on regions that allow it (C10-73); ND binds
    // windows on any region.
    int access = windows ? IBV_ACCESS_MW_BIND : 0;
    if (flags & ND_MR_FLAG_ALLOW_LOCAL_WRITE) access |= IBV_ACCESS_LOCAL_WRITE;
    if (flags & ND_MR_FLAG_ALLOW_REMOTE_READ) access |= IBV_ACCESS_REMOTE_READ;
    if (flags & kit::kMrRemoteWriteBit) access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    // A Read's data is written locally; iWARP RNICs also want remote write
    // rights on its sink (siw does not, docs/verbs.md, and there it would
    // let the peer write what it may only read from).
    if (flags & ND_MR_FLAG_RDMA_READ_SINK)
        access |= IBV_ACCESS_LOCAL_WRITE | (sink_needs_write ? IBV_ACCESS_REMOTE_WRITE : 0);
    return access;
}

HRESULT RegisterError(int err) {
    return err == EFAULT || err == EPERM || err == EACCES ? ND_ACCESS_VIOLATION : ND_INSUFFICIENT_RESOURCES;
}

}  // namespace

Region::Region(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file)
    : kit::MemoryRegion(file, device->info().MaxRegistrationSize), device_(std::move(device)),
      adapter_(adapter, true) {
    Regions::Add(this);
}

Region::~Region() {
    Regions::Remove(this);
    if (mr_) {
        device_->RemoveKey(mr_->lkey);
        ibv_dereg_mr(mr_);
    }
}

Region *Region::Find(IUnknown *u) { return Regions::Find(u, IID_IND2MemoryRegion); }

HRESULT Region::DoRegister(const kit::Registration &r) {
    mr_ = ibv_reg_mr(device_->pd(), reinterpret_cast<void *>(r.address), r.length,
                     Access(r.flags, device_->caps().sink_needs_write, device_->caps().windows));
    if (!mr_) return RegisterError(errno);
    local_ = mr_->lkey;
    remote_ = mr_->rkey;
    device_->AddKey(mr_->lkey);
    return ND_SUCCESS;
}

void Region::DoDeregister() {
    device_->RemoveKey(mr_->lkey);
    ibv_dereg_mr(mr_);
    mr_ = nullptr;
    local_ = remote_ = 0;
}

Window::Window(std::shared_ptr<Device> device, IND2Adapter *adapter)
    : device_(std::move(device)), adapter_(adapter, true) {
    if (device_->caps().windows && (mw_ = ibv_alloc_mw(device_->pd(), IBV_MW_TYPE_2))) rkey_ = mw_->rkey;
    Windows::Add(this);
}

Window::~Window() {
    Windows::Remove(this);
    if (mr_) ibv_dereg_mr(mr_);
    if (mw_) ibv_dealloc_mw(mw_);
}

Window *Window::Find(IUnknown *u) { return Windows::Find(u, IID_IND2MemoryWindow); }

HRESULT Window::Register(uint64_t address, uint64_t length, ULONG flags, uint64_t remote) {
    int access = 0;
    if (flags & ND_OP_FLAG_ALLOW_READ) access |= IBV_ACCESS_REMOTE_READ;
    if (flags & ND_OP_FLAG_ALLOW_WRITE) access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    // A zero-length window grants nothing; verbs registers at least a byte.
    // The device translates the peer's addresses: remote maps to address.
    mr_ = ibv_reg_mr_iova(device_->pd(), reinterpret_cast<void *>(address), length ? length : 1, remote,
                          length ? access : 0);
    if (!mr_) return RegisterError(errno);
    device_key_ = rkey_;
    rkey_ = mr_->rkey;
    return ND_SUCCESS;
}

// A device window bound by the device is unbound by the queue pair's
// LOCAL_INV; one bound by a registration (and every emulated one) here.
void Window::Drop() {
    if (!mr_) return;
    ibv_dereg_mr(mr_);
    mr_ = nullptr;
    rkey_ = mw_ ? device_key_ : 0;  // a device window's keys go on from where they were
}

// Released while bound: an emulated binding goes with its registration; a
// device window is freed (ibv_dealloc_mw) by the destructor, which
// invalidates it.
void Window::OnFinalRelease() {
    UnbindWith([this] { Drop(); });
}

HRESULT MakeMemoryRegion(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp) {
    return kit::HandIfValid(new Region(std::move(device), adapter, file), iid, pp, ND_INVALID_HANDLE);
}

HRESULT MakeMemoryWindow(std::shared_ptr<Device> device, IND2Adapter *adapter, REFIID iid, void **pp) {
    return kit::Hand(new Window(std::move(device), adapter), iid, pp);
}

}  // namespace opennd::verbs
