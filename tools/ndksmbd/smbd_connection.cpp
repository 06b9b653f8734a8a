// SMB Direct connection setup: NDK resources, connect/accept, negotiation
// (3.1.5.6, 3.1.5.7) and teardown.
#include <algorithm>
#include <cstring>

#include "smbd_internal.h"

namespace smbd {

Connection::Connection(NDK_ADAPTER *adapter, const Limits &limits) : adapter_(adapter), limits_(limits) {}

Connection::~Connection() {
    bool disconnect;
    {
        std::lock_guard<std::mutex> lock(mu_);
        closing_ = true;
        disconnect = connected_;
        cv_.notify_all();
    }
    if (disconnect) {
        NdkWait wait;
        wait.Finish(connector_->Dispatch->NdkDisconnect(connector_, NdkWait::Request, &wait), 5000);
    }
    if (connector_) CloseNdk(connector_, connector_->Dispatch->NdkCloseConnector);
    if (qp_) CloseNdk(qp_, qp_->Dispatch->NdkCloseQp);
    for (NDK_MR *mr : idle_fast_mrs_) CloseNdk(mr, mr->Dispatch->NdkCloseMr);
    Deregister(&send_pool_);
    Deregister(&receive_pool_);
    if (pd_) CloseNdk(pd_, pd_->Dispatch->NdkClosePd);
    if (cq_) CloseNdk(cq_, cq_->Dispatch->NdkCloseCq);  // after this, no callback touches *this
}

NTSTATUS Connection::CreateResources() {
    if (limits_.receive_credit_max < 2 || limits_.send_credit_target == 0 || limits_.max_send_size < kMinReceiveSize ||
        limits_.max_receive_size < kMinReceiveSize || limits_.max_fragmented_size < kMinFragmentedSize)
        return STATUS_INVALID_PARAMETER;
    const NDK_ADAPTER_DISPATCH *d = adapter_->Dispatch;
    NDK_ADAPTER_INFO info{};
    ULONG info_size = sizeof info;
    if (NT_SUCCESS(d->NdkQueryAdapterInfo(adapter_, &info, &info_size))) frmr_pages_ = info.FRMRPageCount;
    const ULONG rq = limits_.receive_credit_max + 1u;  // one spare receive, never granted
    const ULONG sq = ULONG(kSendSlots) + kOpSlots;
    NTSTATUS s = d->NdkCreateCq(adapter_, rq + sq, OnCqNotify, this, nullptr, nullptr, nullptr, &cq_);
    if (!NT_SUCCESS(s)) return s;
    if (!NT_SUCCESS(s = d->NdkCreatePd(adapter_, nullptr, nullptr, &pd_))) return s;
    s = pd_->Dispatch->NdkCreateQp(pd_, cq_, cq_, this, rq, sq, 1, 1, 0, nullptr, nullptr, &qp_);
    if (!NT_SUCCESS(s)) return s;
    send_memory_.resize(kSendSlots * limits_.max_send_size);
    receive_memory_.resize(size_t(rq) * limits_.max_receive_size);
    if (!NT_SUCCESS(s = Register(send_memory_.data(), send_memory_.size(), &send_pool_))) return s;
    if (!NT_SUCCESS(s = Register(receive_memory_.data(), receive_memory_.size(), &receive_pool_))) return s;
    send_ctx_.resize(kSendSlots);
    send_busy_.assign(kSendSlots, false);
    receive_ctx_.resize(rq);
    for (size_t i = 0; i < send_ctx_.size(); ++i) send_ctx_[i] = Context{Context::Kind::Send, i, nullptr};
    for (size_t i = 0; i < receive_ctx_.size(); ++i) {
        receive_ctx_[i] = Context{Context::Kind::Receive, i, nullptr};
        PostReceive(i);
    }
    return status();
}

NTSTATUS Connection::Connect(NDK_ADAPTER *adapter, const sockaddr *peer, ULONG peer_length, const Limits &limits,
                             std::unique_ptr<Connection> *out, int timeout_ms) {
    std::unique_ptr<Connection> c(new Connection(adapter, limits));
    NTSTATUS s = c->CreateResources();
    if (!NT_SUCCESS(s)) return s;
    if (!NT_SUCCESS(s = adapter->Dispatch->NdkCreateConnector(adapter, nullptr, nullptr, &c->connector_))) return s;
    NDK_CONNECTOR *k = c->connector_;
    c->connect_wait_.Reset();
    s = k->Dispatch->NdkConnect(k, c->qp_, nullptr, 0, const_cast<sockaddr *>(peer), peer_length, kReadLimit,
                                kReadLimit, nullptr, 0, NdkWait::Request, &c->connect_wait_);
    if (!NT_SUCCESS(s = c->connect_wait_.Finish(s, timeout_ms))) return s;
    ULONG ird = 0, ord = 0, len = 0;
    k->Dispatch->NdkGetConnectionData(k, &ird, &ord, nullptr, &len);
    c->outbound_read_limit_ = std::max<ULONG>(1, ord);
    c->connect_wait_.Reset();
    s = k->Dispatch->NdkCompleteConnect(k, OnDisconnect, c.get(), NdkWait::Request, &c->connect_wait_);
    if (!NT_SUCCESS(s = c->connect_wait_.Finish(s, timeout_ms))) return s;
    c->Start();
    if (!NT_SUCCESS(s = c->NegotiateAsInitiator(timeout_ms))) return s;
    *out = std::move(c);
    return STATUS_SUCCESS;
}

NTSTATUS Connection::Accept(NDK_ADAPTER *adapter, NDK_CONNECTOR *connector, const Limits &limits,
                            std::unique_ptr<Connection> *out, int timeout_ms) {
    std::unique_ptr<Connection> c(new Connection(adapter, limits));
    c->connector_ = connector;  // ours from now on, whatever happens
    NTSTATUS s = c->CreateResources();
    if (!NT_SUCCESS(s)) return s;
    ULONG ird = 0, ord = 0, len = 0;
    connector->Dispatch->NdkGetConnectionData(connector, &ird, &ord, nullptr, &len);
    c->outbound_read_limit_ = std::max<ULONG>(1, std::min(ord, kReadLimit));
    c->connect_wait_.Reset();
    s = connector->Dispatch->NdkAccept(connector, c->qp_, kReadLimit, kReadLimit, nullptr, 0, OnDisconnect, c.get(),
                                       NdkWait::Request, &c->connect_wait_);
    if (!NT_SUCCESS(s = c->connect_wait_.Finish(s, timeout_ms))) return s;
    c->Start();
    if (!NT_SUCCESS(s = c->NegotiateAsListener(timeout_ms))) return s;
    *out = std::move(c);
    return STATUS_SUCCESS;
}

// Connected: arm the CQ, armed from now on (the callback re-arms). Arming
// only now (not when the CQ is created) also lets a provider that enables
// peer wake-ups on arming see this connection (ndsoft does so only when its
// CQs go from disarmed to armed).
void Connection::Start() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        connected_ = true;
    }
    cq_->Dispatch->NdkArmCq(cq_, NDK_CQ_NOTIFY_ANY);
}

