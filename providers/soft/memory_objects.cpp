// Memory regions (on the kit's shell) and windows of the software provider.
#include "memory_objects.h"

#include <mutex>

#include "soft_limits.h"
#include "opennd/kit/registry.h"

namespace soft {
namespace kit = opennd::kit;
namespace {

using MrRegistry = kit::Registry<MemoryRegion, IND2MemoryRegion>;
using MwRegistry = kit::Registry<MemoryWindow, IND2MemoryWindow>;

}  // namespace

MemoryRegion::MemoryRegion(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file)
    : kit::MemoryRegion(file, kMaxRegistrationSize), adapter_(adapter, true), engine_(std::move(engine)) {
    MrRegistry::Add(this);
}

MemoryRegion::~MemoryRegion() {
    MrRegistry::Remove(this);
    if (!token_) return;
    // Released without Deregister (R076): the same barrier, since the
    // application may free the memory as soon as Release returns. (Never
    // under a provider lock: see MemoryWindow::Invalidate.)
    engine_->mrs().Remove(token_);
    engine_->QuiescePlacements();
}

MemoryRegion *MemoryRegion::Find(IUnknown *u) { return MrRegistry::Find(u, IID_IND2MemoryRegion); }

HRESULT MemoryRegion::DoRegister(const kit::Registration &r) {
    MrView v;
    v.address = r.address;
    v.length = r.length;
    if (r.flags & ND_MR_FLAG_ALLOW_LOCAL_WRITE) v.rights |= kRightLocalWrite;
    if (r.flags & ND_MR_FLAG_ALLOW_REMOTE_READ) v.rights |= kRightRemoteRead;
    if (r.flags & kit::kMrRemoteWriteBit) v.rights |= kRightRemoteWrite | kRightLocalWrite;
    if (r.flags & ND_MR_FLAG_RDMA_READ_SINK) v.rights |= kRightReadSink;
    uint32_t token = engine_->mrs().Add(v);
    if (!token) return ND_INSUFFICIENT_RESOURCES;
    token_.store(token, std::memory_order_release);
    return ND_SUCCESS;
}

void MemoryRegion::DoDeregister() {
    engine_->mrs().Remove(token_);
    token_.store(0, std::memory_order_release);
}

// A placement that checked the old entry is over before the application
// may free the memory.
void MemoryRegion::AfterDeregister() { engine_->QuiescePlacements(); }

UINT32 MemoryRegion::GetLocalToken() { return token_.load(std::memory_order_acquire); }

UINT32 MemoryRegion::GetRemoteToken() { return ToWireToken(token_.load(std::memory_order_acquire)); }

MemoryWindow::MemoryWindow(IND2Adapter *adapter, std::shared_ptr<Engine> engine)
    : adapter_(adapter, true), engine_(std::move(engine)) {
    MwRegistry::Add(this);
}

MemoryWindow::~MemoryWindow() {
    MwRegistry::Remove(this);
    Invalidate();
}

MemoryWindow *MemoryWindow::Find(IUnknown *u) { return MwRegistry::Find(u, IID_IND2MemoryWindow); }

HRESULT MemoryWindow::Bind(MemoryRegion *mr, uint64_t address, uint64_t length, uint32_t rights, uint64_t qp_id,
                           uint64_t remote) {
    return BindTo(mr, address, length, (rights & kRightRemoteWrite) != 0, [&]() -> HRESULT {
        MrView v;
        v.rights = rights | kIsWindow;
        v.address = remote;
        v.delta = address - remote;  // (unsigned: wraps both ways)
        v.length = length;
        v.qp_id = qp_id;
        token_ = engine_->mrs().Add(v);
        if (!token_) return ND_INSUFFICIENT_RESOURCES;
        qp_id_ = qp_id;
        std::lock_guard<std::mutex> dir(engine_->windows_mu());
        engine_->windows()[token_] = this;
        return ND_SUCCESS;
    });
}

void MemoryWindow::Unbind() {
    {
        std::lock_guard<std::mutex> dir(engine_->windows_mu());
        engine_->windows().erase(token_);
    }
    engine_->mrs().Remove(token_);
    token_ = 0;
    qp_id_ = 0;
}

bool MemoryWindow::Invalidate(kit::ComPtr<kit::MemoryRegion> *region) {
    return UnbindWith([this] { Unbind(); }, region);
}

bool InvalidateForPeer(Engine &engine, uint32_t token, uint64_t qp_id, Unbound *out) {
    MemoryWindow *mw = nullptr;
    {
        // A window in the directory is bound, so alive until its Unbind
        // (its destructor's too) has taken this lock; a window on its way
        // out is not taken.
        std::lock_guard<std::mutex> dir(engine.windows_mu());
        auto it = engine.windows().find(token);
        if (it == engine.windows().end() || !it->second->TryAddRef()) return false;
        mw = it->second;
    }
    out->window = kit::ComPtr<MemoryWindow>(mw);  // the reference just taken
    // Rebound or invalidated meanwhile: its token is another now.
    return mw->UnbindIf([&] { return mw->token_ == token && mw->qp_id_ == qp_id; }, [&] { mw->Unbind(); },
                        &out->region);
}

UINT32 MemoryWindow::GetRemoteToken() {
    std::lock_guard<std::mutex> lock(this->lock());
    return ToWireToken(token_);
}

}  // namespace soft
