// The RDMAP/DDP messaging engine for one connection, pure logic: no socket,
// no thread, no lock (one caller at a time). The provider feeds it the
// bytes read from TCP (Receive), writes out what it produces (Pull), posts
// work (Post*) and polls completions.
//
// Transmit: Sends, RDMA Writes and Read Requests leave in posting order,
// Read Responses in request order; whole messages alternate between the two
// queues (never interleaved segment by segment: Linux siw refuses that
// within tagged or untagged traffic). Messages are cut into FPDUs of at most
// the MSS. A Read waits while ORD Reads are outstanding. A Send or Write
// is done when its last FPDU has been handed out by Pull (iWARP has no
// acknowledgement; as on iWARP hardware), a Read when its last response has
// been placed; send-queue completions are delivered in posting order.
//
// Receive: Sends land in posted receive buffers by MSN and offset and
// complete in MSN order; tagged segments are checked through Placement
// before placement; Read Requests beyond IRD, bad offsets, lengths or STags
// end the stream with a Terminate (local_fault()); a Terminate from the
// peer fails the in-flight operations (remote_terminate()).
//
// Connection setup rules carried over from the handshake (Negotiated): the
// initiator's first FPDU is the RTR when one was negotiated; the responder
// transmits nothing until the initiator's first FPDU (the RTR) has arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "iwarp/bytes.h"
#include "iwarp/fpdu.h"
#include "iwarp/handshake.h"
#include "iwarp/placement.h"
#include "iwarp/status.h"
#include "iwarp/terminate.h"

namespace iwarp {

struct EngineOptions {
    uint32_t mss = 1460;               // outbound FPDUs never exceed this (rounded down to 4, >= 64)
    size_t max_inbound_ulpdu = kMaxUlpduLength;
    bool strict = true;                // reject reserved bits (FpduOptions::strict)
    bool stall_on_missing_receive = true;  // hold the stream (Receive returns Stalled) until
                                           // PostReceive + Resume; false: Terminate at once
    // Sends and Writes complete only once the peer has shown it took them:
    // a later Read Response (the peer handles its stream in order) confirms
    // everything posted before that Read; when nothing else would, the
    // engine issues a zero-length "fence" Read. A Terminate then fails the
    // very operation it names (ND wants an access violation on the Write
    // that caused it). Needs ORD >= 1; with ORD 0 operations complete when
    // handed to Pull, as on iWARP hardware.
    bool confirm_by_read = false;
    size_t max_send_queue = 4096;
    size_t max_receive_queue = 4096;
    // With CRC off, a Write, Read Response or Send FPDU with at least this
    // much payload that has not arrived whole is placed piece by piece as it
    // arrives, and its payload may be read straight into place
    // (DirectBuffers). 0: never.
    size_t piece_min = 4096;
};

enum class OpStatus : uint8_t {
    Success,
    RemoteAccessError,     // the peer terminated with a protection error (ND_ACCESS_VIOLATION)
    RemoteOperationError,  // the peer terminated for another reason
    LocalLengthError,      // an inbound Send was longer than this receive buffer
    LocalAccessError,      // this receive's buffer was no longer usable when a Send arrived
    RemoteNoReceive,       // the peer terminated: this Send found no receive buffer (ND_IO_TIMEOUT)
    ProtocolError,         // in flight when we terminated the stream for the peer's fault
    Flushed,               // never ran: the connection failed first (ND_CANCELED)
};
const char *OpStatusName(OpStatus s);

enum class CompletionKind : uint8_t { Send, Write, Read, Receive };

struct Completion {
    CompletionKind kind = CompletionKind::Send;
    uint64_t id = 0;
    OpStatus status = OpStatus::Success;
    uint32_t length = 0;        // Receive: bytes placed; Send/Write/Read: message length
    bool solicited = false;     // Receive: Send with Solicited Event
    bool invalidated = false;   // Receive: Send with Invalidate, `invalidated_stag` invalidated
    uint32_t invalidated_stag = 0;
};

struct SendFlags {
    bool solicited = false;
    bool invalidate = false;
    uint32_t invalidate_stag = 0;
    // confirm_by_read: the caller needs no prompt word of success (ND's
    // SILENT_SUCCESS), so no fence Read is issued for this operation alone;
    // a later Read, a fence for another operation or RequestConfirmation
    // confirms it. A failure is still reported (the peer's Terminate).
    bool lazy_confirm = false;
};

enum class RxStatus : uint8_t { Ok, Stalled, Failed };
struct RxResult {
    size_t consumed = 0;
    RxStatus status = RxStatus::Ok;
};

class Engine {
public:
    Engine(const Negotiated &negotiated, Placement &placement, const EngineOptions &options = {});
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // ---- posting: false once the connection failed or the queue is full ----
    bool PostSend(uint64_t id, std::span<const ConstBuffer> sgl, SendFlags flags = {});
    bool PostWrite(uint64_t id, std::span<const ConstBuffer> sgl, uint32_t stag, uint64_t to,
                   bool lazy_confirm = false);  // as SendFlags::lazy_confirm
    // Reads `length` bytes at source_stag/source_to of the peer into our
    // sink_stag/sink_to (checked with Access::LocalWrite as responses land).
    bool PostRead(uint64_t id, uint32_t sink_stag, uint64_t sink_to, uint32_t length, uint32_t source_stag,
                  uint64_t source_to);
    bool PostReceive(uint64_t id, std::span<const MutableBuffer> sgl);

