// The device-backed completion queue (completion_queue.h).
#include "completion_queue.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "opennd/kit/registry.h"
#include "opennd/log.h"
#include "queue_pair.h"

namespace opennd::verbs {
namespace {

// The device CQ's size for an ND depth. What it holds moves into the kit's
// ring, which enforces ND's depth (overrun), so it only needs room: for
// the ND entries, and for the completions a queue pair signals on its own
// and never reports (a run of silent requests, QueuePair::Signal), a few
// per queue pair, however many share the CQ.
int DeviceDepth(ULONG depth, int max_cqe) {
    return static_cast<int>(std::min<uint64_t>(uint64_t(depth) * 2 + 16, static_cast<uint64_t>(max_cqe)));
}

}  // namespace

CompletionQueue::CompletionQueue(std::shared_ptr<Device> device, HANDLE file, ULONG depth, KAFFINITY affinity)
    : kit::CompletionQueue(file, depth, device->info().MaxCompletionQueueDepth, affinity), device_(std::move(device)) {
    cq_ = ibv_create_cq(device_->context(), DeviceDepth(depth, device_->info().MaxCompletionQueueDepth), this,
                        device_->comp_channel(), 0);
    if (!cq_) {
        OPENND_LOG(Warn, "ndverbs: the device makes no CQ of %d entries: %s",
                   DeviceDepth(depth, device_->info().MaxCompletionQueueDepth), strerror(errno));
        return;
    }
    device_->AddObject(cq_, this);
    AddPoller(this);
}

CompletionQueue::~CompletionQueue() {
    if (!cq_) return;
    RemovePoller(this);
    device_->RemoveObject(cq_);
    ibv_destroy_cq(cq_);
}

CompletionQueue *CompletionQueue::Find(IUnknown *u) {
    return static_cast<CompletionQueue *>(kit::CompletionQueue::FromUnknown(u));
}

void CompletionQueue::Attach(uint32_t qp_num, QueuePair *qp) {
    std::lock_guard<kit::SpinLock> lock(mu_);
    qps_.emplace_back(qp_num, qp);
}

void CompletionQueue::Detach(uint32_t qp_num) {
    std::lock_guard<kit::SpinLock> lock(mu_);
    std::erase_if(qps_, [qp_num](const auto &e) { return e.first == qp_num; });
    if (last_num_ == qp_num) last_ = nullptr;
}

QueuePair *CompletionQueue::FindLocked(uint32_t qp_num) {
    if (last_ && last_num_ == qp_num) return last_;
    for (const auto &e : qps_)
        if (e.first == qp_num) {
            last_num_ = qp_num;
            last_ = e.second;
            return last_;
        }
    return nullptr;  // a queue pair destroyed with completions still queued
}

void CompletionQueue::PushSoftware(const ND2_RESULT &r) {
    Drain(false);  // the device's earlier completions first
    Push(r);
}

template <class Take>
ULONG CompletionQueue::PollLocked(ULONG room, Take &&take) {
    ibv_wc wc[16];
    ULONG got = 0;
    for (;;) {
        const int want = static_cast<int>(std::min<ULONG>(room - got, 16));
        const int k = ibv_poll_cq(cq_, want, wc);
        for (int i = 0; i < k; ++i) {
            QueuePair *qp = FindLocked(wc[i].qp_num);  // null: a queue pair destroyed with completions queued
            if (qp && take(qp, wc[i])) ++got;
        }
        if (k < want || got == room) return got;
    }
}

// The kit's GetResults (entries queued, or a Notify armed) polls the
// device through this.
void CompletionQueue::PollForCq() { Drain(false); }

// The polling loop's call: nothing queued in the kit's ring and nothing
// armed, so the device's completions become the caller's results here,
// in the order the device gives them. Quiet() again under mu_: a Drain
// on the progress thread may have queued older entries meanwhile, and
// those go first (the kit's path).
ULONG CompletionQueue::GetResults(ND2_RESULT results[], ULONG n) {
    if (n != 0 && Quiet()) {
        std::lock_guard<kit::SpinLock> lock(mu_);
        if (Quiet()) {
            ULONG got = 0;
            return PollLocked(n, [&](QueuePair *qp, const ibv_wc &wc) {
                if (!qp->Complete(wc, &results[got])) return false;
                ++got;
                return true;
            });
        }
    }
    return kit::CompletionQueue::GetResults(results, n);
}

void CompletionQueue::Drain(bool solicited) {
    std::lock_guard<kit::SpinLock> lock(mu_);
    PollLocked(UINT32_MAX, [&](QueuePair *qp, const ibv_wc &wc) {
        ND2_RESULT r;
        if (!qp->Complete(wc, &r)) return false;
        Push(r, solicited && r.RequestType == Nd2RequestTypeReceive);
        return true;
    });
}

// A Notify found nothing queued: arm the device, then look once more, for
// what arrived before the arm took effect. A solicited-only arm does not
// fire for errors on every device (rxe): ANY and ERRORS arm for every
// completion, and the kit picks.
void CompletionQueue::OnArmed() {
    {
        std::lock_guard<std::mutex> lock(arm_mu_);
        const Arming arming = ArmedFor();
        if (arming == Arming::kNone) return;  // fired or canceled meanwhile
        const bool solicited_only = arming == Arming::kSolicited;
        armed_solicited_.store(solicited_only);
        ibv_req_notify_cq(cq_, solicited_only ? 1 : 0);
    }
    Drain(false);
}

// The device's event: what it holds now triggered it, so it moves into
// the kit's ring (which fires the armed Notify requests); then re-arm if
// a Notify is still waiting (ERRORS, while only successes came).
void CompletionQueue::OnCompletionEvent() {
    Drain(armed_solicited_.load());
    OnArmed();
}

void CompletionQueue::OnAsyncEvent(ibv_event_type type) {
    if (type != IBV_EVENT_CQ_ERR) return;
    Overrun();  // the device CQ overran and is unusable: the ND way (every Notify ND_BUFFER_OVERFLOW)
}

HRESULT CompletionQueue::Resize(ULONG depth) {
    if (!device_->caps().resize_cq) return ND_NOT_SUPPORTED;
    if (depth == 0 || depth > device_->info().MaxCompletionQueueDepth) return ND_INVALID_PARAMETER;
    Drain(false);  // what the device holds counts against the new depth
    HRESULT hr = kit::CompletionQueue::Resize(depth);
    if (FAILED(hr)) return hr;
    std::lock_guard<kit::SpinLock> lock(mu_);
    return ibv_resize_cq(cq_, DeviceDepth(depth, device_->info().MaxCompletionQueueDepth)) == 0
               ? ND_SUCCESS
               : ND_INSUFFICIENT_RESOURCES;
}

}  // namespace opennd::verbs
