// A shared receive queue on a verbs SRQ, on the kit's (Modify's and
// Notify's rules are the kit's). Each receive takes a slot that its wr_id
// names (the SRQ's generation, the receive bit and the slot's index): a
// completion on any of the SRQ's queue pairs gives back its context, and
// frees the slot. Receives complete in any order across queue pairs, so
// slots are found free, not retired in order.
//
// The ND depth is enforced here (the device SRQ is at least as deep); the
// receives posted are those posted minus those completed. The threshold
// is the device's limit event (armed at each Notify, one-shot): the
// device knows a receive is taken when a message starts, long before its
// completion is polled. A Notify also drains the queue pairs' receive CQs
// and checks the count, and a receive completion checks it while a Notify
// waits, for a device that does not fire when armed below its fill level.
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "device.h"
#include "opennd/kit/adapter.h"
#include "opennd/kit/com.h"
#include "opennd/kit/shared_receive_queue.h"

namespace opennd::verbs {

class CompletionQueue;

struct SrqReceive {
    void *context = nullptr;
    uint32_t lkey = 0;  // the first SGE's key (what failed, if it fails)
};

class SharedReceiveQueue : public kit::SharedReceiveQueue, public DeviceObject {
public:
    SharedReceiveQueue(std::shared_ptr<Device> device, IND2Adapter *adapter, const kit::SharedReceiveQueueArgs &a);
    ~SharedReceiveQueue() override;
    bool Valid() const { return srq_ && kit::SharedReceiveQueue::Valid(); }
    static SharedReceiveQueue *Find(IUnknown *u);
    ibv_srq *srq() const { return srq_; }
    const Device *device() const { return device_.get(); }
    uint64_t generation() const { return generation_; }

    // The receive CQs of the queue pairs on this SRQ (a Notify drains them).
    void AttachCq(CompletionQueue *cq);
    void DetachCq(CompletionQueue *cq);
    // A completion of the receive in slot `index` (under a CQ's lock): its
    // context and key; the slot is free again.
    SrqReceive Complete(uint32_t index);

    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) override;
    bool TryHold() override { return kit::SharedReceiveQueue::TryHold(); }
    void Unhold() override { kit::SharedReceiveQueue::Unhold(); }

private:
    static constexpr uint32_t kChunk = 256;
    struct Slot {
        SrqReceive r;
        std::atomic<bool> busy{false};
    };
    using Chunk = std::array<Slot, kChunk>;

    size_t PostedLocked() const override {
        return posted_.load(std::memory_order_relaxed) - done_.load(std::memory_order_acquire);
    }
    HRESULT GrowLocked(ULONG depth) override;
    void OnArmed() override;
    void OnAsyncEvent(ibv_event_type type) override;
    Slot &At(uint32_t index) {
        return (*chunks_[index / kChunk].load(std::memory_order_acquire))[index % kChunk];
    }
    // A free slot for the next receive (under lock()): -1 if none can be had.
    int64_t FreeSlotLocked();
    void DrainCqs();
    HRESULT PostOne(VOID *ctx, const ND2_SGE sge[], ULONG nsge);

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    ibv_srq *srq_ = nullptr;
    uint32_t max_wr_ = 0;   // the device SRQ's (under lock())
    const ULONG max_sge_;
    const uint64_t max_transfer_;
    const uint64_t generation_;
    // Slots: chunks allocated as needed, freed with the SRQ.
    std::vector<std::atomic<Chunk *>> chunks_;
    uint32_t capacity_ = 0, cursor_ = 0;  // under lock()
    std::atomic<uint64_t> posted_{0}, done_{0};
    std::mutex cqs_mu_;
    std::vector<CompletionQueue *> cqs_;  // one entry per queue pair attached
};

}  // namespace opennd::verbs
