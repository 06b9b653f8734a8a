// SMB Direct bulk data: registrations, buffer descriptors through
// fast-registered MRs (or memory windows where the adapter has none), RDMA
// Read/Write against the peer's descriptors (the SMB2 READ and WRITE data
// path with SMB2_CHANNEL_RDMA_V1[_INVALIDATE]).
#include <algorithm>
#include <memory>

#include "smbd_internal.h"

namespace smbd {

NTSTATUS Connection::Register(void *base, size_t length, Registration *out) {
    *out = Registration{};
    NTSTATUS s = pd_->Dispatch->NdkCreateMr(pd_, FALSE, nullptr, nullptr, &out->mr);
    if (!NT_SUCCESS(s)) return s;
    out->base = static_cast<uint8_t *>(base);
    out->length = length;
    MmInitializeMdl(&out->mdl, base, length);
    NdkWait wait;
    s = out->mr->Dispatch->NdkRegisterMr(out->mr, &out->mdl, length,
                                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                                         NdkWait::Request, &wait);
    s = wait.Finish(s, 10000);
    if (!NT_SUCCESS(s)) {
        CloseNdk(out->mr, out->mr->Dispatch->NdkCloseMr);  // also answers a late register callback
        out->mr = nullptr;
        return s;
    }
    // Its pages' logical addresses, for fast registration (synchronous;
    // without them, ranges are exposed through windows).
    if (frmr_pages_) {
        const NDK_ADAPTER_DISPATCH *d = adapter_->Dispatch;
        ULONG size = 0, fbo = 0;
        if (d->NdkBuildLAM(adapter_, &out->mdl, length, nullptr, nullptr, nullptr, &size, &fbo) ==
            STATUS_BUFFER_TOO_SMALL) {
            out->lam_storage.resize((size + 7) / 8);
            auto *lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(out->lam_storage.data());
            if (d->NdkBuildLAM(adapter_, &out->mdl, length, nullptr, nullptr, lam, &size, &fbo) == STATUS_SUCCESS)
                out->lam = lam;
        }
    }
    return STATUS_SUCCESS;
}

NTSTATUS Connection::Deregister(Registration *r) {
    if (r->lam) adapter_->Dispatch->NdkReleaseLAM(adapter_, r->lam);
    r->lam = nullptr;
    if (!r->mr) return STATUS_SUCCESS;
    NdkWait wait;
    wait.Finish(r->mr->Dispatch->NdkDeregisterMr(r->mr, NdkWait::Request, &wait), 10000);
    NTSTATUS s = CloseNdk(r->mr, r->mr->Dispatch->NdkCloseMr);
    r->mr = nullptr;
    return s;
}

NTSTATUS Connection::WaitOp(Op *op, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    // Completions of a failed connection still come (flushed): wait for all of
    // them so nothing refers to `op` after this returns.
    if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return op->pending == 0; }))
        return STATUS_IO_TIMEOUT;
    return op->status != STATUS_SUCCESS ? op->status : failed_;
}

NTSTATUS Connection::TakeFastMr(ULONG capacity, NDK_MR **out) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!idle_fast_mrs_.empty()) {
            *out = idle_fast_mrs_.back();
            idle_fast_mrs_.pop_back();
            return STATUS_SUCCESS;
        }
    }
    NTSTATUS s = pd_->Dispatch->NdkCreateMr(pd_, TRUE, nullptr, nullptr, out);
    if (!NT_SUCCESS(s)) return s;
    NdkWait wait;  // (OpenND's NDK completes it inline; a provider may pend it)
    s = wait.Finish((*out)->Dispatch->NdkInitializeFastRegisterMr(*out, capacity, TRUE, NdkWait::Request, &wait),
                    10000);
    if (!NT_SUCCESS(s)) {
        CloseNdk(*out, (*out)->Dispatch->NdkCloseMr);
        *out = nullptr;
        return s;
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++fast_mrs_made_;
    return STATUS_SUCCESS;
}