    // ---- the stream ----
    // Inbound bytes. Stalled: a Send found no receive buffer; everything up
    // to and including it was consumed and kept; post a receive, then Resume.
    // Failed: the stream is over (bytes are discarded from then on).
    RxResult Receive(std::span<const uint8_t> bytes);
    RxStatus Resume();
    // Reading straight into registered memory (CRC off). While a long
    // segment is open, DirectBuffers names where its next payload bytes go
    // (at most `max` buffers: the Write's target, the Read's sink or the
    // posted receive, checked through Placement just now; the segment's
    // last byte is left to Receive, which stores it last);
    // 0: read into your own buffer and call Receive. The caller reads the
    // stream into those buffers, then reports how much with DirectPlaced.
    size_t DirectBuffers(MutableBuffer *out, size_t max);
    void DirectPlaced(size_t n);
    // How many bytes to read next into a buffer of `room` bytes: with a
    // segment open, the rest of its FPDU and the next FPDU's header only,
    // so a long payload that follows can go straight into place too.
    size_t ReadHint(size_t room) const;
    // The same read may go on past `direct` bytes named by DirectBuffers:
    // how many more bytes it may take into a buffer of `room` for Receive
    // (the segment's last byte, its pad and CRC, the next header). 0 when
    // the direct buffers stop short of that last byte.
    size_t ReadHintAfter(size_t direct, size_t room) const;
    // Appends whole FPDUs while they fit in `budget` (at least one if any is
    // ready); returns the bytes appended.
    size_t Pull(std::vector<uint8_t> *out, size_t budget);
    // As Pull, but with CRC off payloads are named, not copied: those of
    // Sends and Writes when confirm_by_read is on (their buffers then stay
    // valid until the peer has shown it took everything), and those of Read
    // Responses that Placement::TaggedSource names (the caller must copy
    // what it has not sent before that memory may go). The bytes to send
    // are `pieces` in order; a piece with data == nullptr is `length` bytes
    // at `offset` in *own (headers, pads, CRCs, copied payloads).
    struct TxPiece {
        size_t offset;
        const uint8_t *data;
        size_t length;
    };
    size_t PullGather(std::vector<uint8_t> *own, std::vector<TxPiece> *pieces, size_t budget);
    bool WantsToSend() const;

    bool PollCompletion(Completion *c);

    // Holds all transmission (a Terminate excepted) until released. For the
    // initiator facing a Linux 6.1 siw server: siw sends its MPA reply and
    // only then installs its RTR receive upcall, so an RTR landing in that
    // window is not noticed until more data arrives. Hold for ~0.3 s after
    // the reply, then release (the provider owns the clock).
    void HoldTransmit(bool hold) { hold_ = hold; }
    bool transmit_held() const { return hold_; }

