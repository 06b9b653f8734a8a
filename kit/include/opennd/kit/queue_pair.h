// IND2QueuePair's rules for every provider (SPI §7): each request's checks
// in the spec's order (post_checks.h, and Bind's and Invalidate's: flags,
// the region and window, the connection, R104, R105), then the provider's
// Post* for what is left. Receive on a queue pair with a shared receive
// queue is ND_INVALID_DEVICE_STATE (D33).
//
// The provider's queue pair is `Derived` (CRTP): the IND2QueuePair methods
// here are the vtable's entries and call Derived's Post* directly, so a
// request is one call from the application into the provider, with no
// extra virtual call and no lock of the kit's. Derived provides:
//   bool MayPost() const;  connected, or was (posting after a failure or a
//                          close is accepted and completes ND_CANCELED)
//   HRESULT PostSend(ctx, sge, nsge, flags, total);
//   HRESULT PostReceive(ctx, sge, nsge);
// and, for what its adapter supports (the defaults are ND_NOT_SUPPORTED):
//   HRESULT PostRead / PostWrite(ctx, sge, nsge, total, raddr, rtoken, flags);
//   Region *FindRegion(IUnknown *), Window *FindWindow(IUnknown *): the
//       adapter's own objects (another adapter's are invalid parameters);
//   HRESULT PostBind(ctx, Region *, Window *, buffer, size, flags);
//   HRESULT PostInvalidate(ctx, Window *, flags);
//   HRESULT PostFastRegister(ctx, Region *, Window *, buffer, size,
//       remote_address, flags): IOpenNdQueuePairExt's (opennd/nd_extensions.h),
//       which QueryInterface answers; the adapter says whether it has it.
//   HRESULT PostSendInvalidate(ctx, sge, nsge, flags, total, token):
//       IOpenNdQueuePairExt::SendInvalidate, after Send's checks.
// Each Post* returns ND_SUCCESS (the request completes later, exactly once)
// or ND_NO_MORE_ENTRIES (the queue is full; nothing was queued).
#pragma once

#include "opennd/kit/adapter.h"
#include "opennd/kit/com.h"
#include "opennd/kit/extensions.h"
#include "opennd/kit/memory_region.h"
#include "opennd/kit/post_checks.h"

namespace opennd::kit {

template <class Derived>
class QueuePair : public Unknown<IND2QueuePair> {
public:
    // `max_inline_sge`, `max_transfer`, `max_read_sge`: the adapter's.
    QueuePair(const QueuePairArgs &a, ULONG max_inline_sge, uint64_t max_transfer, ULONG max_read_sge = ~0u)
        : limits_{a.initiator_sge, a.receive_sge, a.inline_size, max_inline_sge, max_transfer, max_read_sge},
          uses_srq_(a.srq != nullptr) {}

    HRESULT STDMETHODCALLTYPE Send(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags) final {
        uint64_t total = 0;
        const HRESULT hr = CheckSend(limits_, sge, nsge, flags, self().MayPost(), &total);
        if (FAILED(hr)) return hr;
        return self().PostSend(ctx, sge, nsge, flags, total);
    }
    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) final {
        if (uses_srq_) return ND_INVALID_DEVICE_STATE;  // its receives come from the SRQ (D33)
        const HRESULT hr = CheckReceive(limits_.receive_sge, limits_.max_transfer, sge, nsge);
        if (FAILED(hr)) return hr;
        return self().PostReceive(ctx, sge, nsge);
    }
    HRESULT STDMETHODCALLTYPE Read(VOID *ctx, const ND2_SGE sge[], ULONG nsge, UINT64 raddr, UINT32 rtoken,
                                   ULONG flags) final {
        uint64_t total = 0;
        const HRESULT hr = CheckOneSided(limits_, false, sge, nsge, flags, self().MayPost(), &total);
        if (FAILED(hr)) return hr;
        return self().PostRead(ctx, sge, nsge, total, raddr, rtoken, flags);
    }
    HRESULT STDMETHODCALLTYPE Write(VOID *ctx, const ND2_SGE sge[], ULONG nsge, UINT64 raddr, UINT32 rtoken,
                                    ULONG flags) final {
        uint64_t total = 0;
        const HRESULT hr = CheckOneSided(limits_, true, sge, nsge, flags, self().MayPost(), &total);
        if (FAILED(hr)) return hr;
        return self().PostWrite(ctx, sge, nsge, total, raddr, rtoken, flags);
    }
    HRESULT STDMETHODCALLTYPE Bind(VOID *ctx, IUnknown *mr, IUnknown *mw, const VOID *buffer, SIZE_T size,
                                   ULONG flags) final {
        if (flags & ~kBindFlags) return ND_INVALID_PARAMETER_6;
        return BindChecked(mr, mw, buffer, size, flags, [&](auto *region, auto *window) {
            return self().PostBind(ctx, region, window, buffer, size, flags);
        });
    }
    // IOpenNdQueuePairExt::FastRegister: Bind's rules (its flags are the 7th).
    HRESULT FastRegister(VOID *ctx, IUnknown *mr, IUnknown *mw, const VOID *buffer, SIZE_T size, UINT64 remote,
                         ULONG flags) {
        if (flags & ~kBindFlags) return ND_INVALID_PARAMETER_7;
        if (size > ~UINT64(0) - remote) return ND_INVALID_PARAMETER_6;  // past the end of the address space
        return BindChecked(mr, mw, buffer, size, flags, [&](auto *region, auto *window) {
            return self().PostFastRegister(ctx, region, window, buffer, size, remote, flags);
        });
    }
    // IOpenNdQueuePairExt::SendInvalidate: Send's rules.
    HRESULT SendInvalidate(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags, UINT32 token) {
        uint64_t total = 0;
        const HRESULT hr = CheckSend(limits_, sge, nsge, flags, self().MayPost(), &total);
        if (FAILED(hr)) return hr;
        return self().PostSendInvalidate(ctx, sge, nsge, flags, total, token);
    }
    HRESULT STDMETHODCALLTYPE Invalidate(VOID *ctx, IUnknown *mw, ULONG flags) final {
        if (flags & ~kInvalidateFlags) return ND_INVALID_PARAMETER_3;
        auto *window = self().FindWindow(mw);
        if (!window) return ND_INVALID_PARAMETER_2;
        if (!self().MayPost()) return ND_CONNECTION_INVALID;
        return self().PostInvalidate(ctx, window, flags);
    }

