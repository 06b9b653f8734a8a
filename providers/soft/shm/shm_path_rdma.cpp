// One-sided operations on the shared-memory path: RDMA Read and Write move
// data directly between the two processes' registered buffers with
// cross-memory attach, after checking the token, range and rights against
// the target's memory-region table. The target's CPU is not involved.
// Requests done at post time (Bind, Invalidate) complete in order here too.
#include <sys/uio.h>

#include <cerrno>

#include "cma_move.h"
#include "memory_objects.h"
#include "opennd/log.h"
#include "queue_pair.h"
#include "shm_path_inline.h"
#include "soft_clock.h"
#include "soft_limits.h"

namespace soft {

// Queues the completion of a request done at post time; a failure ends the
// connection (R090): receives flush and the peer is told.
HRESULT ShmPath::FinishOneSided(std::unique_lock<QpLock> &lock, ND2_REQUEST_TYPE type, void *ctx, ULONG flags,
                                HRESULT status, bool was_connected) {
    PushOpLocked(type, ctx, flags, status);
    EmitLocked();
    lock.unlock();
    if (was_connected && FAILED(status)) {
        FlushReceives();
        TerminatePeer(status);
    }
    return ND_SUCCESS;
}

// Whether the stores of one copy are seen after those of the copy before it
// on every other CPU: x86's are (Intel SDM: stores across string operations,
// and string operations and later stores, are not reordered).
#if defined(__x86_64__) || defined(__i386__)
constexpr bool kStoresLandInOrder = true;
#else
constexpr bool kStoresLandInOrder = false;
#endif

// Checks and performs one Read or Write; returns its completion status.
HRESULT ShmPath::RemoteAccess(const ND2_SGE *sge, ULONG nsge, UINT64 raddr, UINT32 rtoken, bool write,
                              ULONG flags) {
    uint64_t total = 0;
    bool inline_src = write && (flags & ND_OP_FLAG_INLINE);
    if (inline_src) {
        for (ULONG i = 0; i < nsge; ++i) total += sge[i].BufferLength;
    } else if (!LocalSgesValid(sge, nsge, write ? 0 : (kRightLocalWrite | kRightReadSink), &total, &tx_memo_)) {
        return ND_ACCESS_VIOLATION;
    }
    if (total == 0) return ND_SUCCESS;
    // Announced before the check, withdrawn after the copy: a Deregister at
    // the peer either removed the token before our check or waits for us.
    // (Both sides touch the counter with read-modify-writes: if its RMW came
    // first, ours reads from it and its table change happens before our check.)
    // The peer's queue pair gone (it drains us, then raises the flag: if it
    // read the counter before our announcement, we see the flag): nothing of
    // its memory may be touched any more.
    ChannelHeader *h = conn_->channel->header();
    std::atomic<uint32_t> &busy = h->remote_access[conn_->side];
    busy.fetch_add(1, std::memory_order_seq_cst);
    struct Done {
        std::atomic<uint32_t> &b;
        ~Done() { b.fetch_sub(1, std::memory_order_release); }
    } done{busy};
    if (h->closed[1 - conn_->side].load(std::memory_order_seq_cst)) return ND_CANCELED;
    if (conn_->peer_mrs().CheckRemote(FromWireToken(rtoken), raddr, total, write ? kRightRemoteWrite : kRightRemoteRead,
                                      conn_->peer_qp_id, &raddr) != RemoteCheck::Ok)
        return ND_ACCESS_VIOLATION;  // COMPAT: remote access errors are access violations
    // (raddr is now where the bytes are in the peer: a window may be addressed elsewhere)
    iovec local[kMaxSge * 4 + 1], remote[2];
    int nl = 0;
    for (ULONG i = 0; i < nsge && nl < static_cast<int>(kMaxSge * 4); ++i)
        if (sge[i].BufferLength) local[nl++] = iovec{sge[i].Buffer, sge[i].BufferLength};
    int err;
    if (write) {
        // Data lands in address order with the last byte last (applications
        // spin on it): everything but the last byte, then the last byte.
        int nr = 0;
        if (kStoresLandInOrder) {
            // The kernel copies each local piece with its own copy, in order,
            // so the last byte as a piece of its own lands after the rest,
            // and the peer's pages are pinned once (a second remote piece
            // cost a fifth of a 4 KiB Write).
            iovec &end = local[nl - 1];
            if (end.iov_len > 1) {
                --end.iov_len;
                local[nl++] = iovec{static_cast<char *>(end.iov_base) + end.iov_len, 1};
            }
            remote[nr++] = iovec{reinterpret_cast<void *>(raddr), total};
        } else {
            // The pinning between two remote pieces orders the stores.
            if (total > 1) remote[nr++] = iovec{reinterpret_cast<void *>(raddr), total - 1};
            remote[nr++] = iovec{reinterpret_cast<void *>(raddr + total - 1), 1};
        }
        err = MoveAll(conn_->peer_pid, local, nl, remote, nr, true);
    } else {
        remote[0] = iovec{reinterpret_cast<void *>(raddr), total};
        err = MoveAll(conn_->peer_pid, local, nl, remote, 1, false);
    }
    if (err == 0) return ND_SUCCESS;
    if (err == EPERM) OPENND_LOG(Warn, "ndsoft: cross-memory attach to process %d is not permitted", conn_->peer_pid);
    if (err == ESRCH) return ND_CANCELED;  // the peer is gone
    return ND_ACCESS_VIOLATION;
}

HRESULT ShmPath::PostRead(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                          ULONG flags) {
    std::unique_lock<QpLock> lock(tx_mu_);
    ReapLocked();
    if (ops_.size() >= idepth_) return ND_NO_MORE_ENTRIES;
    if (state() == State::Connected && !conn_->can_access_peer &&
        LocalSgesValid(sge, nsge, kRightLocalWrite | kRightReadSink, &total) && total > 0 && total <= kMaxTransferLength)
        return PostStreamLocked(Stream::ReadRequest, Nd2RequestTypeRead, ctx, sge, nsge, static_cast<uint32_t>(total),
                                flags, raddr, rtoken);
    bool was_connected = state() == State::Connected;
    HRESULT status = was_connected ? RemoteAccess(sge, nsge, raddr, rtoken, false, flags) : ND_CANCELED;
    return FinishOneSided(lock, Nd2RequestTypeRead, ctx, flags, status, was_connected);
}

HRESULT ShmPath::PostWrite(void *ctx, const ND2_SGE *sge, ULONG nsge, uint64_t total, UINT64 raddr, UINT32 rtoken,
                           ULONG flags) {
    std::unique_lock<QpLock> lock(tx_mu_);
    ReapLocked();
    if (ops_.size() >= idepth_) return ND_NO_MORE_ENTRIES;
    if (state() == State::Connected && !conn_->can_access_peer && total > 0 &&
        ((flags & ND_OP_FLAG_INLINE) || LocalSgesValid(sge, nsge, 0, nullptr)))
        return PostStreamLocked(Stream::WriteFragments, Nd2RequestTypeWrite, ctx, sge, nsge,
                                static_cast<uint32_t>(total), flags, raddr, rtoken);
    bool was_connected = state() == State::Connected;
    HRESULT status = was_connected ? RemoteAccess(sge, nsge, raddr, rtoken, true, flags) : ND_CANCELED;
    return FinishOneSided(lock, Nd2RequestTypeWrite, ctx, flags, status, was_connected);
}

// An Invalidate's transfers under way end before it completes (R106): the
// ring's placements run under rx_mu_ (held from before the window goes, so
// none is half done after) and the peer's cross-memory copies are drained.
HRESULT ShmPath::PostLocal(ND2_REQUEST_TYPE type, void *ctx, ULONG flags, bool invalidate, LocalOp op) {
    std::unique_lock<QpLock> rx(rx_mu_, std::defer_lock);
    if (invalidate) rx.lock();
    std::unique_lock<QpLock> lock(tx_mu_);
    ReapLocked();
    if (ops_.size() >= idepth_) return ND_NO_MORE_ENTRIES;
    const bool was_connected = state() == State::Connected;
    const HRESULT status = was_connected ? op() : ND_CANCELED;
    if (invalidate && status == ND_SUCCESS && conn_ && conn_->channel) DrainPeerCopies(NowMs() + kQuiesceLimitMs);
    if (rx.owns_lock()) rx.unlock();  // a failure's flush takes it
    return FinishOneSided(lock, type, ctx, flags, status, was_connected);
}

}  // namespace soft