// As Windows' SMB Direct does: a fast-register MR over the range's pages
// (at the range's own address), else a window bound over the registration.
// The MRs are initialised once for the largest range a transfer exposes and
// reused once invalidated (Revoke).
NTSTATUS Connection::Expose(Registration *r, size_t offset, size_t length, bool peer_writes, Window *out) {
    *out = Window{};
    if (offset + length > r->length || length == 0 || length > negotiated_.max_read_write_size)
        return STATUS_INVALID_PARAMETER;
    uint8_t *at = r->base + offset;
    const ULONG flags = peer_writes ? NDK_OP_FLAG_ALLOW_REMOTE_WRITE : NDK_OP_FLAG_ALLOW_REMOTE_READ;
    const auto first = reinterpret_cast<uintptr_t>(at) & ~uintptr_t(PAGE_SIZE - 1);
    const ULONG fbo = static_cast<ULONG>(reinterpret_cast<uintptr_t>(at) - first);
    const ULONG pages = static_cast<ULONG>((fbo + length + PAGE_SIZE - 1) / PAGE_SIZE);
    // Pages of the largest range: max_read_write_size from any first byte offset.
    const size_t most = (negotiated_.max_read_write_size + 2 * PAGE_SIZE - 2) / PAGE_SIZE;
    const auto capacity = static_cast<ULONG>(std::min<size_t>(frmr_pages_, most));
    const bool fast = r->lam && pages <= capacity;
    NTSTATUS s = STATUS_SUCCESS;
    if (fast) {
        s = TakeFastMr(capacity, &out->fast);
    } else {
        s = pd_->Dispatch->NdkCreateMw(pd_, nullptr, nullptr, &out->mw);
    }
    auto op = std::make_unique<Op>();
    if (NT_SUCCESS(s)) {
        std::lock_guard<std::mutex> lock(mu_);  // SQ posts are serialised by mu_
        if (fast) {
            const size_t index = (first - static_cast<uintptr_t>(r->lam->AdapterPageArray[0].QuadPart)) / PAGE_SIZE;
            s = qp_->Dispatch->NdkFastRegister(qp_, &op->ctx, out->fast, pages, &r->lam->AdapterPageArray[index], fbo,
                                               length, at, flags);
        } else {
            s = qp_->Dispatch->NdkBind(qp_, &op->ctx, r->mr, out->mw, at, length, flags);
        }
        if (NT_SUCCESS(s)) op->pending = 1;
        if (NT_SUCCESS(s) && fast) ++fast_registrations_;
    }
    if (NT_SUCCESS(s)) s = WaitOp(op.get(), 10000);
    if (s == STATUS_IO_TIMEOUT) op.release();  // a late completion may still name it
    if (!NT_SUCCESS(s)) {
        if (out->fast) CloseNdk(out->fast, out->fast->Dispatch->NdkCloseMr);
        if (out->mw) CloseNdk(out->mw, out->mw->Dispatch->NdkCloseMw);
        *out = Window{};
        return s;
    }
    out->descriptor.offset = reinterpret_cast<uint64_t>(at);
    out->descriptor.token = fast ? out->fast->Dispatch->NdkGetRemoteTokenFromMr(out->fast)
                                 : out->mw->Dispatch->NdkGetRemoteTokenFromMw(out->mw);
    out->descriptor.length = static_cast<uint32_t>(length);
    return STATUS_SUCCESS;
}

