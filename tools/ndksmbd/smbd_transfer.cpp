// SMB Direct data transfer: the CQ notification callback (receives, credits,
// reassembly, send completions) and Send/Receive of upper-layer messages
// (3.1.4.1, 3.1.5.1, 3.1.5.8, 3.1.5.9).
#include <algorithm>
#include <cstring>

#include "smbd_internal.h"

namespace smbd {

// ---- callback thread ----

VOID Connection::OnCqNotify(PVOID context, NTSTATUS status) {
    Connection *c = static_cast<Connection *>(context);
    if (!NT_SUCCESS(status)) {  // the CQ overran or failed: it reports nothing more
        std::lock_guard<std::mutex> lock(c->mu_);
        c->FailLocked(status);
        return;
    }
    c->Drain();
    // Entries that arrived since the notification (and were not drained)
    // make this arm fire at once: nothing is missed.
    c->cq_->Dispatch->NdkArmCq(c->cq_, NDK_CQ_NOTIFY_ANY);
}

VOID Connection::OnDisconnect(PVOID context) {
    Connection *c = static_cast<Connection *>(context);
    std::lock_guard<std::mutex> lock(c->mu_);
    c->connected_ = false;  // the peer left; nothing to disconnect
    c->FailLocked(STATUS_CONNECTION_DISCONNECTED);
}

void Connection::Drain() {
    NDK_RESULT_EX results[16];
    for (;;) {
        ULONG n = cq_->Dispatch->NdkGetCqResultsEx(cq_, results, 16);
        std::vector<size_t> reposts;
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (ULONG i = 0; i < n; ++i) {
                const NDK_RESULT_EX &r = results[i];
                Context *ctx = static_cast<Context *>(r.RequestContext);
                if (r.Type == NdkOperationTypeReceiveAndInvalidate)
                    invalidated_tokens_.insert(static_cast<uint32_t>(r.TypeSpecificCompletionOutput));
                switch (ctx->kind) {
                case Context::Kind::Receive:
                    --posted_;
                    if (r.Status != STATUS_SUCCESS) {
                        if (!closing_) FailLocked(r.Status == STATUS_CANCELLED ? STATUS_CONNECTION_DISCONNECTED : r.Status);
                    } else if (failed_ == STATUS_SUCCESS && !closing_) {
                        OnReceiveLocked(ctx->index, r);
                        if (failed_ == STATUS_SUCCESS) reposts.push_back(ctx->index);
                    }
                    break;
                case Context::Kind::Send:
                    send_busy_[ctx->index] = false;
                    if (r.Status != STATUS_SUCCESS && !closing_) FailLocked(r.Status);
                    break;
                case Context::Kind::Op:
                    --ctx->op->pending;
                    if (r.Status != STATUS_SUCCESS && ctx->op->status == STATUS_SUCCESS) ctx->op->status = r.Status;
                    break;
                }
            }
            cv_.notify_all();
        }
        for (size_t slot : reposts) PostReceive(slot);
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (negotiate_arrived_) {  // all receives are posted again: the credits to grant are known
                negotiate_arrived_ = false;
                have_negotiate_message_ = true;
                cv_.notify_all();
            }
            TrySendGrantsLocked();
        }
        if (n < 16) return;
    }
}

void Connection::PostReceive(size_t slot) {
    NDK_SGE sge{};
    sge.VirtualAddress = receive_pool_.base + slot * limits_.max_receive_size;
    sge.Length = limits_.max_receive_size;
    sge.MemoryRegionToken = receive_pool_.mr->Dispatch->NdkGetLocalTokenFromMr(receive_pool_.mr);
    NTSTATUS s = qp_->Dispatch->NdkReceive(qp_, &receive_ctx_[slot], &sge, 1);
    std::lock_guard<std::mutex> lock(mu_);
    if (NT_SUCCESS(s)) {
        ++posted_;
        cv_.notify_all();  // one more credit to grant: a Send holding its last credit may go (CanSendLocked)
    } else {
        FailLocked(s);
    }
}

