// The interfaces a kit CQ answers besides IND2CompletionQueue, each a
// tear-off (an object of its own that holds the CQ): IOpenNdCqModeration
// (opennd/cq_moderation.h) and IOpenNdCompletionQueueExt
// (opennd/nd_extensions.h).
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/extensions.h"

namespace opennd::kit {

OPENND_KIT_IIDS(IOpenNdCqModeration, &IID_IOpenNdCqModeration);
OPENND_KIT_IIDS(IOpenNdCompletionQueueExt, &IID_IOpenNdCompletionQueueExt);

namespace {

class CqModeration final : public TearOff<IOpenNdCqModeration, CompletionQueue> {
public:
    using TearOff::TearOff;
    HRESULT STDMETHODCALLTYPE Moderate(ULONG interval_us, ULONG count) override {
        return owner_->Moderate(interval_us, count);
    }
};

class CqExt final : public TearOff<IOpenNdCompletionQueueExt, CompletionQueue> {
public:
    using TearOff::TearOff;
    ULONG STDMETHODCALLTYPE GetResultsEx(OPENND_RESULT_EX results[], ULONG n) override {
        return owner_->GetResultsEx(results, n);
    }
};

}  // namespace

HRESULT CompletionQueue::QueryInterface(REFIID iid, void **ppv) {
    if (ppv && iid == IID_IOpenNdCqModeration) return CqModeration::Make<CqModeration>(this, ppv);
    if (ppv && iid == IID_IOpenNdCompletionQueueExt) return CqExt::Make<CqExt>(this, ppv);
    return Unknown::QueryInterface(iid, ppv);
}

ULONG CompletionQueue::GetResultsEx(OPENND_RESULT_EX results[], ULONG n) { return TakeInto(results, n); }

}  // namespace opennd::kit
