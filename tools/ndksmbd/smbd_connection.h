// An SMB Direct ([MS-SMBD]) connection on the NDK API: negotiation, credits,
// upper-layer messages with fragmentation and reassembly, and bulk data by
// RDMA Read/Write through buffer descriptors.
//
// NDK use: one CQ (armed at all times; its notification callback drains it on
// the adapter's callback thread), one PD, one QP, one connector; the send and
// receive buffers are two registered MRs. RDMA buffers are exposed to the
// peer through memory windows bound on a registered MR and invalidated after
// use (by the peer's Send-and-Invalidate when the adapter has it, else
// locally).
//
// Credits (3.1.5.9): every message carries all the receive credits we can
// grant (receives posted, one spare never granted, minus those the peer
// holds). A message arriving when the peer holds none is a protocol error. An
// empty message grants credits when the peer asked (RESPONSE_REQUESTED, set
// on a message that leaves the sender unable to send on its own), holds
// none, or sent data while holding less than half its target. The last credit
// goes only with a message that grants some (3.1.5.1), so the two sides never
// both end with none (the rules: CanSendLocked in smbd_transfer.cpp).
//
// Threads: Send/Receive/RDMA calls from any application threads (not from
// NDK callbacks); `mu_` guards the state and serialises SQ posts; RQ posts
// happen on the callback thread only. Destroy a Connection from an ordinary
// thread: it disconnects and closes every NDK object with bounded waits.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "ndk_wait.h"
#include "smbd_wire.h"

namespace smbd {

class Connection;

// A buffer registered for RDMA (local SGEs, or memory windows for the peer).
struct Registration {
    NDK_MR *mr = nullptr;
    uint8_t *base = nullptr;
    size_t length = 0;
    MDL mdl{};
    // The buffer's logical address mapping, where the adapter has
    // fast-register MRs: ranges are exposed by NdkFastRegister over it.
    std::vector<uint64_t> lam_storage;
    NDK_LOGICAL_ADDRESS_MAPPING *lam = nullptr;
};

// One range of a Registration exposed to the peer (Expose ... Revoke): a
// fast-registered MR (as Windows' SMB Direct does), else a memory window.
struct Window {
    NDK_MW *mw = nullptr;
    NDK_MR *fast = nullptr;
    BufferDescriptor descriptor;
};

class Connection {
public:
    // Initiator: connect to `peer` and negotiate.
    static NTSTATUS Connect(NDK_ADAPTER *adapter, const sockaddr *peer, ULONG peer_length, const Limits &limits,
                            std::unique_ptr<Connection> *out, int timeout_ms = 10000);
    // Listener side: accept `connector` (from a connect event) and negotiate.
    static NTSTATUS Accept(NDK_ADAPTER *adapter, NDK_CONNECTOR *connector, const Limits &limits,
                           std::unique_ptr<Connection> *out, int timeout_ms = 10000);
    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    const Negotiated &negotiated() const { return negotiated_; }
    // STATUS_SUCCESS while usable; else why it failed (protocol error, peer gone).
    NTSTATUS status();
    uint16_t send_credits();
    uint64_t messages_sent();
    // Ranges exposed by fast registration so far (the rest by windows), and
    // the fast-register MRs made for them: invalidated ones are reused, as
    // Windows' SMB Direct keeps a pool of them per connection.
    uint64_t fast_registrations();
    uint64_t fast_mrs_made();
    // Ranges of ours the peer invalidated with its Send-and-Invalidate.
    uint64_t peer_invalidations();

    // One upper-layer message (fragmented to max_send_size, up to
    // max_fragmented_send_size). Waits for send credits: STATUS_IO_TIMEOUT if
    // the peer grants none in time. `invalidate_token`: ask the peer's adapter
    // to invalidate it on arrival (SMB2_CHANNEL_RDMA_V1_INVALIDATE).
    NTSTATUS Send(const void *data, size_t length, uint32_t invalidate_token = 0, int timeout_ms = 10000);
    // The next reassembled upper-layer message.
    NTSTATUS Receive(std::vector<uint8_t> *message, int timeout_ms = 10000);

