// Making a queue pair from the adapter's checked arguments.
#include "objects.h"
#include "queue_pair.h"

namespace opennd::verbs {

HRESULT MakeQueuePair(std::shared_ptr<Device> device, IND2Adapter *adapter, const kit::QueuePairArgs &a, REFIID iid,
                      void **pp) {
    CompletionQueue *rcq = CompletionQueue::Find(a.receive_cq), *icq = CompletionQueue::Find(a.initiator_cq);
    if (!rcq || !icq) return ND_INVALID_PARAMETER;
    SharedReceiveQueue *srq = a.srq ? SharedReceiveQueue::Find(a.srq) : nullptr;
    if (a.srq && !srq) return ND_INVALID_PARAMETER_4;
    // Windows providers round a queue pair's SGEs up (mlx4 does), and ND
    // applications post more than they asked for: take the adapter's.
    kit::QueuePairArgs rounded = a;
    rounded.initiator_sge = device->info().MaxInitiatorSge;
    if (!a.srq) rounded.receive_sge = device->info().MaxReceiveSge;
    auto *qp = new QueuePair(std::move(device), adapter, rounded, rcq, icq, srq);
    if (!qp->Valid()) {
        qp->Release();
        return ND_INSUFFICIENT_RESOURCES;
    }
    return kit::Hand(qp, iid, pp);
}

}  // namespace opennd::verbs
