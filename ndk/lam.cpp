// Logical address mappings and the privileged token (lam.h).
#include "lam.h"

#include <sys/random.h>

#include <cstddef>
#include <mutex>

#include "translate.h"

namespace opennd::ndk {
namespace {

UINT32 RandomToken() {
    UINT32 t = 0;
    while (t == 0)
        if (getrandom(&t, sizeof t, 0) != sizeof t) t = 0;
    return t;
}

// An ND2 overlapped call on `mr`, waited for. The OVERLAPPED carries an
// event tagged with bit 0, so no packet reaches the adapter's port (the
// dispatcher knows nothing of this request).
template <class Call>
HRESULT Wait(IND2MemoryRegion *mr, Call &&call) {
    HANDLE event = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    if (!event) return ND_NO_MEMORY;
    OVERLAPPED ov{};
    ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<uintptr_t>(event) | 1);
    HRESULT hr = call(&ov);
    if (hr == ND_PENDING) hr = mr->GetOverlappedResult(&ov, TRUE);
    CloseHandle(event);
    return hr;
}

void Drop(IND2MemoryRegion *mr) {
    Wait(mr, [&](OVERLAPPED *ov) { return mr->Deregister(ov); });
    mr->Release();
}

}  // namespace

Lams::Lams(IND2Adapter *nd, HANDLE file) : nd_(nd), file_(file), token_(RandomToken()) {}

void Lams::ReleaseAll() {
    std::multimap<uintptr_t, Lam> all;
    std::unordered_map<UINT32, Fast> fast;
    {
        std::unique_lock lock(mu_);
        all.swap(lams_);
        starts_.clear();
        fast.swap(fast_);
        fast_of_.clear();
        fast_live_.store(0, std::memory_order_relaxed);
    }
    for (auto &[token, f] : fast) f.window->Release();
    for (auto &[start, lam] : all) Drop(lam.mr);
}

NTSTATUS Lams::Build(MDL *mdl, SIZE_T length, NDK_LOGICAL_ADDRESS_MAPPING *out, ULONG *size, ULONG *fbo) {
    if (!mdl || !size || !fbo || length == 0 || !MdlCovers(mdl, length)) return STATUS_INVALID_PARAMETER;
    const auto va = reinterpret_cast<uintptr_t>(MmGetMdlVirtualAddress(mdl));
    const uintptr_t start = va & ~uintptr_t(PAGE_SIZE - 1);
    if (va + length < va || va + length > UINTPTR_MAX - PAGE_SIZE) return STATUS_INVALID_PARAMETER;
    const uintptr_t end = (va + length + PAGE_SIZE - 1) & ~uintptr_t(PAGE_SIZE - 1);
    const uint64_t pages = (end - start) / PAGE_SIZE;
    const uint64_t need = offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + pages * sizeof(NDK_LOGICAL_ADDRESS);
    if (need > 0xFFFFFFFFu) return STATUS_INVALID_PARAMETER;
    if (!out || *size < need) {
        *size = static_cast<ULONG>(need);
        return STATUS_BUFFER_TOO_SMALL;
    }
    IND2MemoryRegion *mr = nullptr;
    HRESULT hr = nd_->CreateMemoryRegion(IID_IND2MemoryRegion, file_, reinterpret_cast<void **>(&mr));
    if (FAILED(hr)) return StatusFromNd(hr);
    hr = Wait(mr, [&](OVERLAPPED *ov) {
        return mr->Register(reinterpret_cast<void *>(start), end - start, ND_MR_FLAG_ALLOW_LOCAL_WRITE, ov);
    });
    if (FAILED(hr)) {
        mr->Release();
        return StatusFromNd(hr);
    }
    uint64_t id;
    {
        std::unique_lock lock(mu_);
        id = next_id_++;
        lams_.emplace(start, Lam{id, end, mr, mr->GetLocalToken()});
        starts_.emplace(id, start);
        if (end - start > widest_) widest_ = end - start;
    }
    out->AdapterContext = reinterpret_cast<PVOID>(static_cast<uintptr_t>(id));
    out->AdapterPageCount = static_cast<ULONG>(pages);
    for (uint64_t i = 0; i < pages; ++i) out->AdapterPageArray[i].QuadPart = static_cast<LONGLONG>(start + i * PAGE_SIZE);
    *fbo = static_cast<ULONG>(va - start);
    *size = static_cast<ULONG>(need);
    return STATUS_SUCCESS;
}

