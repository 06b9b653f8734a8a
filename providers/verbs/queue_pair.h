// A queue pair on a verbs RC queue pair, on the kit's (every request's
// checks are the kit's; the Post* here are its hooks, called directly).
// Each work request takes a slot in a shadow ring, and its wr_id names the
// queue pair's generation, the ring and the slot: so a completion, failed
// or flushed ones included, gives back the request's type and context, and
// one of a destroyed queue pair (whose number verbs may reuse) is dropped.
// Rings are sized by the queue depths, so "full" is known without the
// device's errno (which differs between devices).
//
// The queue pair is created in INIT (ND allows Receive before connecting);
// the connector moves it to RTR and RTS from its rdma_cm id
// (rdma_init_qp_attr), and to ERR when the connection ends.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "completion_queue.h"
#include "device.h"
#include "memory.h"
#include "opennd/kit/adapter.h"
#include "opennd/kit/queue_pair.h"
#include "opennd/kit/spin_lock.h"
#include "shared_receive_queue.h"

namespace opennd::verbs {

// One request's part of a ring.
struct Slot {
    void *context;
    uint64_t request;    // the ND request's number in its ring
    ULONG bytes;
    uint8_t type;        // ND2_REQUEST_TYPE
    bool signaled;       // completes even when it succeeds
    bool last;           // the last work request of an ND request (one split into several ends here)
    HRESULT status;      // a Bind or Invalidate the provider already failed: its status (else 0)
    uint32_t lkey;       // the first SGE's key (what failed, if it fails)
    bool applied;        // an emulated Bind or Invalidate: it took effect when posted
};

class ShadowRing {
public:
    // `depth` ND requests of at most `parts` work requests each.
    ShadowRing(uint32_t depth, uint32_t parts);
    // Producer (under the queue pair's post lock).
    // Room for one ND request of `parts` work requests.
    bool Room(uint32_t parts) const {
        return requests_ - requests_done_.load(std::memory_order_acquire) < depth_ &&
               head_ + parts - tail_.load(std::memory_order_acquire) <= capacity_;
    }
    // The next work request of the ND request being posted.
    uint64_t Push(const Slot &s) {
        Slot &d = slots_[head_ & mask_];
        d = s;
        d.request = requests_;
        return head_++;
    }
    void EndRequest() { ++requests_; }
    // The device's queue holds fewer work requests than asked: so does the ring.
    void Limit(uint32_t capacity) { capacity_ = std::min(capacity_, capacity); }
    void Unpush(uint32_t n) { head_ -= n; }
    // Consumer (under the CQ's lock): the slot of sequence `seq`, and
    // everything up to it retired.
    Slot &At(uint64_t seq) { return slots_[seq & mask_]; }
    void RetireThrough(uint64_t seq) {
        const Slot &s = At(seq);
        requests_done_.store(s.last ? s.request + 1 : s.request, std::memory_order_release);
        tail_.store(seq + 1, std::memory_order_release);
    }
    uint64_t outstanding() const { return head_ - tail_.load(std::memory_order_acquire); }
    // The sequence before which everything has completed.
    uint64_t retired() const { return tail_.load(std::memory_order_acquire); }
    // The split request whose failure was reported (its other parts are swallowed).
    uint64_t failed_request = UINT64_MAX;
    // A failure of this ring's was reported: what follows is flushed behind it.
    bool failed = false;

private:
    std::vector<Slot> slots_;
    uint64_t mask_;
    uint32_t depth_;     // ND requests
    uint32_t capacity_;  // work requests
    uint64_t head_ = 0, requests_ = 0;
    std::atomic<uint64_t> tail_{0}, requests_done_{0};
};

// wr_id: generation (16 bits) | receive ring (1 bit) | sequence (47 bits).
inline constexpr int kSeqBits = 47;
inline constexpr uint64_t kSeqMask = (uint64_t(1) << kSeqBits) - 1;
inline constexpr uint64_t kReceiveBit = uint64_t(1) << kSeqBits;
// A queue pair's or an SRQ's generation (16 bits).
uint64_t NewGeneration();

class QueuePair : public kit::QueuePair<QueuePair>, public DeviceObject {
public:
    QueuePair(std::shared_ptr<Device> device, IND2Adapter *adapter, const kit::QueuePairArgs &a, CompletionQueue *rcq,
              CompletionQueue *icq, SharedReceiveQueue *srq);
    ~QueuePair() override;
    bool Valid() const { return qp_ != nullptr; }
    static QueuePair *Find(IUnknown *u);
    ibv_qp *qp() const { return qp_; }
    const Device *device() const { return device_.get(); }
    bool UsesSrq() const { return kit::QueuePair<QueuePair>::UsesSrq(); }