NTSTATUS Connection::WaitNegotiateMessage(std::vector<uint8_t> *message, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return have_negotiate_message_ || failed_ != STATUS_SUCCESS; }))
        return STATUS_IO_TIMEOUT;
    if (!have_negotiate_message_) return failed_;
    *message = negotiate_message_;
    return STATUS_SUCCESS;
}

NTSTATUS Connection::NegotiateAsInitiator(int timeout_ms) {
    NegotiateRequest req;
    req.credits_requested = limits_.send_credit_target;
    req.preferred_send_size = limits_.max_send_size;
    req.max_receive_size = limits_.max_receive_size;
    req.max_fragmented_size = limits_.max_fragmented_size;
    uint8_t bytes[kNegotiateRequestSize];
    NTSTATUS s = PostRawSend(bytes, Encode(req, bytes));
    std::vector<uint8_t> response;
    if (NT_SUCCESS(s)) s = WaitNegotiateMessage(&response, timeout_ms);
    if (NT_SUCCESS(s)) s = AcceptNegotiateResponse(response.data(), response.size(), limits_, &negotiated_);
    std::lock_guard<std::mutex> lock(mu_);
    if (!NT_SUCCESS(s)) {
        FailLocked(s);  // 3.1.5.7: terminate the connection
        return s;
    }
    negotiated_done_ = true;
    send_credits_ = negotiated_.initial_send_credits;
    peer_target_ = negotiated_.receive_credit_target;
    TrySendGrantsLocked();  // the peer holds no credit yet: grant now
    return STATUS_SUCCESS;
}

