// The OpenND extensions (opennd/nd_extensions.h) for any provider, as
// tear-offs: an adapter answers QueryInterface(IID_IOpenNdAdapterExt) with
// AdapterExt::Make(bits); the kit's queue pair answers
// IID_IOpenNdQueuePairExt itself (queue_pair.h) with a QueuePairExt, its
// connector and CQ theirs likewise (connector.cpp, cq_extensions.cpp).
#pragma once

#include <new>

#include "opennd/kit/com.h"
#include "opennd/nd_extensions.h"

namespace opennd::kit {

OPENND_KIT_IIDS(IOpenNdAdapterExt, &IID_IOpenNdAdapterExt);
OPENND_KIT_IIDS(IOpenNdQueuePairExt, &IID_IOpenNdQueuePairExt);
OPENND_KIT_IIDS(IOpenNdConnectorExt, &IID_IOpenNdConnectorExt);

class AdapterExt final : public Unknown<IOpenNdAdapterExt> {
public:
    // For an adapter's QueryInterface: S_OK with *ppv the interface.
    static HRESULT Make(ULONG bits, void **ppv) {
        auto *ext = new (std::nothrow) AdapterExt(bits);
        *ppv = static_cast<IOpenNdAdapterExt *>(ext);
        return ext ? S_OK : E_OUTOFMEMORY;
    }
    ULONG STDMETHODCALLTYPE Extensions() override { return bits_; }

private:
    explicit AdapterExt(ULONG bits) : bits_(bits) {}
    const ULONG bits_;
};

// Interface I answered by an object of its own that holds `Owner` for as
// long as it is referenced (a tear-off). T derives from TearOff<I, Owner>.
template <class I, class Owner>
class TearOff : public Unknown<I> {
public:
    // For the owner's QueryInterface: S_OK with *ppv a new T, or E_OUTOFMEMORY.
    template <class T>
    static HRESULT Make(Owner *owner, void **ppv) {
        auto *t = new (std::nothrow) T(owner);
        *ppv = static_cast<I *>(t);
        return t ? S_OK : E_OUTOFMEMORY;
    }

protected:
    explicit TearOff(Owner *owner) : owner_(owner) { owner_->AddRef(); }
    ~TearOff() override { owner_->Release(); }
    Owner *const owner_;
};

// Holds the queue pair `Qp` (which has FastRegister and SendInvalidate with
// the interface's signatures).
template <class Qp>
class QueuePairExt final : public TearOff<IOpenNdQueuePairExt, Qp> {
public:
    explicit QueuePairExt(Qp *qp) : TearOff<IOpenNdQueuePairExt, Qp>(qp) {}
    static HRESULT Make(Qp *qp, void **ppv) {
        return TearOff<IOpenNdQueuePairExt, Qp>::template Make<QueuePairExt>(qp, ppv);
    }
    HRESULT STDMETHODCALLTYPE FastRegister(VOID *ctx, IUnknown *mr, IUnknown *mw, const VOID *buffer, SIZE_T size,
                                           UINT64 remote_address, ULONG flags) override {
        return this->owner_->FastRegister(ctx, mr, mw, buffer, size, remote_address, flags);
    }
    HRESULT STDMETHODCALLTYPE SendInvalidate(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags,
                                             UINT32 token) override {
        return this->owner_->SendInvalidate(ctx, sge, nsge, flags, token);
    }
};

}  // namespace opennd::kit