void Lams::Release(NDK_LOGICAL_ADDRESS_MAPPING *lam) {
    if (!lam) return;
    IND2MemoryRegion *mr = nullptr;
    {
        std::unique_lock lock(mu_);
        auto s = starts_.find(reinterpret_cast<uintptr_t>(lam->AdapterContext));
        if (s == starts_.end()) return;  // not one of ours, or released already
        auto [first, last] = lams_.equal_range(s->second);
        for (auto it = first; it != last; ++it)
            if (it->second.id == s->first) {
                mr = it->second.mr;
                lams_.erase(it);
                break;
            }
        starts_.erase(s);
    }
    if (mr) Drop(mr);
}

const Lams::Lam *Lams::FindLocked(uintptr_t at, uintptr_t to) const {
    if (to < at) return nullptr;
    // Mappings that start at or below `at`, nearest first, back as far as
    // the widest mapping reaches.
    for (auto it = lams_.upper_bound(at); it != lams_.begin();) {
        --it;
        if (at - it->first >= widest_) break;
        if (to <= it->second.end) return &it->second;
    }
    return nullptr;
}

bool Lams::Translate(const NDK_SGE *sge, ULONG n, ND2_SGE *out, bool writes) const {
    std::shared_lock lock(mu_);
    for (ULONG i = 0; i < n; ++i) {
        out[i] = *SgesToNd(&sge[i]);
        const auto at = static_cast<uintptr_t>(sge[i].LogicalAddress.QuadPart);
        if (sge[i].MemoryRegionToken == token_) {
            const Lam *lam = FindLocked(at, at + sge[i].Length);
            if (!lam) return false;
            out[i].MemoryRegionToken = lam->token;
            continue;
        }
        auto f = fast_.empty() ? fast_.end() : fast_.find(sge[i].MemoryRegionToken);
        if (f == fast_.end()) continue;  // the provider's own token, or none: it judges
        const Fast &e = f->second;
        if (at < e.at || sge[i].Length > e.length || at - e.at > e.length - sge[i].Length) return false;
        if (writes && !e.local_write) return false;
        out[i].MemoryRegionToken = e.region_token;
        out[i].Buffer = reinterpret_cast<void *>(e.buffer + (at - e.at));
    }
    return true;
}

void Lams::AddFast(const void *owner, IND2MemoryWindow *window, UINT32 token, uint64_t at, uint64_t length,
                   uintptr_t buffer, UINT32 region_token, bool local_write) {
    window->AddRef();
    IND2MemoryWindow *dropped[2] = {};
    {
        std::unique_lock lock(mu_);
        if (auto old = fast_of_.find(owner); old != fast_of_.end()) dropped[0] = EraseFastLocked(old->second);
        if (fast_.count(token)) dropped[1] = EraseFastLocked(token);  // a stale entry's token, reused
        fast_[token] = Fast{owner, window, at, length, buffer, region_token, local_write};
        fast_of_[owner] = token;
        fast_live_.store(fast_.size(), std::memory_order_relaxed);
    }
    for (IND2MemoryWindow *w : dropped)
        if (w) w->Release();  // never under mu_: a last reference unbinds in the provider
}

IND2MemoryWindow *Lams::EraseFastLocked(UINT32 token) {
    auto f = fast_.find(token);
    IND2MemoryWindow *w = f->second.window;
    fast_of_.erase(f->second.owner);
    fast_.erase(f);
    fast_live_.store(fast_.size(), std::memory_order_relaxed);
    return w;
}

void Lams::RemoveFast(const void *owner) {
    IND2MemoryWindow *w = nullptr;
    {
        std::unique_lock lock(mu_);
        if (auto it = fast_of_.find(owner); it != fast_of_.end()) w = EraseFastLocked(it->second);
    }
    if (w) w->Release();
}

IND2MemoryWindow *Lams::TakeFast(UINT32 token) {
    std::unique_lock lock(mu_);
    return fast_.count(token) ? EraseFastLocked(token) : nullptr;
}

IND2MemoryRegion *Lams::Holding(uintptr_t at, uintptr_t to) const {
    std::shared_lock lock(mu_);
    const Lam *lam = FindLocked(at, to);
    if (!lam) return nullptr;
    lam->mr->AddRef();
    return lam->mr;
}

}  // namespace opennd::ndk