NTSTATUS Connection::Revoke(Window *w) {
    if (!w->mw && !w->fast) return STATUS_SUCCESS;
    NDK_OBJECT_HEADER *target = w->fast ? &w->fast->Header : &w->mw->Header;
    NTSTATUS s = STATUS_SUCCESS;
    auto op = std::make_unique<Op>();
    bool posted = false;  // op->pending itself is the dispatcher's to change (under mu_)
    bool by_peer;
    {
        std::lock_guard<std::mutex> lock(mu_);
        // Already invalidated by the peer's Send-and-Invalidate? Else do it here.
        by_peer = invalidated_tokens_.erase(w->descriptor.token) != 0;
        if (by_peer) ++peer_invalidations_;
        if (!by_peer && failed_ == STATUS_SUCCESS) {
            s = qp_->Dispatch->NdkInvalidate(qp_, &op->ctx, target, 0);
            posted = NT_SUCCESS(s);
            if (posted) op->pending = 1;
        }
    }
    if (posted) s = WaitOp(op.get(), 10000);
    if (s == STATUS_IO_TIMEOUT) op.release();
    NTSTATUS closed = STATUS_SUCCESS;
    // Invalidated here or by the peer (its token is dead either way): ready
    // for the next range.
    if (w->fast && ((posted && NT_SUCCESS(s)) || by_peer)) {
        std::lock_guard<std::mutex> lock(mu_);
        idle_fast_mrs_.push_back(w->fast);
    } else {
        closed = w->fast ? CloseNdk(w->fast, w->fast->Dispatch->NdkCloseMr) : CloseNdk(w->mw, w->mw->Dispatch->NdkCloseMw);
    }
    w->mw = nullptr;
    w->fast = nullptr;
    return NT_SUCCESS(s) ? closed : s;
}

// Posts the transfers in order, at most `window` in flight (Reads are also
// bounded by the outbound read limit the connection negotiated).
NTSTATUS Connection::RdmaTransfer(bool read, Registration *r, uint8_t *local, const BufferDescriptor *d,
                                  size_t count) {
    const size_t piece = std::max<size_t>(1, negotiated_.max_read_write_size);
    const int window = read ? int(std::min<ULONG>(outbound_read_limit_, kOpSlots)) : int(kOpSlots / 2);
    const UINT32 token = r->mr->Dispatch->NdkGetLocalTokenFromMr(r->mr);
    auto op = std::make_unique<Op>();
    NTSTATUS s = STATUS_SUCCESS;
    size_t at = 0;  // offset in `local`
    for (size_t i = 0; i < count && NT_SUCCESS(s); ++i) {
        for (size_t done = 0; done < d[i].length && NT_SUCCESS(s);) {
            const size_t n = std::min<size_t>(piece, d[i].length - done);
            if (local + at + n > r->base + r->length || local + at < r->base) return STATUS_INVALID_PARAMETER;
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [&] { return op->pending < window; });  // every posted request completes
            if (failed_ != STATUS_SUCCESS || op->status != STATUS_SUCCESS) {
                s = op->status != STATUS_SUCCESS ? op->status : failed_;
                break;
            }
            NDK_SGE sge{};
            sge.VirtualAddress = local + at;
            sge.Length = static_cast<ULONG>(n);
            sge.MemoryRegionToken = token;
            s = read ? qp_->Dispatch->NdkRead(qp_, &op->ctx, &sge, 1, d[i].offset + done, d[i].token, 0)
                     : qp_->Dispatch->NdkWrite(qp_, &op->ctx, &sge, 1, d[i].offset + done, d[i].token, 0);
            if (NT_SUCCESS(s)) ++op->pending;
            done += n;
            at += n;
        }
    }
    NTSTATUS waited = WaitOp(op.get(), 30000);
    if (waited == STATUS_IO_TIMEOUT) op.release();
    return NT_SUCCESS(s) ? waited : s;
}

NTSTATUS Connection::RdmaRead(Registration *r, uint8_t *local, const BufferDescriptor *d, size_t count) {
    return RdmaTransfer(true, r, local, d, count);
}

NTSTATUS Connection::RdmaWrite(Registration *r, const uint8_t *local, const BufferDescriptor *d, size_t count) {
    return RdmaTransfer(false, r, const_cast<uint8_t *>(local), d, count);
}

}  // namespace smbd
