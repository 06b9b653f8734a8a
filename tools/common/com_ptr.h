// opennd::client::ComPtr: one reference to an IND2 (or IUnknown) object,
// released when it goes. Move-only: a second reference is taken on purpose
// (Share), never by an assignment that looks like a copy.
#pragma once

#include <utility>

#include "ndspi.h"

namespace opennd::client {

template <class T>
class ComPtr {
public:
    ComPtr() = default;
    ComPtr(std::nullptr_t) {}
    explicit ComPtr(T *adopt) : p_(adopt) {}  // takes over a reference the caller holds
    ComPtr(ComPtr &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    ComPtr &operator=(ComPtr &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    ComPtr(const ComPtr &) = delete;
    ComPtr &operator=(const ComPtr &) = delete;
    ~ComPtr() { reset(); }

    // Another reference to the same object.
    ComPtr Share() const {
        if (p_) p_->AddRef();
        return ComPtr(p_);
    }
    void reset() {
        if (T *p = std::exchange(p_, nullptr)) p->Release();
    }
    T *detach() { return std::exchange(p_, nullptr); }

    T *get() const { return p_; }
    T *operator->() const { return p_; }
    // ND calls take interfaces as arguments (Accept(qp), CreateQueuePair(cq,
    // cq)), so, as ATL's CComPtr, the pointer converts where one is wanted.
    operator T *() const { return p_; }

    // For Create*(..., void **out) and the like: drops the current object
    // first, so a pointer reused for a new object does not leak the old one.
    T **put() {
        reset();
        return &p_;
    }
    void **put_void() { return reinterpret_cast<void **>(put()); }

private:
    T *p_ = nullptr;
};

}  // namespace opennd::client