NTSTATUS Connection::NegotiateAsListener(int timeout_ms) {
    std::vector<uint8_t> request;
    NTSTATUS s = WaitNegotiateMessage(&request, timeout_ms);
    if (!NT_SUCCESS(s)) return s;
    NegotiateResponse response;
    uint8_t bytes[kNegotiateResponseSize];
    {
        std::lock_guard<std::mutex> lock(mu_);
        s = AcceptNegotiateRequest(request.data(), request.size(), limits_, GrantableLocked(), &response,
                                   &negotiated_);
        if (s == STATUS_SUCCESS) {  // before the response goes: the next message is a data transfer
            negotiated_done_ = true;
            granted_ += response.credits_granted;
            peer_target_ = negotiated_.receive_credit_target;
        }
    }
    if (s == STATUS_SUCCESS || s == STATUS_NOT_SUPPORTED) {
        NTSTATUS sent = PostRawSend(bytes, Encode(response, bytes));
        if (s == STATUS_SUCCESS) return sent;
        std::unique_lock<std::mutex> lock(mu_);  // let the failure response leave before disconnecting
        cv_.wait_for(lock, std::chrono::seconds(2), [&] { return SendsIdleLocked() || failed_; });
    }
    std::lock_guard<std::mutex> lock(mu_);
    FailLocked(s);
    return s;
}

NTSTATUS Connection::PostRawSend(const uint8_t *bytes, size_t length) {
    std::lock_guard<std::mutex> lock(mu_);
    int slot = FreeSendSlotLocked();
    if (slot < 0) return STATUS_INSUFFICIENT_RESOURCES;
    uint8_t *buffer = send_pool_.base + size_t(slot) * limits_.max_send_size;
    std::memcpy(buffer, bytes, length);
    NDK_SGE sge{};
    sge.VirtualAddress = buffer;
    sge.Length = static_cast<ULONG>(length);
    sge.MemoryRegionToken = send_pool_.mr->Dispatch->NdkGetLocalTokenFromMr(send_pool_.mr);
    send_busy_[slot] = true;
    NTSTATUS s = qp_->Dispatch->NdkSend(qp_, &send_ctx_[slot], &sge, 1, 0);
    if (!NT_SUCCESS(s)) send_busy_[slot] = false;
    return s;
}

NTSTATUS Connection::status() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
}

uint16_t Connection::send_credits() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<uint16_t>(send_credits_);
}

uint64_t Connection::messages_sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_sent_;
}

uint64_t Connection::fast_registrations() {
    std::lock_guard<std::mutex> lock(mu_);
    return fast_registrations_;
}

uint64_t Connection::fast_mrs_made() {
    std::lock_guard<std::mutex> lock(mu_);
    return fast_mrs_made_;
}

uint64_t Connection::peer_invalidations() {
    std::lock_guard<std::mutex> lock(mu_);
    return peer_invalidations_;
}

void Connection::FailLocked(NTSTATUS why) {
    if (failed_ != STATUS_SUCCESS) return;
    failed_ = why;
    cv_.notify_all();
    // A protocol violation terminates the connection (the peer sees a
    // disconnect); a peer that left is disconnected by the destructor.
    if (why != STATUS_CONNECTION_DISCONNECTED && connected_ && !closing_) {
        disconnect_wait_.Reset();
        connector_->Dispatch->NdkDisconnect(connector_, NdkWait::Request, &disconnect_wait_);
        connected_ = false;
    }
}

}  // namespace smbd
