// Shared receive queue: receives pooled across the queue pairs created with
// it. A queue pair takes the oldest receive when a Send arrives; Notify
// completes when the number of posted receives drops below the threshold.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "progress_engine.h"
#include "opennd/kit/com.h"
#include "opennd/kit/shared_receive_queue.h"
#include "queue_pair.h"

namespace soft {

// The kit's SRQ (Modify, threshold Notify, affinity) over a queue of
// posted receives.
class SharedReceiveQueue : public opennd::kit::SharedReceiveQueue {
public:
    SharedReceiveQueue(IND2Adapter *adapter, std::shared_ptr<Engine> engine, HANDLE file, ULONG depth, ULONG max_sge,
                       ULONG threshold, KAFFINITY affinity);
    ~SharedReceiveQueue() override;
    static SharedReceiveQueue *Find(IUnknown *u);
    const Engine *engine() const { return engine_.get(); }

    bool Take(PostedReceive *r);
    void AddQp(QueuePair *qp);
    void RemoveQp(QueuePair *qp);

    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) override;

private:
    size_t PostedLocked() const override { return receives_.size(); }

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    std::shared_ptr<Engine> engine_;
    const ULONG max_sge_;
    // Under lock() (a leaf: taken under a QP's receive lock).
    std::deque<PostedReceive> receives_;
    std::mutex qps_mu_;
    std::vector<QueuePair *> qps_;
};

}  // namespace soft
