#include "queue_pair.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "loopback.h"
#include "opennd/kit/registry.h"

namespace loopback {
namespace kit = opennd::kit;
namespace {
using QpRegistry = kit::Registry<QueuePair, IND2QueuePair>;
}

QueuePair::QueuePair(IND2Adapter *adapter, const kit::QueuePairArgs &a)
    : kit::QueuePair<QueuePair>(a, kMaxSge, kMaxTransferLength), adapter_(adapter, true),
      rcq_(kit::CompletionQueue::FromUnknown(a.receive_cq), true),
      icq_(kit::CompletionQueue::FromUnknown(a.initiator_cq), true), context_(a.context), rdepth_(a.receive_depth) {
    QpRegistry::Add(this);
}

QueuePair::~QueuePair() { QpRegistry::Remove(this); }

QueuePair *QueuePair::Find(IUnknown *u) { return QpRegistry::Find(u, IID_IND2QueuePair); }

void QueuePair::Link(QueuePair *peer) {
    QueuePair *old = nullptr;
    {
        std::lock_guard<std::mutex> lock(link_mu_);
        old = peer_;
        peer_ = peer && peer->TryHold() ? peer : nullptr;
    }
    if (old) old->Unhold();
}

QueuePair *QueuePair::TakePeer() {
    std::lock_guard<std::mutex> lock(link_mu_);
    return std::exchange(peer_, nullptr);
}

void QueuePair::Close() {
    if (QueuePair *old = TakePeer()) old->Unhold();
    Flush();
}

// Released while linked: the peer's hold on us ends when it unlinks.
void QueuePair::OnFinalRelease() { Close(); }

HRESULT QueuePair::Flush() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Recv &r : receives_) Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_CANCELED, 0, false);
    receives_.clear();
    return ND_SUCCESS;
}

void QueuePair::Complete(kit::CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type, HRESULT status, ULONG bytes,
                         bool solicited) {
    ND2_RESULT r{status, bytes, context_, ctx, type};
    cq->Push(r, solicited);
}

HRESULT QueuePair::Deliver(const ND2_SGE *sge, ULONG nsge, uint64_t length, bool solicited) {
    std::lock_guard<std::mutex> lock(mu_);
    if (receives_.empty()) return ND_IO_TIMEOUT;  // nobody to receive it
    Recv r = std::move(receives_.front());
    receives_.pop_front();
    if (length > kit::SgeBytes(r.sge.data(), static_cast<ULONG>(r.sge.size()))) {
        Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_BUFFER_OVERFLOW, 0, false);
        return ND_REMOTE_ERROR;
    }
    size_t di = 0, doff = 0;
    for (ULONG i = 0; i < nsge; ++i) {
        const char *src = static_cast<const char *>(sge[i].Buffer);
        size_t left = sge[i].BufferLength;
        while (left) {
            size_t n = std::min(left, r.sge[di].BufferLength - doff);
            std::memcpy(static_cast<char *>(r.sge[di].Buffer) + doff, src, n);
            src += n, left -= n, doff += n;
            if (doff == r.sge[di].BufferLength) ++di, doff = 0;
        }
    }
    Complete(rcq_.get(), r.context, Nd2RequestTypeReceive, ND_SUCCESS, static_cast<ULONG>(length), solicited);
    return ND_SUCCESS;
}

HRESULT QueuePair::PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t length) {
    QueuePair *target = this;
    {
        std::lock_guard<std::mutex> lock(link_mu_);
        if (peer_ && peer_->TryHold()) target = peer_;
    }
    const HRESULT status = target->Deliver(sge, nsge, length, (flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0);
    if (target != this) target->Unhold();
    if (status != ND_SUCCESS || !(flags & ND_OP_FLAG_SILENT_SUCCESS))
        Complete(icq_.get(), ctx, Nd2RequestTypeSend, status, 0, false);
    return ND_SUCCESS;
}

HRESULT QueuePair::PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge) {
    std::lock_guard<std::mutex> lock(mu_);
    if (receives_.size() >= rdepth_) return ND_NO_MORE_ENTRIES;
    receives_.push_back({ctx, std::vector<ND2_SGE>(sge, sge + nsge)});
    return ND_SUCCESS;
}

}  // namespace loopback
