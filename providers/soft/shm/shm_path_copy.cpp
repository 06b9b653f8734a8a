// The copy-through-ring data path, used when cross-memory attach between the
// two processes is not permitted (Yama ptrace_scope, containers) or is
// turned off (OPENND_SOFT_CMA=0): large Sends, RDMA Writes and RDMA Read
// responses travel as fragments of at most 4 KiB through the channel rings.
// The target's progress (its application's polls, or its progress thread,
// which the initiator wakes) places Writes and serves Reads after the same
// token, range and rights checks as the direct path.
#include <atomic>
#include <cstring>

#include "memory_objects.h"
#include "queue_pair.h"
#include "shm_path_inline.h"
#include "soft_clock.h"
#include "soft_limits.h"

namespace soft {
namespace {

uint64_t SgeBytes(const ND2_SGE *sge, size_t n) {
    uint64_t t = 0;
    for (size_t i = 0; i < n; ++i) t += sge[i].BufferLength;
    return t;
}

// Copies `len` bytes starting `offset` bytes into the SGE list to `out`.
void Gather(const std::vector<ND2_SGE> &sge, uint32_t offset, char *out, uint32_t len) {
    for (const ND2_SGE &s : sge) {
        if (len == 0) return;
        if (offset >= s.BufferLength) {
            offset -= s.BufferLength;
            continue;
        }
        uint32_t n = std::min(len, s.BufferLength - offset);
        std::memcpy(out, static_cast<const char *>(s.Buffer) + offset, n);
        out += n;
        len -= n;
        offset = 0;
    }
}

// Copies `len` bytes from `in` to `offset` bytes into the SGE list.
void Scatter(const ND2_SGE *sge, size_t nsge, uint32_t offset, const char *in, uint32_t len) {
    for (size_t i = 0; i < nsge && len; ++i) {
        if (offset >= sge[i].BufferLength) {
            offset -= sge[i].BufferLength;
            continue;
        }
        uint32_t n = std::min(len, sge[i].BufferLength - offset);
        std::memcpy(static_cast<char *>(sge[i].Buffer) + offset, in, n);
        in += n;
        len -= n;
        offset = 0;
    }
}

}  // namespace

HRESULT ShmPath::PostStreamLocked(Stream kind, ND2_REQUEST_TYPE type, void *ctx, const ND2_SGE *sge, ULONG nsge,
                                    uint32_t length, ULONG flags, uint64_t raddr, uint32_t rtoken,
                                    const UINT32 *invalidate) {
    AddOpLocked(type, ctx, flags, false, ND_PENDING, NowMs());
    Backlog b;
    if (invalidate) {
        b.invalidate = true;
        b.token = *invalidate;
    }
    b.op_seq = first_seq_ + ops_.size() - 1;
    b.length = length;
    b.flags = flags;
    b.stream = kind;
    b.raddr = raddr;
    b.rtoken = rtoken;
    if (kind == Stream::ReadRequest) {
        ops_.back().awaiting_data = true;
        ops_.back().sink.assign(sge, sge + nsge);
    } else if (flags & ND_OP_FLAG_INLINE) {
        b.inline_data.resize(length);  // the caller may reuse an inline buffer at once
        std::vector<ND2_SGE> v(sge, sge + nsge);
        Gather(v, 0, b.inline_data.data(), length);
    } else {
        b.sge.assign(sge, sge + nsge);
    }
    backlog_.push_back(std::move(b));
    if (backlog_.size() == 1) {
        Backlog &front = backlog_.front();
        if (PumpStreamLocked(front, ops_.back())) backlog_.pop_front();
    }
    NoteProgressLocked();
    return ND_SUCCESS;
}

bool ShmPath::ReadPendingBeforeLocked(uint64_t seq) const {
    for (uint64_t s = first_seq_; s < seq && s - first_seq_ < ops_.size(); ++s) {
        const Op &op = ops_[s - first_seq_];
        if (op.type == Nd2RequestTypeRead && !op.done) return true;
    }
    return false;
}

bool ShmPath::PumpStreamLocked(Backlog &b, Op &op) {
    // READ_FENCE: nothing of this request goes out before earlier Reads are done (R099).
    if ((b.flags & ND_OP_FLAG_READ_FENCE) && b.published == 0 && ReadPendingBeforeLocked(b.op_seq)) return false;
    if (!MarkInvalidateLocked(b)) return false;  // a Send with Invalidate's InvalidateNext comes first
    bool one_sided = b.stream != Stream::SendFragments;
    if (b.stream == Stream::ReadRequest) {
        uint64_t pos;
        MsgHeader *m = producer_.Reserve(sizeof(RemoteHeader), &pos);
        if (!m) return false;
        RemoteHeader h{b.raddr, b.rtoken, b.length, 0, 0, b.op_seq};
        std::memcpy(Channel::Payload(m), &h, sizeof h);
        m->type = MsgType::ReadRequest;
        m->flags = kMsgFirst | kMsgLast;
        m->length = 0;
        producer_.Publish(m, pos);
        op.in_ring = true;
        op.pos = pos;
        b.published = b.length;  // the request is out; its data comes back in responses
    } else {
        size_t header = b.stream == Stream::SendFragments ? sizeof(FragmentHeader) : sizeof(RemoteHeader);
        while (b.published < b.length) {
            uint32_t chunk = std::min<uint32_t>(kFragmentData, b.length - b.published);
            uint64_t pos;
            MsgHeader *m = producer_.Reserve(static_cast<uint32_t>(header + chunk), &pos);
            if (!m) break;
            char *payload = Channel::Payload(m);
            bool last = b.published + chunk == b.length;
            if (b.stream == Stream::SendFragments) {
                FragmentHeader h{b.length, b.published};
                std::memcpy(payload, &h, sizeof h);
                m->type = MsgType::SendFragment;
            } else {
                RemoteHeader h{b.raddr, b.rtoken, b.length, b.published, 0, 0};
                std::memcpy(payload, &h, sizeof h);
                m->type = MsgType::WriteFragment;
            }
            if (!b.inline_data.empty())
                std::memcpy(payload + header, b.inline_data.data() + b.published, chunk);
            else
                Gather(b.sge, b.published, payload + header, chunk);
            m->flags = (b.published == 0 ? kMsgFirst : 0) | (last ? kMsgLast : 0) |
                       (last && (b.flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) ? kMsgSolicited : 0);
            m->length = chunk;
            fragments_end_ = pos + m->slots;  // read before the peer may see it
            producer_.Publish(m, pos);
            op.fragmented = true;
            b.published += chunk;
            if (last) {
                op.in_ring = true;
                op.pos = pos;
            }
        }
    }
    // One-sided work needs the target's progress even if its application
    // never polls: wake its progress thread.
    if (one_sided)
        conn_->WakePeerNow();
    else
        conn_->WakePeer();
    return b.published >= b.length;
}

void ShmPath::PumpResponsesLocked() {
    while (!responses_.empty()) {
        ResponseJob &job = responses_.front();
        do {
            uint32_t chunk = std::min<uint32_t>(kFragmentData, job.length - job.sent);
            uint64_t pos;
            MsgHeader *m = producer_.Reserve(static_cast<uint32_t>(sizeof(ResponseHeader) + chunk), &pos);
            if (!m) {
                responding_.store(true, std::memory_order_relaxed);
                conn_->WakePeer();
                return;
            }
            // Checked when the request came; looked at again for every chunk
            // (the source may have been deregistered and freed since): the
            // Read then ends with an access violation, nothing more is read.
            uint64_t source = 0;
            if (chunk && !OwnRangeValid(job.token, job.address + job.sent, chunk, kRightRemoteRead, &source)) {
                job.status = ND_ACCESS_VIOLATION;
                chunk = 0;
                job.sent = job.length;
            }
            ResponseHeader h{job.read_id, job.sent, job.status};
            std::memcpy(Channel::Payload(m), &h, sizeof h);
            if (chunk) std::memcpy(Channel::Payload(m) + sizeof h, reinterpret_cast<const void *>(source), chunk);
            m->type = MsgType::ReadResponse;
            m->length = chunk;
            job.sent += chunk;
            m->flags = job.sent == job.length ? kMsgLast : 0;
            producer_.Publish(m, pos);
        } while (job.sent < job.length);
        responses_.pop_front();
    }
    responding_.store(false, std::memory_order_relaxed);
    conn_->WakePeer();
}

bool ShmPath::HandleCopyMessage(MsgHeader *m, const MsgInfo &info, int32_t *for_sender, bool *fatal,
                                  ReceiveDone *done) {
    const char *payload = Channel::Payload(m);
    uint32_t capacity = info.slots * kSlotSize - sizeof(MsgHeader);
    *for_sender = ND_SUCCESS;
    switch (info.type) {
    case MsgType::SendFragment: {
        FragmentHeader h;
        CopyOnce(&h, payload, sizeof h);
        if (capacity < sizeof h + info.length || h.offset > h.total || info.length > h.total - h.offset ||
            h.total > kMaxTransferLength || ((info.flags & kMsgFirst) != 0) == reassembly_.active) {
            *fatal = true;  // malformed, or fragments out of order
            *for_sender = ND_INVALID_DEVICE_REQUEST;
            return true;
        }
        Reassembly &r = reassembly_;
        if (info.flags & kMsgFirst) {
            PostedReceive rcv;
            if (!TakeReceive(&rcv)) return false;  // no receive yet: wait (RNR)
            uint64_t room = 0;
            HRESULT st = !LocalSgesValid(rcv.sge, rcv.nsge, kRightLocalWrite, &room) ? ND_ACCESS_VIOLATION
                         : h.total > room                                             ? ND_DATA_OVERRUN
                                                                                      : ND_SUCCESS;
            r = Reassembly{true, rcv, h.total, st, false};
        } else if (SUCCEEDED(r.status) && !LocalSgesValid(r.receive.sge, r.receive.nsge, kRightLocalWrite, nullptr)) {
            r.status = ND_ACCESS_VIOLATION;  // deregistered since the first fragment
        }
        if (SUCCEEDED(r.status))
            Scatter(r.receive.sge, r.receive.nsge, h.offset, payload + sizeof h, info.length);
        else if (r.status != ND_DATA_OVERRUN)  // too small: the sender succeeds (COMPAT, as in Deliver)
            *for_sender = ND_REMOTE_ERROR;
        if (info.flags & kMsgLast) {
            *done = ReceiveDone{true, r.receive, r.status, SUCCEEDED(r.status) ? r.total : 0,
                                (info.flags & kMsgSolicited) != 0};
            *fatal = FAILED(r.status);
            r.active = false;
        }
        return true;
    }
    case MsgType::WriteFragment:
    case MsgType::ReadRequest: {
        RemoteHeader h;
        CopyOnce(&h, payload, sizeof h);
        bool write = info.type == MsgType::WriteFragment;
        uint32_t chunk = write ? info.length : 0;
        if (capacity < sizeof h + chunk || h.offset > h.total || chunk > h.total - h.offset) {
            *fatal = true;
            *for_sender = ND_INVALID_DEVICE_REQUEST;
            return true;
        }
        uint64_t where = 0;
        if (!OwnRangeValid(h.token, h.address, h.total, write ? kRightRemoteWrite : kRightRemoteRead, &where)) {
            // Refused: the connection ends here too, as an RNIC (and our TCP
            // path) ends it, so a peer gets one guess at a token per
            // connection, not millions a second (#25).
            *for_sender = ND_ACCESS_VIOLATION;
            *fatal = true;
            return true;
        }
        if (write && chunk) {
            // In address order, the last byte last (applications spin on it).
            char *dst = reinterpret_cast<char *>(where + h.offset);
            std::memcpy(dst, payload + sizeof h, chunk - 1);
            __atomic_store_n(dst + chunk - 1, payload[sizeof h + chunk - 1], __ATOMIC_RELEASE);
        } else if (!write) {
            std::lock_guard<QpLock> tx(tx_mu_);  // lock order: rx, then tx
            // More Reads answered at once than any initiator queue holds: a
            // peer that never takes our answers (memory would grow unbounded).
            if (responses_.size() >= kMaxQueueDepth) {
                *fatal = true;
                *for_sender = ND_INVALID_DEVICE_REQUEST;
                return true;
            }
            responses_.push_back(ResponseJob{h.read_id, h.address, h.total, 0, ND_SUCCESS, h.token});
            responding_.store(true, std::memory_order_relaxed);
            // The responses go out on a send pass; this receive pass may be
            // a Receive call's, which makes none: the flag's kick makes one.
            SetWakeFlagLocked();
        }
        return true;
    }
    case MsgType::ReadResponse: {
        ResponseHeader h;
        CopyOnce(&h, payload, sizeof h);
        if (capacity < sizeof h + info.length) {
            *fatal = true;
            return true;
        }
        std::lock_guard<QpLock> tx(tx_mu_);
        if (h.read_id < first_seq_ || h.read_id - first_seq_ >= ops_.size()) return true;  // cancelled
        Op &op = ops_[h.read_id - first_seq_];
        if (!op.awaiting_data || op.done) return true;
        uint64_t want = SgeBytes(op.sink.data(), op.sink.size());
        if (h.offset > want || info.length > want - h.offset) {
            *fatal = true;
            return true;
        }
        // Checked at post time; looked at again for every fragment: the
        // sink may have been deregistered (and freed) since.
        if (info.length && !LocalSgesValid(op.sink.data(), op.sink.size(), kRightLocalWrite | kRightReadSink, nullptr)) {
            op.awaiting_data = false;
            op.done = true;
            op.status = ND_ACCESS_VIOLATION;
            EmitLocked();
            NoteProgressLocked();
            *fatal = true;  // a failed request ends the connection (R090)
            return true;
        }
        Scatter(op.sink.data(), op.sink.size(), h.offset, payload + sizeof h, info.length);
        op.posted_ms = NowMs();  // the answer moves: its time starts again (ReapLocked)
        if (info.flags & kMsgLast) {
            op.awaiting_data = false;
            op.done = true;
            op.status = StatusFromPeer(h.status);
            EmitLocked();
            NoteProgressLocked();
            if (FAILED(h.status)) *fatal = true;  // the source went away at the target (R090)
        }
        return true;
    }
    default: *fatal = true; return true;
    }
}

}  // namespace soft