void Connection::OnReceiveLocked(size_t slot, const NDK_RESULT_EX &r) {
    const uint8_t *p = receive_pool_.base + slot * limits_.max_receive_size;
    const size_t length = r.BytesTransferred;
    if (granted_ == 0) return FailLocked(STATUS_INVALID_PARAMETER);  // sent without a credit
    --granted_;
    if (!negotiated_done_) {  // handed over once its receive is posted again (Drain)
        negotiate_message_.assign(p, p + length);
        negotiate_arrived_ = true;
        return;
    }
    DataHeader h;
    NTSTATUS s = CheckDataTransfer(p, length, limits_.max_fragmented_size, &h);
    if (!NT_SUCCESS(s)) return FailLocked(s);
    send_credits_ += h.credits_granted;
    peer_target_ = h.credits_requested;
    if (h.flags & kFlagResponseRequested) response_requested_ = true;
    if (h.data_length == 0) {
        if (h.remaining_data_length) FailLocked(STATUS_INVALID_PARAMETER);
        return;  // credits only (or a keepalive)
    }
    data_since_grant_ = true;
    // A fragment continues the message in progress: what it carries plus what
    // remains must be what remained before.
    if (partial_remaining_ != 0 && h.data_length + h.remaining_data_length != partial_remaining_)
        return FailLocked(STATUS_INVALID_PARAMETER);
    partial_.insert(partial_.end(), p + h.data_offset, p + h.data_offset + h.data_length);
    partial_remaining_ = h.remaining_data_length;
    if (partial_remaining_ == 0) {
        inbox_.push_back(std::move(partial_));
        partial_.clear();
    }
}

uint16_t Connection::GrantableLocked() const {
    // posted_ - 1: one receive stays ungranted, so a peer that sends without
    // a credit is caught by the protocol instead of hanging the adapter.
    uint32_t usable = posted_ > 0 ? posted_ - 1 : 0;
    usable = std::min<uint32_t>(usable, limits_.receive_credit_max);
    return usable > granted_ ? static_cast<uint16_t>(usable - granted_) : 0;
}

int Connection::FreeSendSlotLocked() const {
    for (size_t i = 0; i < send_busy_.size(); ++i)
        if (!send_busy_[i]) return static_cast<int>(i);
    return -1;
}

bool Connection::SendsIdleLocked() const {
    return std::none_of(send_busy_.begin(), send_busy_.end(), [](bool b) { return b; });
}

// Every message takes one of our credits, and every message is a chance to
// grant. Three rules keep both sides able to send. (A simulation of both
// sides, with messages in flight, reposts pending and sends racing, found
// sides waiting forever without rule 1 or 3, grant messages exchanged
// endlessly at receive_credit_max 2 without rule 2, and neither with all.)
//  1. The last credit goes only with a message that grants credits (MS-SMBD
//     3.1.5.1: "If Connection.SendCredits is 1 and the CreditsGranted field
//     of the message is 0, stop processing"). Without it both sides could end
//     with none for good: what we can grant is counted from receives posted
//     now, and receives that completed are reposted by the callback thread
//     after it releases mu_ (while Send may hold mu_ for a burst of
//     fragments), and the peer's messages not drained yet still count as
//     credits it holds; so fragments often grant nothing, and each side
//     spending its last credit on one left the connection silent (the
//     SmbdTransfer tests timed out in 15-25% of runs).
//  2. A message that leaves us one credit keeps one receive back from its
//     grant, so that credit can go later under rule 1 without help.
//  3. A message that leaves us unable to send on our own (no credit left, or
//     one and nothing to grant with it) asks for a response: only the peer can
//     give us credits or free one of our receives, and it may have no other
//     reason to send (a grant message as much as data: we may want to send
//     data later).
bool Connection::CanSendLocked() const {
    return send_credits_ > 1 || (send_credits_ == 1 && GrantableLocked() > 0);
}

DataHeader Connection::CreditFieldsLocked(bool grant_only) const {
    DataHeader h;
    h.credits_requested = limits_.send_credit_target;
    const uint16_t grantable = GrantableLocked();
    uint16_t grant = grantable;
    if (send_credits_ == 2 && grant > (grant_only ? 1 : 0)) --grant;  // rule 2
    h.credits_granted = grant;
    const uint32_t left = send_credits_ - 1;
    if (left == 0 || (left == 1 && grant == grantable)) h.flags |= kFlagResponseRequested;  // rule 3
    return h;
}

void Connection::MessageSentLocked(const DataHeader &h) {
    --send_credits_;
    granted_ += h.credits_granted;
    if (h.credits_granted) {  // only a grant answers the peer asking for credits
        response_requested_ = false;
        data_since_grant_ = false;
    }
}

