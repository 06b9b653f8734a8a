// TcpPath: posting, completions and the engine's Placement. The socket side
// (reading, writing, stalls, shutdown) is in tcp_path_io.cpp.
#include "tcp_path.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "opennd/log.h"
#include "progress_engine.h"
#include "memory_objects.h"
#include "queue_pair.h"
#include "soft_clock.h"
#include "soft_limits.h"
#include "srq.h"

namespace soft {
namespace {

HRESULT NdStatus(iwarp::OpStatus s) {
    switch (s) {
    case iwarp::OpStatus::Success: return ND_SUCCESS;
    case iwarp::OpStatus::RemoteAccessError: return ND_ACCESS_VIOLATION;  // COMPAT: remote access errors
    case iwarp::OpStatus::RemoteOperationError: return ND_REMOTE_ERROR;
    case iwarp::OpStatus::LocalLengthError: return ND_DATA_OVERRUN;       // COMPAT: a receive too small
    case iwarp::OpStatus::LocalAccessError: return ND_ACCESS_VIOLATION;   // its memory was deregistered
    case iwarp::OpStatus::RemoteNoReceive: return ND_IO_TIMEOUT;          // COMPAT: no receive at the peer
    case iwarp::OpStatus::ProtocolError: return ND_CONNECTION_ABORTED;
    case iwarp::OpStatus::Flushed: return ND_CANCELED;
    }
    return ND_INTERNAL_ERROR;
}

// Outbound FPDUs as long as MPA allows, not one TCP segment each: the
// receiver reads each long payload straight into place with one system
// call, and there are 2 (loopback) to 45 (Ethernet) times fewer of them. TCP
// offload cuts the stream into segments anyway (Linux siw likewise sizes
// FPDUs by MSS times GSO segments); MPA receivers parse FPDUs across segment
// boundaries, as markers are off.
constexpr uint32_t kFpduBytes = 65536;
// Not a multiple of the FPDU size: a read into it that finds a run of long
// FPDUs ends inside one, so the reads after it go straight into place.
constexpr size_t kRxBuffer = 252 * 1024;

iwarp::EngineOptions Options() {
    iwarp::EngineOptions o;
    o.mss = kFpduBytes;
    o.confirm_by_read = true;
    o.max_send_queue = kMaxQueueDepth + 64;
    o.max_receive_queue = kMaxQueueDepth + 64;
    return o;
}

}  // namespace

TcpPath::TcpPath(const Env &env, int fd, const iwarp::Negotiated &negotiated, std::vector<uint8_t> held, bool hold,
                 uint32_t hold_ms)
    : env_(env), fd_(fd), engine_(negotiated, *this, Options()), held_(std::move(held)), rx_buf_(kRxBuffer),
      hold_(hold), silence_limit_ms_(TcpTimeoutMs()) {
    engine_.HoldTransmit(hold || hold_ms > 0);
    OPENND_LOG(Debug, "ndsoft: iWARP stream set up: MPA revision %u, CRC %s, RTR %d, IRD %u, ORD %u (%s)",
                      unsigned(negotiated.revision), negotiated.crc ? "on" : "off", static_cast<int>(negotiated.rtr),
                      negotiated.ird, negotiated.ord,
                      negotiated.role == iwarp::Role::Initiator ? "initiator" : "responder");
    if (hold_ms > 0) {
        hold_until_ms_ = NowMs() + hold_ms;
        env_.engine->AddTimer();  // passes often enough to end the hold on time
    }
}

TcpPath::~TcpPath() {
    if (hold_until_ms_) env_.engine->RemoveTimer();
    if (failed_since_ms_) env_.engine->RemoveTimer();
    if (hangup_ms_) env_.engine->RemoveTimer();
}

size_t TcpPath::initiator_count() {
    Hold hold(*this);
    return ops_.size();
}

size_t TcpPath::receive_count() {
    Hold hold(*this);
    return recvs_.size();
}

void TcpPath::Submit(InitiatorOp op, std::function<bool(uint64_t)> post) {
    bool wait = !fenced_.empty() || ((op.flags & ND_OP_FLAG_READ_FENCE) && ReadOutstandingLocked(op.id));
    uint64_t id = op.id;
    ops_.push_back(std::move(op));
    if (wait) {
        fenced_.push_back({id, std::move(post)});
        return;
    }
    if (!post(id)) CancelLocked(id);  // the stream has failed
    ConfirmIfFullLocked();
    EmitLocked();
    TransmitLocked();
}

// Silent operations wait for a fence somebody needs; not so long that they
// fill the initiator queue (the application would see ND_NO_MORE_ENTRIES
// with nothing left to complete).
void TcpPath::ConfirmIfFullLocked() {
    if (ops_.size() >= std::max<size_t>(1, env_.initiator_depth / 2)) engine_.RequestConfirmation();
}

bool TcpPath::ReadOutstandingLocked(uint64_t before_id) const {
    for (const InitiatorOp &op : ops_) {
        if (op.id >= before_id && op.id != 0) break;
        if (op.type == Nd2RequestTypeRead && !op.done) return true;
    }
    return false;
}

void TcpPath::ReleaseFencedLocked() {
    while (!fenced_.empty()) {
        Fenced &f = fenced_.front();
        for (const InitiatorOp &op : ops_)
            if (op.id == f.id && (op.flags & ND_OP_FLAG_READ_FENCE) && ReadOutstandingLocked(f.id)) return;
        if (!f.post(f.id)) CancelLocked(f.id);
        fenced_.pop_front();
    }
}

void TcpPath::CancelLocked(uint64_t id) {
    for (InitiatorOp &op : ops_) {
        if (op.id != id) continue;
        op.done = true;
        op.status = ND_CANCELED;
        if (op.sink) sinks_.erase(op.sink);
        op.sink = 0;
    }
}

void TcpPath::Send(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, bool copy,
                   std::optional<uint32_t> invalidate) {
    Hold hold(*this);
    InitiatorOp op{Nd2RequestTypeSend, ctx, flags, false, ND_PENDING, next_id_++};
    std::vector<iwarp::ConstBuffer> sgl;
    if (copy) {
        op.copy = std::make_shared<std::vector<uint8_t>>();
        for (ULONG i = 0; i < nsge; ++i) {
            const auto *p = static_cast<const uint8_t *>(sge[i].Buffer);
            op.copy->insert(op.copy->end(), p, p + sge[i].BufferLength);
        }
        sgl.push_back({op.copy->data(), op.copy->size()});
    } else {
        for (ULONG i = 0; i < nsge; ++i)
            sgl.push_back({static_cast<const uint8_t *>(sge[i].Buffer), sge[i].BufferLength});
    }
    iwarp::SendFlags f;
    f.solicited = (flags & ND_OP_FLAG_SEND_AND_SOLICIT_EVENT) != 0;
    f.lazy_confirm = (flags & ND_OP_FLAG_SILENT_SUCCESS) != 0;
    f.invalidate = invalidate.has_value();
    f.invalidate_stag = invalidate.value_or(0);
    Submit(std::move(op), [this, sgl, f](uint64_t id) { return engine_.PostSend(id, sgl, f); });
}

void TcpPath::Write(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t raddr, uint32_t stag, ULONG flags,
                    bool copy) {
    Hold hold(*this);
    InitiatorOp op{Nd2RequestTypeWrite, ctx, flags, false, ND_PENDING, next_id_++};
    std::vector<iwarp::ConstBuffer> sgl;
    if (copy) op.copy = std::make_shared<std::vector<uint8_t>>();
    for (ULONG i = 0; i < nsge; ++i) {
        const auto *p = static_cast<const uint8_t *>(sge[i].Buffer);
        if (copy)
            op.copy->insert(op.copy->end(), p, p + sge[i].BufferLength);
        else
            sgl.push_back({p, sge[i].BufferLength});
    }
    if (copy) sgl.push_back({op.copy->data(), op.copy->size()});
    bool lazy = (flags & ND_OP_FLAG_SILENT_SUCCESS) != 0;
    Submit(std::move(op),
           [this, sgl, stag, raddr, lazy](uint64_t id) { return engine_.PostWrite(id, sgl, stag, raddr, lazy); });
}

void TcpPath::Read(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, uint64_t raddr, uint32_t stag,
                   ULONG flags) {
    Hold hold(*this);
    InitiatorOp op{Nd2RequestTypeRead, ctx, flags, false, ND_PENDING, next_id_++};
    uint32_t sink = next_sink_++;
    if (next_sink_ == 0) next_sink_ = 1;
    sinks_[sink].assign(sge, sge + nsge);
    op.sink = sink;
    auto length = static_cast<uint32_t>(total);
    Submit(std::move(op), [this, sink, length, stag, raddr](uint64_t id) {
        return engine_.PostRead(id, sink, 0, length, stag, raddr);
    });
}

void TcpPath::Local(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, HRESULT status) {
    Hold hold(*this);
    ops_.push_back(InitiatorOp{type, ctx, flags, true, status, 0});
    EmitLocked();
    if (FAILED(status)) FailLocked(true);  // a failed request ends the connection (R090)
}

void TcpPath::Quiesce() {
    Hold hold(*this);   // every placement runs under mu_
    OwnPendingLocked(); // and no unsent Read Response still names memory that may go
}

void TcpPath::Receive(const PostedReceive &r, bool valid) {
    Hold hold(*this);
    if (PostReceiveLocked(r, valid) && engine_.stalled()) PumpLocked();  // a Send was waiting for it
}

// Hands a receive to the engine (`valid`: its buffers were found
// registered; an invalid one fails the Send that lands in it). A receive
// the engine cannot take completes ND_CANCELED.
bool TcpPath::PostReceiveLocked(const PostedReceive &r, bool valid) {
    std::vector<iwarp::MutableBuffer> sgl;
    if (valid)
        for (uint32_t i = 0; i < r.nsge; ++i)
            sgl.push_back({static_cast<uint8_t *>(r.sge[i].Buffer), r.sge[i].BufferLength});
    if (!engine_.PostReceive(next_id_++, sgl)) {
        ND2_RESULT res{ND_CANCELED, 0, env_.qp_context, r.context, Nd2RequestTypeReceive};
        env_.rcq->Push(res);
        return false;
    }
    recvs_.push_back({next_id_ - 1, valid, r});
    return true;
}

// Initiator completions leave in posting order.
void TcpPath::EmitLocked() {
    while (!ops_.empty() && ops_.front().done) {
        const InitiatorOp &op = ops_.front();
        if (FAILED(op.status) || !(op.flags & ND_OP_FLAG_SILENT_SUCCESS)) {
            ND2_RESULT r{op.status, 0, env_.qp_context, op.context, op.type};
            env_.icq->Push(r);
        }
        ops_.pop_front();
    }
}

void TcpPath::CompleteLocked() {
    if (!logged_crc_quirk_ && engine_.dropped_bad_crc() != 0) {
        logged_crc_quirk_ = true;
        OPENND_LOG(Debug, "ndsoft: dropped a Read Response with a bad CRC answering our zero-length Read (Linux siw "
                          "answers it from a stale buffer); nothing placed");
    }
    if (engine_.failed()) OwnPendingLocked();  // before any flushed operation lets its buffers go
    if (engine_.failed() && !logged_end_) {
        logged_end_ = true;
        const iwarp::Fault &f = engine_.local_fault();
        if (const auto &t = engine_.remote_terminate())
            OPENND_LOG(Debug, "ndsoft: iWARP stream ended by the peer's Terminate (layer %d, type %d, code 0x%02x%s)",
                              static_cast<int>(t->code.layer), t->code.etype, t->code.ecode,
                              t->bit_fields ? ", laid out as siw does" : "");
        else if (f.errc == iwarp::Errc::FpduCrc && f.header_length != 0) {
            char hex[2 * sizeof f.header + 1] = {};
            for (size_t i = 0; i < f.header_length; ++i) std::snprintf(hex + 2 * i, 3, "%02x", f.header[i]);
            OPENND_LOG(Debug, "ndsoft: iWARP stream ended here: fpdu-crc (ULPDU of %u bytes, header %s, %zu Reads of ours out)",
                       f.segment_length, hex, engine_.outstanding_reads());
        } else
            OPENND_LOG(Debug, "ndsoft: iWARP stream ended here: %s", iwarp::ErrcName(f.errc));
    }
    bool fail = false;
    for (iwarp::Completion c; engine_.PollCompletion(&c);) {
        HRESULT status = NdStatus(c.status);
        if (c.kind == iwarp::CompletionKind::Receive) {
            if (recvs_.empty()) continue;  // cannot happen: one entry per posted receive
            void *const context = recvs_.front().r.context;
            const bool valid = recvs_.front().valid;
            recvs_.pop_front();
            ULONG bytes = c.status == iwarp::OpStatus::Success ? c.length : 0;
            if (!valid && status != ND_CANCELED) {
                status = ND_ACCESS_VIOLATION;  // its buffers were not registered for local write
                bytes = 0;
                fail = true;
            }
            ND2_RESULT res{status, bytes, env_.qp_context, context, Nd2RequestTypeReceive};
            if (c.invalidated && status == ND_SUCCESS)
                env_.rcq->PushInvalidated(res, ToWireToken(c.invalidated_stag), c.solicited);
            else
                env_.rcq->Push(res, c.solicited);
            continue;
        }
        for (InitiatorOp &op : ops_) {
            if (op.id != c.id) continue;
            op.done = true;
            op.status = status;
            if (op.sink != 0 && op.sink == withdrawn_sink_ && FAILED(status)) op.status = ND_ACCESS_VIOLATION;
            if (op.sink) sinks_.erase(op.sink);
            op.sink = 0;
            break;
        }
        EmitLocked();  // before the receives a failure flushes after it
    }
    ReleaseFencedLocked();
    EmitLocked();
    if (fail) FailLocked(true);
}

void TcpPath::FailLocked(bool terminate) {
    engine_.Abort(terminate);
    CompleteLocked();
    WriteSocketLocked();  // the Terminate, if any
}

// ------------------------------------------------------------- placement

iwarp::TaggedCheck TcpPath::CheckTagged(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access access) {
    if (access == iwarp::Access::LocalWrite) {
        auto it = sinks_.find(stag);
        if (it == sinks_.end()) return iwarp::TaggedCheck::InvalidStag;
        uint64_t room = 0;
        // Checked at post time; looked at again: it may have been deregistered since.
        if (!env_.engine->mrs().LocalSgesValid(it->second.data(), static_cast<ULONG>(it->second.size()),
                                               kRightLocalWrite | kRightReadSink, &room)) {
            withdrawn_sink_ = stag;  // the stream ends; that Read reports the access violation
            return iwarp::TaggedCheck::InvalidStag;
        }
        return to <= room && len <= room - to ? iwarp::TaggedCheck::Ok : iwarp::TaggedCheck::BaseBounds;
    }
    if (!one_sided_last_.load(std::memory_order_relaxed))
        one_sided_last_.store(true, std::memory_order_relaxed);  // see Progress: no parking
    switch (env_.engine->mrs().CheckRemote(stag, to, len,
                                           access == iwarp::Access::RemoteWrite ? kRightRemoteWrite : kRightRemoteRead,
                                           env_.qp_id)) {
    case RemoteCheck::Ok: return iwarp::TaggedCheck::Ok;
    case RemoteCheck::InvalidToken: return iwarp::TaggedCheck::InvalidStag;
    case RemoteCheck::NotAssociated: return iwarp::TaggedCheck::StagNotAssociated;
    case RemoteCheck::Bounds: return iwarp::TaggedCheck::BaseBounds;
    case RemoteCheck::Rights: return iwarp::TaggedCheck::AccessRights;
    }
    return iwarp::TaggedCheck::InvalidStag;
}

void TcpPath::PlaceTagged(uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len, iwarp::Access access) {
    if (access == iwarp::Access::LocalWrite) {  // scatter into the Read's SGEs
        iwarp::MutableBuffer to_fill[16];
        while (len > 0) {
            size_t n = TaggedDestination(stag, to, len, access, to_fill, std::size(to_fill));
            if (n == 0) return;  // (cannot happen: CheckTagged found the room)
            for (size_t i = 0; i < n; ++i) {
                std::memcpy(to_fill[i].data, data, to_fill[i].length);
                data += to_fill[i].length;
                to += to_fill[i].length;
                len -= static_cast<uint32_t>(to_fill[i].length);
            }
        }
        return;
    }
    // RDMA Write: in address order, the last byte last (targets spin on it).
    uint64_t where = 0;
    if (!RemoteRange(stag, to, len, kRightRemoteWrite, &where)) return;  // (cannot happen: CheckTagged passed)
    auto *dst = reinterpret_cast<uint8_t *>(where);
    if (len > 1) std::memcpy(dst, data, len - 1);
    std::atomic_ref<uint8_t>(dst[len - 1]).store(data[len - 1], std::memory_order_release);
}

size_t TcpPath::TaggedDestination(uint32_t stag, uint64_t to, uint32_t len, iwarp::Access access,
                                  iwarp::MutableBuffer *out, size_t max) {
    if (max == 0) return 0;
    if (access != iwarp::Access::LocalWrite) {  // a Write's sink: our memory under the token
        uint64_t where = 0;
        if (!RemoteRange(stag, to, len, kRightRemoteWrite, &where)) return 0;  // (as above)
        out[0] = {reinterpret_cast<uint8_t *>(where), len};
        return 1;
    }
    size_t n = 0;  // a Read's sink: its SGEs, `to` bytes in
    for (const ND2_SGE &s : sinks_.at(stag)) {
        if (len == 0 || n == max) break;
        if (to >= s.BufferLength) {
            to -= s.BufferLength;
            continue;
        }
        size_t k = std::min<uint64_t>(len, s.BufferLength - to);
        out[n++] = {static_cast<uint8_t *>(s.Buffer) + to, k};
        len -= static_cast<uint32_t>(k);
        to = 0;
    }
    return n;
}

bool TcpPath::ReceiveUsable(uint64_t id) {
    if (one_sided_last_.load(std::memory_order_relaxed))
        one_sided_last_.store(false, std::memory_order_relaxed);  // a Send: parking may resume (Progress)
    // Checked at post time; looked at again before every segment is placed:
    // the application may have deregistered the memory since (and freed it).
    for (size_t i = 0; i < recvs_.size(); ++i) {
        const RecvOp &op = recvs_[i];
        if (op.id == id) return op.valid && env_.engine->mrs().LocalSgesValid(op.r.sge, op.r.nsge, kRightLocalWrite);
    }
    return false;
}

// The peer's Send with Invalidate, under mu_: placement through this path
// is under mu_ too, so nothing through the window is under way.
bool TcpPath::InvalidateStag(uint32_t stag) {
    Unbound u;
    const bool ok = InvalidateForPeer(*env_.engine, stag, env_.qp_id, &u);
    if (u.window) unbound_.push_back(std::move(u));
    return ok;
}

const uint8_t *TcpPath::TaggedSource(uint32_t stag, uint64_t to, uint32_t len) {
    // Checked when the Read Request arrived; look again (see FetchTagged).
    uint64_t where = 0;
    if (!RemoteRange(stag, to, len, kRightRemoteRead, &where)) return nullptr;
    return reinterpret_cast<const uint8_t *>(where);
}

bool TcpPath::FetchTagged(uint32_t stag, uint64_t to, uint8_t *out, uint32_t len) {
    // Checked when the Read Request arrived; look again: it may have been
    // deregistered since (the engine then terminates the stream).
    uint64_t where = 0;
    if (!RemoteRange(stag, to, len, kRightRemoteRead, &where)) return false;
    std::memcpy(out, reinterpret_cast<const void *>(where), len);
    return true;
}

// Our memory that the peer reaches at `to` under `stag` (checked as
// CheckTagged does): where its bytes are, which differs from `to` through
// a window addressed elsewhere.
bool TcpPath::RemoteRange(uint32_t stag, uint64_t to, uint32_t len, uint32_t need, uint64_t *where) const {
    return env_.engine->mrs().CheckRemote(stag, to, len, need, env_.qp_id, where) == RemoteCheck::Ok;
}

}  // namespace soft