    // The connection: Connected once the queue pair is ready to send
    // (RTS); Fail moves it to ERR, and every request posted completes
    // ND_CANCELED (now and later).
    void Connected() {
        connected_once_.store(true, std::memory_order_release);
        state_.store(kConnected, std::memory_order_release);
    }
    void Fail();
    void FailLocked();  // Fail, under the caller's post lock
    // A connection takes the queue pair (a second one is ND_CONNECTION_ACTIVE).
    bool Claim() { return !claimed_.exchange(true); }
    void Unclaim() { claimed_.store(false); }
    // Which id answers COMM_EST (a first packet that beats the RTU).
    void SetCmId(rdma_cm_id *id) { cm_id_.store(id); }

    // A completion of this queue pair: fills `out` and returns true if it
    // is reported (under its CQ's lock; from the CQ's poll). `out` may be
    // written even when it is not. Inline: the success of a request of
    // this queue pair's own rings, the polling loop's case; anything else
    // is CompleteSlow's.
    bool Complete(const ibv_wc &wc, ND2_RESULT *out) {
        const bool receive = (wc.wr_id & kReceiveBit) != 0;
        if (__builtin_expect(wc.status != IBV_WC_SUCCESS || (wc.wr_id >> 48) != generation_ || (receive && srq_), 0))
            return CompleteSlow(wc, out);
        ShadowRing &ring = receive ? rq_ : sq_;
        const uint64_t seq = wc.wr_id & kSeqMask;
        const Slot &s = ring.At(seq);
        if (__builtin_expect(s.status != 0, 0)) return CompleteSlow(wc, out);  // a window operation refused
        const bool report = s.last && s.signaled;
        *out = {ND_SUCCESS, receive ? wc.byte_len : s.bytes, context_, s.context, static_cast<ND2_REQUEST_TYPE>(s.type)};
        ring.RetireThrough(seq);  // the slot is read: from here it may be reused
        return report;
    }