    // IUnknown: also answers IID_IOpenNdQueuePairExt (a tear-off).
    HRESULT STDMETHODCALLTYPE QueryInterface(REFIID iid, void **ppv) override {
        if (ppv && iid == IID_IOpenNdQueuePairExt) return QueuePairExt<QueuePair>::Make(this, ppv);
        return Unknown<IND2QueuePair>::QueryInterface(iid, ppv);
    }

protected:
    const PostLimits &limits() const { return limits_; }
    bool UsesSrq() const { return uses_srq_; }

    // What a provider without one-sided operations or windows leaves out.
    HRESULT PostRead(void *, const ND2_SGE *, ULONG, uint64_t, UINT64, UINT32, ULONG) { return ND_NOT_SUPPORTED; }
    HRESULT PostWrite(void *, const ND2_SGE *, ULONG, uint64_t, UINT64, UINT32, ULONG) { return ND_NOT_SUPPORTED; }
    MemoryRegion *FindRegion(IUnknown *) { return nullptr; }
    IUnknown *FindWindow(IUnknown *) { return nullptr; }
    HRESULT PostBind(void *, MemoryRegion *, IUnknown *, const void *, SIZE_T, ULONG) { return ND_NOT_SUPPORTED; }
    HRESULT PostInvalidate(void *, IUnknown *, ULONG) { return ND_NOT_SUPPORTED; }
    HRESULT PostFastRegister(void *, MemoryRegion *, IUnknown *, const void *, SIZE_T, UINT64, ULONG) {
        return ND_NOT_SUPPORTED;
    }
    HRESULT PostSendInvalidate(void *, const ND2_SGE *, ULONG, ULONG, uint64_t, UINT32) { return ND_NOT_SUPPORTED; }

private:
    Derived &self() { return static_cast<Derived &>(*this); }
    // The region, window and connection checks of Bind (R104, R105).
    template <class Post>
    HRESULT BindChecked(IUnknown *mr, IUnknown *mw, const VOID *buffer, SIZE_T size, ULONG flags,
                        Post &&post) {
        auto *region = self().FindRegion(mr);
        if (!region) return ND_INVALID_PARAMETER_2;
        auto *window = self().FindWindow(mw);
        if (!window) return ND_INVALID_PARAMETER_3;
        if (!self().MayPost()) return ND_CONNECTION_INVALID;
        Registration r;
        if (!static_cast<MemoryRegion *>(region)->Current(&r)) return ND_ACCESS_VIOLATION;
        if (!r.Covers(reinterpret_cast<uint64_t>(buffer), size)) return ND_ACCESS_VIOLATION;  // R104
        if ((flags & ND_OP_FLAG_ALLOW_WRITE) && !r.LocalWrite()) return ND_ACCESS_VIOLATION;  // R105
        return post(region, window);
    }
    const PostLimits limits_;
    const bool uses_srq_;
};

}  // namespace opennd::kit
