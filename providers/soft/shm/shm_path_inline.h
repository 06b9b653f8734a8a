// The shared-memory path's per-message steps that Send inlines (each a few dozen
// instructions whose call and return were a tenth of a Send): defined here
// for every file that uses them, so they inline with or without link-time
// optimisation. Included by shm_path*.cpp only.
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

}  // namespace soft