    HRESULT STDMETHODCALLTYPE Flush() override;
    bool TryHold() override { return kit::QueuePair<QueuePair>::TryHold(); }
    void Unhold() override { kit::QueuePair<QueuePair>::Unhold(); }

private:
    friend class kit::QueuePair<QueuePair>;
    enum : int { kIdle, kConnected, kFailed };
    bool MayPost() const { return connected_once_.load(std::memory_order_acquire); }
    HRESULT PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total);
    HRESULT PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge);
    HRESULT PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                     ULONG flags);
    HRESULT PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                      ULONG flags);
    Region *FindRegion(IUnknown *u) {
        Region *r = Region::Find(u);
        return r && r->device() == device_.get() ? r : nullptr;  // this adapter's only
    }
    Window *FindWindow(IUnknown *u) {
        Window *w = Window::Find(u);
        return w && w->device() == device_.get() ? w : nullptr;
    }
    HRESULT PostBind(void *ctx, Region *region, Window *window, const void *buffer, SIZE_T size, ULONG flags);
    HRESULT PostInvalidate(void *ctx, Window *window, ULONG flags);
    HRESULT PostFastRegister(void *ctx, Region *region, Window *window, const void *buffer, SIZE_T size,
                             UINT64 remote, ULONG flags);
    // A request with nothing to move (a window's Bind or Invalidate): a
    // zero-length RDMA Write, for a completion in order with the others.
    HRESULT PostMarker(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status);
    // A Read or Write as one work request.
    HRESULT PostOneSided(ibv_wr_opcode op, void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr,
                         UINT32 rtoken, ULONG flags);
    // After one work request went to the device (rc: its post's; `bad`:
    // the first work request it did not take), or did not.
    HRESULT Posted(int rc, const void *bad, ShadowRing &ring, CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type) {
        if (__builtin_expect(rc == 0, 1)) {
            ring.EndRequest();
            return ND_SUCCESS;
        }
        return PostFailed(rc, bad, ring, cq, ctx, type);
    }
    HRESULT PostFailed(int rc, const void *bad, ShadowRing &ring, CompletionQueue *cq, void *ctx,
                       ND2_REQUEST_TYPE type);
    // One work request to the send queue, and Posted.
    HRESULT SendWr(ibv_send_wr &wr, void *ctx, ND2_REQUEST_TYPE type) {
        ibv_send_wr *bad = nullptr;
        const int rc = ibv_post_send(qp_, &wr, &bad);
        return Posted(rc, bad, sq_, icq_.get(), ctx, type);
    }
    // An inline request's bytes gathered into one SGE (the device takes
    // fewer than it has), in the queue pair's own buffer (under send_mu_).
    ibv_sge *Gather(const ND2_SGE *sge, ULONG nsge, uint64_t total);
    // The send flag of a work request (under send_mu_). A silent request
    // still holds its slot of the device's send queue until a later
    // completion retires it, so a program that posts nothing but silent
    // requests (a ping-pong's Sends) would fill the queue: every
    // signal_every_-th is signaled anyway, and its completion, not the
    // application's, only retires the ring (Complete drops it).
    // Room for one more request on the send queue (under send_mu_): a full
    // ring first takes what its CQ holds, which a program that never polls
    // for its silent requests would otherwise leave there.
    bool SendRoom() {
        if (sq_.Room(1)) return true;
        icq_->Poll();
        return sq_.Room(1);
    }
    unsigned Signal(bool signaled) {
        if (!signaled && ++unsignaled_ < signal_every_) return 0;
        unsignaled_ = 0;
        return IBV_SEND_SIGNALED;
    }
    // The fence a work request needs to complete in post order (R063),
    // on a device whose Reads complete late (DeviceCaps): a request
    // behind a Read that may still be outstanding waits for it
    // (IBV_SEND_FENCE); Reads complete in order among themselves. `seq`:
    // its sequence in the send ring; under send_mu_.
    unsigned Order(bool read, uint64_t seq) {
        if (!reads_complete_late_) return 0;
        if (read) {
            read_end_ = seq + 1;
            return 0;
        }
        return sq_.retired() < read_end_ ? IBV_SEND_FENCE : 0;
    }
    // A request refused because the queue pair failed: it completes ND_CANCELED.
    HRESULT Cancelled(CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type);
    bool CompleteSlow(const ibv_wc &wc, ND2_RESULT *out);
    bool CompleteShared(const ibv_wc &wc, ND2_RESULT *out);
    // A failed request's first key no longer names a registration here.
    bool KeyGone(uint32_t lkey) const { return lkey && !device_->LiveKey(lkey); }
    void OnAsyncEvent(ibv_event_type type) override;
    void OnFinalRelease() override;

    std::shared_ptr<Device> device_;
    kit::ComPtr<IND2Adapter> adapter_;
    kit::ComPtr<CompletionQueue> rcq_, icq_;
    kit::ComPtr<SharedReceiveQueue> srq_;  // null: the queue pair's own receive queue
    std::atomic<uint64_t> srq_completions_{0};
    void *context_;
    ibv_qp *qp_ = nullptr;
    uint64_t generation_;
    std::atomic<int> state_{kIdle};
    std::atomic<bool> connected_once_{false};
    std::atomic<bool> claimed_{false};
    uint32_t max_send_sge_ = 1;
    // The work request PostSend and PostOneSided fill in (under send_mu_),
    // as perftest keeps one: no 128-byte clear per message. What they set
    // is all a Send, Read or Write reads; `next` stays null, and the
    // immediate and the other ops' fields stay zero (only the cold paths,
    // on a request of their own, set them).
    ibv_send_wr send_wr_{};
    uint32_t inline_size_ = 0;           // the queue pair's inlineDataSize
    std::unique_ptr<uint8_t[]> bounce_;  // Gather's (inline_size_ bytes), made on first use
    ibv_sge bounce_sge_{};
    uint32_t unsignaled_ = 0, signal_every_ = 1;  // Signal()
    bool reads_complete_late_ = false;            // Order()
    bool fenced_reads_ = true;                    // DeviceCaps::fenced_reads
    uint64_t read_end_ = 0;                       // the last Read's sequence + 1
    std::atomic<rdma_cm_id *> cm_id_{nullptr};
    kit::SpinLock send_mu_, recv_mu_;
    ShadowRing sq_, rq_;
};

}  // namespace opennd::verbs