    // RDMA (smbd_rdma.cpp).
    NTSTATUS Register(void *base, size_t length, Registration *out);
    NTSTATUS Deregister(Registration *r);
    NTSTATUS Expose(Registration *r, size_t offset, size_t length, bool peer_writes, Window *out);
    NTSTATUS Revoke(Window *w);  // invalidate (unless the peer did) and release
    // RDMA Read from / Write to the peer's described buffers, to/from `local`
    // (inside registration `r`), in order; returns once all completed.
    NTSTATUS RdmaRead(Registration *r, uint8_t *local, const BufferDescriptor *d, size_t count);
    NTSTATUS RdmaWrite(Registration *r, const uint8_t *local, const BufferDescriptor *d, size_t count);

private:
    struct Context;  // what a work request's RequestContext points to
    struct Op;       // an RDMA/bind/invalidate request being waited for

    Connection(NDK_ADAPTER *adapter, const Limits &limits);
    NTSTATUS CreateResources();
    void Start();
    NTSTATUS NegotiateAsInitiator(int timeout_ms);
    NTSTATUS NegotiateAsListener(int timeout_ms);
    NTSTATUS WaitNegotiateMessage(std::vector<uint8_t> *message, int timeout_ms);
    NTSTATUS PostRawSend(const uint8_t *bytes, size_t length);  // negotiate messages (no credit)

    // Callback side (smbd_transfer.cpp).
    static VOID OnCqNotify(PVOID context, NTSTATUS status);
    static VOID OnDisconnect(PVOID context);
    void Drain();
    void OnReceiveLocked(size_t slot, const NDK_RESULT_EX &r);
    void PostReceive(size_t slot);
    void TrySendGrantsLocked();
    uint16_t GrantableLocked() const;
    bool CanSendLocked() const;                            // credit rules (smbd_transfer.cpp)
    DataHeader CreditFieldsLocked(bool grant_only) const;  // a message's CreditsGranted and flags
    void MessageSentLocked(const DataHeader &h);
    NTSTATUS PostMessageLocked(size_t slot, const DataHeader &h, const uint8_t *payload, uint32_t invalidate_token);
    int FreeSendSlotLocked() const;
    bool SendsIdleLocked() const;
    void FailLocked(NTSTATUS why);
    NTSTATUS WaitOp(Op *op, int timeout_ms);
    // A fast-register MR for up to `capacity` pages (the same for every
    // call: the negotiated limits are fixed): an idle one from the pool,
    // else a new one initialised (smbd_rdma.cpp).
    NTSTATUS TakeFastMr(ULONG capacity, NDK_MR **out);
    NTSTATUS RdmaTransfer(bool read, Registration *r, uint8_t *local, const BufferDescriptor *d, size_t count);

    NDK_ADAPTER *adapter_;
    Limits limits_;
    Negotiated negotiated_;
    ULONG outbound_read_limit_ = 1;
    ULONG frmr_pages_ = 0;  // the adapter's FRMRPageCount (0: windows only)
    uint64_t fast_registrations_ = 0;
    uint64_t fast_mrs_made_ = 0;
    uint64_t peer_invalidations_ = 0;
    std::vector<NDK_MR *> idle_fast_mrs_;  // invalidated, ready for the next Expose (under mu_)
    NDK_CQ *cq_ = nullptr;
    NDK_PD *pd_ = nullptr;
    NDK_QP *qp_ = nullptr;
    NDK_CONNECTOR *connector_ = nullptr;
    bool connected_ = false;
    std::vector<uint8_t> send_memory_, receive_memory_;
    Registration send_pool_, receive_pool_;  // over the two buffers above
    std::vector<Context> send_ctx_, receive_ctx_;
    NdkWait connect_wait_, disconnect_wait_;

    std::mutex mu_;
    std::condition_variable cv_;  // credits, slots, inbox, ops, failure
    NTSTATUS failed_ = STATUS_SUCCESS;
    bool closing_ = false;
    bool negotiated_done_ = false;
    std::vector<uint8_t> negotiate_message_;
    bool negotiate_arrived_ = false;
    bool have_negotiate_message_ = false;
    std::vector<bool> send_busy_;
    uint32_t send_credits_ = 0;
    uint32_t granted_ = 1;      // credits the peer holds (1: the negotiate message)
    uint32_t posted_ = 0;       // receives posted
    uint16_t peer_target_ = 1;  // credits the peer asks for
    bool response_requested_ = false;
    bool data_since_grant_ = false;
    bool remote_invalidate_ = true;  // until NdkSendAndInvalidate says NOT_SUPPORTED
    std::set<uint32_t> invalidated_tokens_;
    std::vector<uint8_t> partial_;   // the upper-layer message being reassembled
    uint32_t partial_remaining_ = 0;
    std::deque<std::vector<uint8_t>> inbox_;
    uint64_t messages_sent_ = 0;
};

}  // namespace smbd
