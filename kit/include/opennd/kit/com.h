// COM-lite plumbing shared by every provider: reference counting,
// QueryInterface over an interface's IID chain, and the per-library count of
// live objects behind DllCanUnloadNow.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "ndspi.h"

namespace opennd::kit {

// Objects alive in this provider library (providers, adapters and all their
// children). The kit is a static library linked into each provider, so every
// provider library has its own count.
long LiveObjects();
void AddLiveObject();
void RemoveLiveObject();

// The IIDs an interface answers to: its own and its bases', most derived first.
template <class I>
struct InterfaceIds;
#define OPENND_KIT_IIDS(I, ...)                                  \
    template <>                                                  \
    struct InterfaceIds<I> {                                     \
        static bool Matches(REFIID iid) {                        \
            for (const GUID *g : {__VA_ARGS__})                  \
                if (iid == *g) return true;                      \
            return false;                                        \
        }                                                        \
    }
OPENND_KIT_IIDS(IND2Provider, &IID_IND2Provider);
OPENND_KIT_IIDS(IND2Adapter, &IID_IND2Adapter);
OPENND_KIT_IIDS(IND2CompletionQueue, &IID_IND2CompletionQueue, &IID_IND2Overlapped);
OPENND_KIT_IIDS(IND2MemoryRegion, &IID_IND2MemoryRegion, &IID_IND2Overlapped);
OPENND_KIT_IIDS(IND2MemoryWindow, &IID_IND2MemoryWindow);
OPENND_KIT_IIDS(IND2SharedReceiveQueue, &IID_IND2SharedReceiveQueue, &IID_IND2Overlapped);
OPENND_KIT_IIDS(IND2QueuePair, &IID_IND2QueuePair);
OPENND_KIT_IIDS(IND2Connector, &IID_IND2Connector, &IID_IND2Overlapped);
OPENND_KIT_IIDS(IND2Listener, &IID_IND2Listener, &IID_IND2Overlapped);

// Implements IUnknown for one ND interface. The object is deleted when the
// last reference goes; Derived may override OnFinalRelease() for the implicit
// actions of §1.4 (disconnect, flush, cancel) that must run before that.
// Objects are created with one reference, owned by whoever created them.
//
// A provider thread that finds an object through a registry and must keep
// it alive for a moment takes a hold, not a reference: the application's
// last Release() returns 0 whatever a provider thread is doing (programs
// check it, COMPAT), and the object is deleted once the holds are gone too.
// References and holds share one word (references in the upper half), so
// "no reference and no hold" is seen once, by one thread.
template <class Interface>
class Unknown : public Interface {
public:
    Unknown() { AddLiveObject(); }
    Unknown(const Unknown &) = delete;
    Unknown &operator=(const Unknown &) = delete;

    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override {
        if (!ppv) return E_POINTER;
        if (iid == IID_IUnknown || InterfaceIds<Interface>::Matches(iid)) {
            *ppv = static_cast<Interface *>(this);
            AddRef();
            return S_OK;
        }
        *ppv = nullptr;
        return E_NOINTERFACE;
    }
    ULONG STDMETHODCALLTYPE AddRef() override {
        return Refs(state_.fetch_add(kRef, std::memory_order_relaxed) + kRef);
    }
    // AddRef unless the object is already on its way out (no reference
    // left): for threads that find objects through a registry.
    bool TryAddRef() { return TryAdd(kRef); }
    // A hold, on the same terms; Unhold() gives it back.
    bool TryHold() { return TryAdd(1); }
    void Unhold() {
        if (state_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
    ULONG STDMETHODCALLTYPE Release() override {
        // One hold is taken with the release, so that the object outlives
        // OnFinalRelease whoever drops the last hold.
        uint64_t now = state_.fetch_add(1 - kRef, std::memory_order_acq_rel) + 1 - kRef;
        ULONG left = Refs(now);
        if (left == 0) OnFinalRelease();
        Unhold();
        return left;
    }

protected:
    virtual ~Unknown() { RemoveLiveObject(); }
    virtual void OnFinalRelease() {}

private:
    static constexpr uint64_t kRef = uint64_t(1) << 32;
    static ULONG Refs(uint64_t state) { return static_cast<ULONG>(state >> 32); }
    bool TryAdd(uint64_t what) {
        uint64_t n = state_.load(std::memory_order_relaxed);
        while (Refs(n) != 0)
            if (state_.compare_exchange_weak(n, n + what, std::memory_order_acquire, std::memory_order_relaxed))
                return true;
        return false;
    }
    std::atomic<uint64_t> state_{kRef};
};

// Returns the object as `Interface` if iid names it, for Create* methods:
// E_NOINTERFACE (and the object released) if the iid is not supported.
template <class Interface>
HRESULT Hand(Unknown<Interface> *obj, REFIID iid, void **ppv) {
    if (!ppv) {
        obj->Release();
        return E_POINTER;
    }
    HRESULT hr = obj->QueryInterface(iid, ppv);
    obj->Release();
    return hr;
}

// Hand for objects that take an overlapped file: `invalid` (and the object
// released) if the handle given was not an open overlapped file.
template <class T>
HRESULT HandIfValid(T *obj, REFIID iid, void **ppv, HRESULT invalid) {
    if (!obj->Valid()) {
        obj->Release();
        if (ppv) *ppv = nullptr;
        return invalid;
    }
    return Hand(obj, iid, ppv);
}

// A small owning pointer for COM references (AddRef on copy, Release on drop).
template <class T>
class ComPtr {
public:
    ComPtr() = default;
    explicit ComPtr(T *p, bool add_ref = false) : p_(p) {
        if (p_ && add_ref) p_->AddRef();
    }
    ComPtr(const ComPtr &o) : p_(o.p_) {
        if (p_) p_->AddRef();
    }
    ComPtr(ComPtr &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    ComPtr &operator=(ComPtr o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~ComPtr() {
        if (p_) p_->Release();
    }
    T *get() const { return p_; }
    T *operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    T **put() {
        reset();
        return &p_;
    }
    void reset() {
        if (p_) p_->Release();
        p_ = nullptr;
    }
    T *detach() {
        T *p = p_;
        p_ = nullptr;
        return p;
    }

private:
    T *p_ = nullptr;
};

// A hold on a kit object (TryHold/Unhold), for what a provider keeps of an
// object the application owns: it stays in memory, yet the application's
// last Release still returns 0 and runs the object's final release. Empty
// if the object was already on its way out. Move-only.
template <class T>
class HoldPtr {
public:
    HoldPtr() = default;
    explicit HoldPtr(T *p) : p_(p && p->TryHold() ? p : nullptr) {}
    HoldPtr(HoldPtr &&o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    HoldPtr &operator=(HoldPtr &&o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    HoldPtr(const HoldPtr &) = delete;
    HoldPtr &operator=(const HoldPtr &) = delete;
    ~HoldPtr() {
        if (p_) p_->Unhold();
    }
    T *get() const { return p_; }
    T *operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    void reset() {
        if (p_) p_->Unhold();
        p_ = nullptr;
    }

private:
    T *p_ = nullptr;
};

}  // namespace opennd::kit

// Defines the two exports of a provider library. `make_provider` is an
// expression of type HRESULT(*)(REFCLSID, REFIID, void**) that creates the
// provider object for a catalog GUID.
#define OPENND_PROVIDER_EXPORTS(make_provider)                                                 \
    extern "C" OPENND_API HRESULT DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv) { \
        return (make_provider)(rclsid, riid, ppv);                                              \
    }                                                                                           \
    extern "C" OPENND_API HRESULT DllCanUnloadNow(void) {                                       \
        return ::opennd::kit::LiveObjects() == 0 ? S_OK : S_FALSE;                              \
    }
