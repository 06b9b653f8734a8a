// The shared-memory path's per-message steps that Send inlines, and Send (each a few dozen
// instructions whose call and return were a tenth of a Send): defined here
// for every file that uses them, so they inline with or without link-time
// optimisation. Included by shm_path*.cpp and, for Send, queue_pair.h.
#pragma once

#include <cstring>

#include "shm_path.h"
#include "soft_limits.h"

namespace soft {

inline ShmPath::Op &ShmPath::AddOpLocked(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool done, HRESULT status,
                                             uint64_t posted_ms) {
    Op &op = ops_.emplace_back();
    op.Reset(type, ctx, flags, done, status, posted_ms);
    ops_count_.store(ops_.size(), std::memory_order_relaxed);
    if (!(flags & ND_OP_FLAG_SILENT_SUCCESS))
        reporting_.store(reporting_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return op;
}

inline bool ShmPath::TryPublishSendLocked(Op &op, const ND2_SGE *sge, ULONG nsge, const char *data,
                                            uint32_t length, ULONG flags) {
    bool by_copy = data != nullptr || length <= kInlineThreshold || (flags & ND_OP_FLAG_INLINE);
    uint32_t payload = by_copy ? length : 0;
    if (!by_copy)
        for (ULONG i = 0; i < nsge; ++i)
            if (sge[i].BufferLength) payload += sizeof(SgeRef);
    uint64_t pos;
    MsgHeader *m = producer_.Reserve(payload, &pos);
    if (!m) return false;
    char *out = Channel::Payload(m);
    if (by_copy) {
        m->type = MsgType::SendInline;
        if (data) {
            std::memcpy(out, data, length);
        } else {
            for (ULONG i = 0; i < nsge; ++i) {
                if (sge[i].BufferLength) std::memcpy(out, sge[i].Buffer, sge[i].BufferLength);
                out += sge[i].BufferLength;
            }
        }
    } else {
        m->type = MsgType::SendCma;
        auto *refs = reinterpret_cast<SgeRef *>(out);
        for (ULONG i = 0; i < nsge; ++i)
            if (sge[i].BufferLength) *refs++ = SgeRef{reinterpret_cast<uint64_t>(sge[i].Buffer), sge[i].BufferLength};
        if (length >= kPushMin) op.sink.assign(sge, sge + nsge);  // the peer may ask us to push a part
    }
    m->flags = (flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) ? kMsgSolicited : 0;
    m->length = length;
    producer_.Publish(m, pos);
    op.in_ring = true;
    op.pos = pos;
    conn_->WakePeer();
    return true;
}

// The Send path, inlined into QueuePair::Send: one call from the
// application into the provider, as a NIC provider posts.
inline HRESULT ShmPath::PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total) {
    return PostSendAs(ctx, sge, nsge, flags, total, nullptr);
}

inline HRESULT ShmPath::PostSendAs(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total,
                                   const UINT32 *invalidate) {
    const bool inline_data = (flags & ND_OP_FLAG_INLINE) != 0;
    std::unique_lock<QpLock> lock(tx_mu_);
    // Reaping reads what the peer writes as it consumes; a Send needs it only
    // when the queue or the ring runs short (polling reaps the rest).
    if (ops_.size() >= idepth_ / 2 || producer_.FreeSlots() < kRingSlots / 4) ReapLocked();
    if (ops_.size() >= idepth_) return ND_NO_MORE_ENTRIES;
    if (state() != State::Connected) {
        PushOpLocked(Nd2RequestTypeSend, ctx, flags, ND_CANCELED);
        EmitLocked();
        return ND_SUCCESS;
    }
    if (!inline_data && !LocalSgesValid(sge, nsge, 0, nullptr, &tx_memo_)) {
        PushOpLocked(Nd2RequestTypeSend, ctx, flags, ND_ACCESS_VIOLATION);
        EmitLocked();
        lock.unlock();
        FlushReceives();
        TerminatePeer(ND_ACCESS_VIOLATION);
        return ND_SUCCESS;
    }
    if (total > kInlineThreshold && !inline_data && !conn_->peer_can_access_us)  // the peer cannot pull it
        return PostStreamLocked(Stream::SendFragments, Nd2RequestTypeSend, ctx, sge, nsge,
                                static_cast<uint32_t>(total), flags, 0, 0, invalidate);
    Op &op = AddOpLocked(Nd2RequestTypeSend, ctx, flags, false, ND_PENDING, kNotStamped);
    bool fenced = (flags & ND_OP_FLAG_READ_FENCE) && ReadPendingBeforeLocked(first_seq_ + ops_.size() - 1);
    if (!invalidate && backlog_.empty() && !fenced &&
        TryPublishSendLocked(op, sge, nsge, nullptr, static_cast<uint32_t>(total), flags)) {
        // NoteProgressLocked, for the one thing that changed: the backlog
        // was and is empty; this Send is the oldest waiting if none was.
        if (oldest_in_ring_ms_.load(std::memory_order_relaxed) == 0)
            oldest_in_ring_ms_.store(kNotStamped, std::memory_order_relaxed);
        return ND_SUCCESS;
    }
    Backlog b;
    b.op_seq = first_seq_ + ops_.size() - 1;
    b.length = static_cast<uint32_t>(total);
    b.flags = flags;
    if (inline_data || total <= kInlineThreshold) {
        b.inline_data.resize(total);  // the caller may reuse an inline buffer at once
        size_t at = 0;
        for (ULONG i = 0; i < nsge; ++i) {
            if (sge[i].BufferLength) std::memcpy(b.inline_data.data() + at, sge[i].Buffer, sge[i].BufferLength);
            at += sge[i].BufferLength;
        }
    } else {
        b.sge.assign(sge, sge + nsge);
    }
    if (invalidate) {  // its two messages go out through the backlog, now if they can
        b.invalidate = true;
        b.token = *invalidate;
    }
    backlog_.push_back(std::move(b));
    if (invalidate) PumpBacklogLocked();
    NoteProgressLocked();
    return ND_SUCCESS;
}

}  // namespace soft
