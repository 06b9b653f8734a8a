// The OpenND extensions (opennd/nd_extensions.h) for any provider, as
// tear-offs: an adapter answers QueryInterface(IID_IOpenNdAdapterExt) with
// AdapterExt::Make(bits); the kit's queue pair answers
// IID_IOpenNdQueuePairExt itself (queue_pair.h) with a QueuePairExt.
#pragma once

#include <new>

#include "opennd/kit/com.h"
#include "opennd/nd_extensions.h"

namespace opennd::kit {

OPENND_KIT_IIDS(IOpenNdAdapterExt, &IID_IOpenNdAdapterExt);
OPENND_KIT_IIDS(IOpenNdQueuePairExt, &IID_IOpenNdQueuePairExt);

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

// Holds the queue pair `Qp` (which has FastRegister and SendInvalidate with
// the interface's signatures) for as long as the interface is referenced.
template <class Qp>
class QueuePairExt final : public Unknown<IOpenNdQueuePairExt> {
public:
    static HRESULT Make(Qp *qp, void **ppv) {
        auto *ext = new (std::nothrow) QueuePairExt(qp);
        *ppv = static_cast<IOpenNdQueuePairExt *>(ext);
        return ext ? S_OK : E_OUTOFMEMORY;
    }
    HRESULT STDMETHODCALLTYPE FastRegister(VOID *ctx, IUnknown *mr, IUnknown *mw, const VOID *buffer, SIZE_T size,
                                           UINT64 remote_address, ULONG flags) override {
        return qp_->FastRegister(ctx, mr, mw, buffer, size, remote_address, flags);
    }
    HRESULT STDMETHODCALLTYPE SendInvalidate(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags,
                                             UINT32 token) override {
        return qp_->SendInvalidate(ctx, sge, nsge, flags, token);
    }

private:
    explicit QueuePairExt(Qp *qp) : qp_(qp) { qp_->AddRef(); }
    ~QueuePairExt() override { qp_->Release(); }
    Qp *const qp_;
};

}  // namespace opennd::kit
