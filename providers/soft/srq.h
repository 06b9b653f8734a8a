// Shared receive queue: receives pooled across the queue pairs created with
// it. A queue pair takes the oldest receive when a Send arrives; Notify
// completes when the number of posted receives drops below the threshold.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine.h"
#include "opennd/kit/com.h"
#include "opennd/kit/overlapped.h"
#include "queue_pair.h"

namespace soft {

class SharedReceiveQueue : public opennd::kit::Unknown<IND2SharedReceiveQueue> {
public:
    SharedReceiveQueue(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file, ULONG depth, ULONG max_sge,
                       ULONG threshold, KAFFINITY affinity);
    ~SharedReceiveQueue() override;
    bool Valid() const { return requests_.Valid(); }
    static SharedReceiveQueue *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    bool Take(PostedReceive *r);
    bool Armed();
    void AddQp(QueuePair *qp);
    void RemoveQp(QueuePair *qp);

    HRESULT STDMETHODCALLTYPE CancelOverlappedRequests() override;
    HRESULT STDMETHODCALLTYPE GetOverlappedResult(OVERLAPPED *ov, BOOL wait) override {
        return requests_.Result(ov, wait);
    }
    HRESULT STDMETHODCALLTYPE GetNotifyAffinity(USHORT *group, KAFFINITY *affinity) override;
    HRESULT STDMETHODCALLTYPE Modify(ULONG depth, ULONG threshold) override;
    HRESULT STDMETHODCALLTYPE Notify(OVERLAPPED *ov) override;
    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) override;

private:
    void CheckThresholdLocked();

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    opennd::kit::OverlappedRequests requests_;
    const ULONG max_sge_;
    const KAFFINITY affinity_;
    std::mutex mu_;  // leaf: taken under a QP's receive lock
    ULONG depth_, threshold_;
    std::deque<PostedReceive> receives_;
    std::vector<OVERLAPPED *> armed_;
    std::mutex qps_mu_;
    std::vector<QueuePair *> qps_;
};

}  // namespace soft