    // A stalled Send (no receive posted) waited too long: terminate the
    // stream with DDP "no buffer" naming that Send, so its sender can tell.
    void FailStalled();

    // Ends the connection from this side: every operation completes Flushed;
    // with `send_terminate`, Pull hands out a Terminate (RDMAP catastrophic).
    void Abort(bool send_terminate);

    // confirm_by_read: the peer closed its stream in order (no Terminate)
    // after its transport acknowledged every byte we sent. What is on the
    // wire waiting for a confirming Read was taken, as an RNIC that
    // completes on the transport's acknowledgment would say: it completes
    // Success, up to the first Read of ours still unanswered (that one and
    // what follows it are then flushed by Abort, in order).
    void ConfirmTaken();

    // ---- state ----
    bool failed() const { return failed_; }
    bool stalled() const { return stalled_; }
    bool established() const { return !awaiting_first_fpdu_; }  // responder: RTR / first FPDU in
    const Fault &local_fault() const { return local_fault_; }
    const std::optional<TerminateMessage> &remote_terminate() const { return remote_terminate_; }
    const Negotiated &negotiated() const { return negotiated_; }
    size_t max_fpdu() const { return max_fpdu_; }
    size_t max_payload(bool tagged) const;
    size_t outstanding_reads() const { return orq_.size(); }  // ours, in flight (<= ORD)
    size_t inbound_reads() const { return irq_.size(); }      // the peer's, queued (<= IRD)
    size_t unconfirmed() const { return unconfirmed_.size(); } // sent, waiting for a Read to confirm
    // Read Responses with a bad CRC dropped as answers to our zero-length
    // Reads (FpduOptions::crc_failed_read_responses).
    uint64_t dropped_bad_crc() const { return dropped_bad_crc_; }
    // confirm_by_read: have what is unconfirmed (lazy operations included)
    // confirmed by a fence Read if no other Read does.
    void RequestConfirmation() { confirm_requested_ = true; }

private:
    enum class OpKind : uint8_t { Send, Write, Read, Rtr, Fence };
    enum class Source : uint8_t { None, Sq, Irq };
    enum class Step : uint8_t { Done, Stall };

    struct SqOp {
        OpKind kind = OpKind::Send;
        uint64_t id = 0;
        uint64_t slot = 0;               // completion slot (not for the RTR)
        std::vector<ConstBuffer> sgl;
        size_t total = 0;
        size_t sent = 0;
        size_t sge = 0, sge_offset = 0;  // gather cursor
        Opcode opcode = Opcode::Send;
        uint32_t rsvd = 0;               // Invalidate STag
        uint32_t stag = 0;
        uint64_t to = 0;
        uint32_t msn = 0;
        ReadRequest read;
        uint64_t covers = 0;             // Reads: confirms slots below this
        bool lazy_confirm = false;       // Sends and Writes: see SendFlags
    };
    struct OrqEntry {  // our Read, waiting for its response
        uint64_t id = 0;
        uint64_t slot = 0;
        uint64_t covers = 0;
        bool internal = false;  // the RTR or a fence: no completion
        uint32_t msn = 0;
        ReadRequest read;
        uint32_t received = 0;
    };
    struct IrqEntry {  // the peer's Read, answered by Read Responses
        ReadRequest read;
        uint32_t sent = 0;
        uint8_t header_length = 0;
        uint8_t header[sizeof(UntaggedHeader) + sizeof(ReadRequestHeader)] = {};
        uint16_t ulpdu_length = 0;
    };
    struct SqSlot {  // a send-queue completion, delivered in posting order
        CompletionKind kind = CompletionKind::Send;
        uint64_t id = 0;
        bool done = false;
        OpStatus status = OpStatus::Success;
        uint32_t length = 0;
    };
    struct Unconfirmed {  // a Send or Write on the wire, not yet confirmed
        uint64_t slot = 0;
        uint32_t length = 0;
        bool tagged = false;
        uint32_t stag = 0;  // Write: sink STag and [to, end)
        uint64_t to = 0, end = 0;
        uint32_t msn = 0;   // Send
    };
    struct RqEntry {
        uint64_t id = 0;
        std::vector<MutableBuffer> sgl;
        size_t capacity = 0;
        uint32_t received = 0;
        size_t sge = 0, sge_offset = 0;  // scatter cursor
        bool done = false, solicited = false, invalidated = false;
        uint32_t invalidated_stag = 0;
    };

