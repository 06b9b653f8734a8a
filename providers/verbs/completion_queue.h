// A completion queue on a device CQ. The ND rules (Notify's types and
// triggers, overrun, GetResults' counts) are the kit's CompletionQueue;
// this class only feeds it: GetResults polls the device CQ in user space
// (no system call) and turns each work completion into its ND result
// through the queue pair's shadow ring (a failed or flushed completion has
// no valid opcode in verbs). While the kit's ring is empty and no Notify
// is armed (the polling loop's case), the results go straight into the
// caller's array, with no pass through the kit's ring. A Notify that finds nothing
// arms the device's completion channel and polls once more, so nothing
// that arrived before the arm is missed; the channel's event drains the
// device CQ into the kit's ring, which fires the Notify.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <mutex>
#include <vector>

#include "device.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/spin_lock.h"

namespace opennd::verbs {

class QueuePair;

class CompletionQueue : public kit::CompletionQueue, public kit::CqPoller, public DeviceObject {
public:
    CompletionQueue(std::shared_ptr<Device> device, HANDLE file, ULONG depth, KAFFINITY affinity);
    ~CompletionQueue() override;
    bool Valid() const { return cq_ && kit::CompletionQueue::Valid(); }
    static CompletionQueue *Find(IUnknown *u);
    ibv_cq *cq() const { return cq_; }
    const Device *device() const { return device_.get(); }

    // Queue pairs whose completions this CQ reports (both of a queue
    // pair's CQs know it); Detach waits for a poll using it to end.
    void Attach(uint32_t qp_num, QueuePair *qp);
    void Detach(uint32_t qp_num);
    // A completion made by the provider, not the device (a request refused
    // by a queue pair in error): queued behind what the device reported.
    void PushSoftware(const ND2_RESULT &r);
    // Moves what the device holds into the ring (a queue pair waiting for
    // its flushed requests as it goes).
    void Poll() { Drain(false); }

    HRESULT STDMETHODCALLTYPE Resize(ULONG depth) override;
    ULONG STDMETHODCALLTYPE GetResults(ND2_RESULT results[], ULONG n) override;

    // Unknown's holds, for the device's progress thread.
    bool TryHold() override { return kit::CompletionQueue::TryHold(); }
    void Unhold() override { kit::CompletionQueue::Unhold(); }

private:
    void PollForCq() override;
    void OnArmed() override;
    void OnCompletionEvent() override;
    void OnAsyncEvent(ibv_event_type type) override;
    // Polls the device and pushes what it finds; `solicited`: the event of
    // a solicited-only arm, so a receive drained now was solicited.
    void Drain(bool solicited);
    // Polls the device (under mu_) until `room` completions are reported or
    // it has no more; `take(qp, wc)` turns one into its result and says
    // whether it is reported. Returns how many were.
    template <class Take>
    ULONG PollLocked(ULONG room, Take &&take);
    QueuePair *FindLocked(uint32_t qp_num);

    std::shared_ptr<Device> device_;
    ibv_cq *cq_ = nullptr;
    kit::SpinLock mu_;  // the device CQ, qps_ and the shadow rings' consumer side
    std::vector<std::pair<uint32_t, QueuePair *>> qps_;
    uint32_t last_num_ = 0;
    QueuePair *last_ = nullptr;
    // Serializes arming the device: the application's Notify and the
    // progress thread's re-arm each read what is armed and arm the device
    // for it, so the last arm is always for the requests outstanding (siw
    // lets a solicited-only arm replace an arm for every completion).
    std::mutex arm_mu_;
    std::atomic<bool> armed_solicited_{false};  // the device is armed for solicited completions only
};

}  // namespace opennd::verbs