void Connection::TrySendGrantsLocked() {
    if (!negotiated_done_ || failed_ != STATUS_SUCCESS || closing_ || send_credits_ == 0) return;
    const uint16_t grantable = GrantableLocked();
    // Nothing to grant: our view has the peer holding every credit we can
    // give, so it has messages on the way that free receives (we are called
    // again when they arrive). An empty grant would not help it, and could
    // take our last credit (rule 1).
    if (grantable == 0) return;
    const uint32_t half_target = std::min<uint32_t>(peer_target_, limits_.receive_credit_max) / 2;
    const bool peer_short = granted_ == 0 || (data_since_grant_ && granted_ < half_target);
    if (!response_requested_ && !(grantable >= 2 && peer_short)) return;
    int slot = FreeSendSlotLocked();
    if (slot < 0) return;  // retried when a send completes
    const DataHeader h = CreditFieldsLocked(true);
    if (NT_SUCCESS(PostMessageLocked(size_t(slot), h, nullptr, 0))) MessageSentLocked(h);
}

NTSTATUS Connection::PostMessageLocked(size_t slot, const DataHeader &h, const uint8_t *payload,
                                       uint32_t invalidate_token) {
    uint8_t *buffer = send_pool_.base + slot * limits_.max_send_size;
    size_t length = Encode(h, buffer);
    if (h.data_length) {
        std::memcpy(buffer + h.data_offset, payload, h.data_length);
        length = h.data_offset + h.data_length;
    }
    NDK_SGE sge{};
    sge.VirtualAddress = buffer;
    sge.Length = static_cast<ULONG>(length);
    sge.MemoryRegionToken = send_pool_.mr->Dispatch->NdkGetLocalTokenFromMr(send_pool_.mr);
    send_busy_[slot] = true;
    NTSTATUS s = STATUS_NOT_SUPPORTED;
    if (invalidate_token && remote_invalidate_) {
        s = qp_->Dispatch->NdkSendAndInvalidate(qp_, &send_ctx_[slot], &sge, 1, 0, invalidate_token);
        if (s == STATUS_NOT_SUPPORTED) remote_invalidate_ = false;  // the peer invalidates locally
    }
    if (s == STATUS_NOT_SUPPORTED) s = qp_->Dispatch->NdkSend(qp_, &send_ctx_[slot], &sge, 1, 0);
    if (!NT_SUCCESS(s)) send_busy_[slot] = false;
    return s;
}

// ---- application threads ----

NTSTATUS Connection::Send(const void *data, size_t length, uint32_t invalidate_token, int timeout_ms) {
    if (length == 0 || length > negotiated_.max_fragmented_send_size) return STATUS_INVALID_PARAMETER;
    const auto *bytes = static_cast<const uint8_t *>(data);
    const size_t chunk = negotiated_.max_send_size - kDataOffset;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::unique_lock<std::mutex> lock(mu_);
    for (size_t sent = 0; sent < length;) {
        bool ready = cv_.wait_until(lock, deadline, [&] {
            return failed_ != STATUS_SUCCESS || closing_ || (CanSendLocked() && FreeSendSlotLocked() >= 0);
        });
        if (failed_ != STATUS_SUCCESS) return failed_;
        if (closing_) return STATUS_CANCELLED;
        if (!ready) return STATUS_IO_TIMEOUT;  // no credit granted in time
        DataHeader h = CreditFieldsLocked(false);
        h.data_offset = kDataOffset;
        h.data_length = static_cast<uint32_t>(std::min(chunk, length - sent));
        h.remaining_data_length = static_cast<uint32_t>(length - sent - h.data_length);
        NTSTATUS s = PostMessageLocked(size_t(FreeSendSlotLocked()), h, bytes + sent,
                                       h.remaining_data_length == 0 ? invalidate_token : 0);
        if (!NT_SUCCESS(s)) return s;
        MessageSentLocked(h);
        sent += h.data_length;
    }
    ++messages_sent_;
    return STATUS_SUCCESS;
}

NTSTATUS Connection::Receive(std::vector<uint8_t> *message, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    bool ready = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                              [&] { return !inbox_.empty() || failed_ != STATUS_SUCCESS || closing_; });
    if (!inbox_.empty()) {  // messages that arrived before a failure are still delivered
        *message = std::move(inbox_.front());
        inbox_.pop_front();
        return STATUS_SUCCESS;
    }
    if (failed_ != STATUS_SUCCESS) return failed_;
    return ready ? STATUS_CANCELLED : STATUS_IO_TIMEOUT;
}

}  // namespace smbd
