// Send with Invalidate on the shared-memory path (shm_wire.h, wire version
// 10): the sender publishes an InvalidateNext message just before the Send
// (or its first fragment), in the same turn; the receiver keeps the token
// and applies it once the next Send it completes is placed (ReceivePassLocked).
#include <cstring>

#include "shm_path_inline.h"

namespace soft {

HRESULT ShmPath::PostSendInvalidate(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t total,
                                    UINT32 token) {
    return PostSendAs(ctx, sge, nsge, flags, total, &token);
}

bool ShmPath::MarkInvalidateLocked(Backlog &b) {
    if (!b.invalidate || b.marked) return true;
    uint64_t pos;
    MsgHeader *m = producer_.Reserve(sizeof(InvalidateHeader), &pos);
    if (!m) return false;
    const InvalidateHeader h{b.token, 0};
    std::memcpy(Channel::Payload(m), &h, sizeof h);
    m->type = MsgType::InvalidateNext;
    m->length = sizeof h;
    producer_.Publish(m, pos);
    b.marked = true;
    return true;
}

const UINT32 *ShmPath::InvalidateForSendLocked(HRESULT *status, int32_t *for_sender, std::vector<Unbound> *let_go) {
    const UINT32 token = *rx_invalidate_;
    rx_invalidate_.reset();
    if (FAILED(*status)) return nullptr;  // nothing placed: the connection fails anyway
    Unbound u;
    const bool ok = InvalidateForPeer(*engine_, FromWireToken(token), id_, &u);
    if (u.window) let_go->push_back(std::move(u));
    if (!ok) {
        *status = ND_REMOTE_ERROR;
        *for_sender = ND_ACCESS_VIOLATION;
        return nullptr;
    }
    rx_invalidated_ = token;
    return &rx_invalidated_;
}

}  // namespace soft