    // engine_tx.cpp
    Source PickSource() const;
    size_t NextFpduSize(Source s) const;
    size_t PullInto(std::vector<uint8_t> *out, size_t budget);
    void EmitSq(std::vector<uint8_t> *out);
    void CloseOwnedRun(std::vector<uint8_t> *out);
    void EmitIrq(std::vector<uint8_t> *out);
    bool Confirming() const { return options_.confirm_by_read && negotiated_.ord > 0; }
    bool NeedFence() const;
    void QueueFence();
    void ConfirmBelow(uint64_t covers);
    // engine_rx.cpp
    Step Dispatch(const Segment &s);
    bool AcceptFirstFpdu(const Segment &s, bool *consumed);
    Step OnSend(const Segment &s);
    static constexpr int64_t kNoReceive = -2;
    int64_t SendReceive(const Segment &s, size_t len, bool fault = true);
    static void Scatter(RqEntry &e, const uint8_t *src, size_t n);
    // engine_pieces.cpp
    void OnOpened(const Segment &s);
    // engine_tagged.cpp
    bool CheckTaggedRange(const Segment &s, uint32_t len);
    void OnWrite(const Segment &s);
    void OnReadRequest(const Segment &s);
    void OnReadResponse(const Segment &s);
    // engine_error.cpp
    void LocalFault(const Fault &f, int64_t failed_rq = -1);
    void FaultOn(Errc e, const Segment &s, bool read_source = false, int64_t failed_rq = -1);
    void OnTerminate(const Segment &s);
    void FailAll(OpStatus in_flight, OpStatus queued, int64_t failed_rq = -1);
    // Settles what a received Terminate names: operations before the culprit
    // were taken (Success), the culprit gets `status`, later ones Flushed.
    void SettleCulprit(const TerminateMessage &m, OpStatus status);
    void Complete(CompletionKind kind, uint64_t id, OpStatus status, uint32_t length);
    uint64_t AddSlot(CompletionKind kind, uint64_t id);
    void CompleteSlot(uint64_t slot, OpStatus status, uint32_t length);

    Negotiated negotiated_;
    Placement &placement_;
    EngineOptions options_;
    size_t max_fpdu_ = 0;
    FpduDecoder decoder_;

    std::deque<SqOp> sq_;
    std::deque<OrqEntry> orq_;
    std::deque<IrqEntry> irq_;
    std::deque<RqEntry> rq_;       // rq_[i] takes MSN rx_msn_[kQueueSend] + i
    std::deque<SqSlot> slots_;     // slots_[i] is slot slot_base_ + i
    std::deque<Unconfirmed> unconfirmed_;
    uint64_t dropped_bad_crc_ = 0;
    uint64_t cover_ = 0;           // a Read queued or sent confirms every slot below this
    uint64_t urgent_below_ = 0;    // an operation below this slot wants prompt confirmation
    bool confirm_requested_ = false;
    uint64_t slot_base_ = 0;
    std::deque<Completion> cq_;
    uint32_t tx_msn_[kQueueCount] = {1, 1, 1};
    uint32_t rx_msn_[kQueueCount] = {1, 1, 1};
    Source current_ = Source::None;  // queue whose head message is partly sent
    std::vector<TxPiece> *gather_ = nullptr;  // PullGather in progress
    size_t gather_from_ = 0;                  // start of the owned bytes not yet in *gather_
    size_t gather_named_ = 0;                 // payload bytes named by reference so far
    Source last_ = Source::Sq;       // alternate between queues at message boundaries (IRQ first)

    bool awaiting_first_fpdu_ = false;
    bool hold_ = false;
    bool stalled_ = false;
    bool failed_ = false;
    Fault local_fault_;
    std::optional<TerminateMessage> remote_terminate_;
    std::vector<uint8_t> terminate_out_;  // a Terminate FPDU waiting for Pull
};

}  // namespace iwarp
