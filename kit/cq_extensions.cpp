// The interfaces a kit CQ answers besides IND2CompletionQueue, each a
// tear-off (an object of its own that holds the CQ): IOpenNdCqModeration
// (opennd/cq_moderation.h) and IOpenNdCompletionQueueExt
// (opennd/nd_extensions.h).
#include <new>

#include "opennd/kit/completion_queue.h"

namespace opennd::kit {

OPENND_KIT_IIDS(IOpenNdCqModeration, &IID_IOpenNdCqModeration);
OPENND_KIT_IIDS(IOpenNdCompletionQueueExt, &IID_IOpenNdCompletionQueueExt);

namespace {

template <class I>
class CqTearOff : public Unknown<I> {
public:
    explicit CqTearOff(CompletionQueue *cq) : cq_(cq) { cq_->AddRef(); }

protected:
    ~CqTearOff() override { cq_->Release(); }
    CompletionQueue *const cq_;
};

class CqModeration final : public CqTearOff<IOpenNdCqModeration> {
public:
    using CqTearOff::CqTearOff;
    HRESULT STDMETHODCALLTYPE Moderate(ULONG interval_us, ULONG count) override {
        return cq_->Moderate(interval_us, count);
    }
};

class CqExt final : public CqTearOff<IOpenNdCompletionQueueExt> {
public:
    using CqTearOff::CqTearOff;
    ULONG STDMETHODCALLTYPE GetResultsEx(OPENND_RESULT_EX results[], ULONG n) override {
        return cq_->GetResultsEx(results, n);
    }
};

template <class T, class I>
HRESULT Make(CompletionQueue *cq, void **ppv) {
    auto *t = new (std::nothrow) T(cq);
    *ppv = static_cast<I *>(t);
    return t ? S_OK : E_OUTOFMEMORY;
}

}  // namespace

HRESULT CompletionQueue::QueryInterface(REFIID iid, void **ppv) {
    if (ppv && iid == IID_IOpenNdCqModeration) return Make<CqModeration, IOpenNdCqModeration>(this, ppv);
    if (ppv && iid == IID_IOpenNdCompletionQueueExt) return Make<CqExt, IOpenNdCompletionQueueExt>(this, ppv);
    return Unknown::QueryInterface(iid, ppv);
}

ULONG CompletionQueue::GetResultsEx(OPENND_RESULT_EX results[], ULONG n) { return TakeInto(results, n); }

}  // namespace opennd::kit
