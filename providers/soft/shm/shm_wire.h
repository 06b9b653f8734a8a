// Layouts shared between processes: the connection-management messages sent
// over the CM socket, the connection's shared-memory channel and the
// memory-region table a process publishes to its peers. Every layout starts
// with magic, version and size, and is pinned by static_assert: a change is
// a version bump, never a silent reinterpretation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace soft {

// 2: copy-through-ring messages (no cross-memory attach); 3: the channel's
// remote_access counters (Deregister waits for the peer's cross-memory copies);
// 4: the channel and MR table memfds are sealed against resizing; 5: the
// channel's closed flags (a gone queue pair admits no more copies); 6: the
// memory-region table is not sent, a peer that may attach to us fetches it;
// 7: the wake descriptor is an epoll instance around the sender's eventfd;
// 8: the channel's push requests (a large Send copied from both ends);
// 9: MR table entries carry a delta (windows addressed elsewhere than they lie);
// 10: InvalidateNext messages (Send with Invalidate).
constexpr uint16_t kWireVersion = 10;

// ---- connection management (SOCK_SEQPACKET, one message per record) ----
enum class CmType : uint16_t {
    Request = 1,   // active -> passive, with fds: channel, wake (epoll around the sender's eventfd)
    Accept = 2,    // passive -> active, with fds: wake
    Reject = 3,    // either way
    Ready = 4,     // active -> passive: CompleteConnect (ready to use)
    Disconnect = 5,
    Terminate = 6, // a fatal error on the connection (remote access violation)
};

constexpr uint16_t kCmFlagUsesSrq = 0x1;        // the sender's QP receives through an SRQ
constexpr uint16_t kCmFlagCanAccessPeer = 0x2;  // Accept/Ready: the sender can reach the receiver by CMA
constexpr uint32_t kCmMagic = 0x4F4E4443;  // "ONDC"
constexpr uint32_t kMaxPrivateData = 512;
constexpr uint32_t kAdvertisedPrivateData = 256;  // MaxCallerData and MaxCalleeData

struct CmMessage {
    uint32_t magic;
    uint16_t version;
    uint16_t size;  // sizeof(CmMessage)
    CmType type;
    uint16_t flags;            // kCmFlag*
    uint32_t pid;              // sender's process id
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint64_t qp_id;            // sender's QP identifier (window binding checks)
    uint64_t probe_address;    // Request/Accept: 8 bytes of kProbeMagic in the sender, for a CMA probe
    uint8_t peer_address[28];  // the address the sender sees itself as (sockaddr_in/_in6)
    uint32_t peer_address_len;
    int32_t status;            // Terminate: the error; Reject: 0
    // Request/Accept: the sender's descriptor of its memory-region table. A
    // peer that may attach to the sender's memory (ptrace access, as cross-
    // memory attach needs) takes it with pidfd_getfd; no other peer gets it.
    int32_t table_fd;
    uint32_t private_len;
    uint8_t private_data[kMaxPrivateData];
};
static_assert(sizeof(CmMessage) == 600, "CmMessage layout is part of the wire protocol");
static_assert(offsetof(CmMessage, table_fd) == 76, "CmMessage layout");
static_assert(offsetof(CmMessage, private_data) == 84, "CmMessage layout");

// ---- the connection's shared-memory channel ----
// Page 0: header. Then ring 0 (active -> passive) and ring 1 (passive -> active).
constexpr uint32_t kChannelMagic = 0x4F4E4443 ^ 0x01010101;
constexpr uint32_t kSlotSize = 64;
constexpr uint32_t kRingSlots = 4096;  // 256 KiB per direction

struct alignas(64) RingControl {
    std::atomic<uint64_t> head;  // producer: next slot to write
    char pad0[56];
    std::atomic<uint64_t> tail;  // consumer: next slot to read; slots below it are consumed
    char pad1[56];
};
static_assert(sizeof(RingControl) == 128, "RingControl layout");

// A large Send moved from both ends at once: the receiver pulls the first
// part of a SendCma message with process_vm_readv and asks the sender, here,
// to write the rest into its receive buffer with process_vm_writev (two
// cores copy; one copies about 12 GB/s here). Side s writes push[s] as a
// receiver; side 1 - s serves it as the sender. One at a time: the receiver
// settles each request before it completes that receive.
//
// state: the receiver fills the fields, then stores Pending. The sender
// claims with Pending -> Claimed (compare-exchange), copies, and stores Done
// or Failed. Once its own part is in, the receiver tries Pending ->
// Cancelled: if that works the sender never started and the receiver pulls
// the rest itself; if not, it waits for Done (Failed: it pulls the rest).
// So a sender that is not polling costs the receiver nothing but a try.
enum PushState : uint32_t { kPushIdle = 0, kPushPending = 1, kPushClaimed = 2, kPushDone = 3, kPushFailed = 4,
                            kPushCancelled = 5 };
constexpr uint32_t kMaxPushIov = 16;  // a receive's SGEs
struct PushIov {
    uint64_t address;  // in the receiver
    uint64_t length;
};
struct alignas(64) PushRequest {
    std::atomic<uint32_t> state;
    uint32_t niov;          // destination pieces in iov
    uint64_t send_pos;      // the SendCma message's position in the sender's ring
    uint64_t offset;        // where in the Send's data the part starts
    uint64_t length;        // bytes in the part (the sum of iov lengths)
    PushIov iov[kMaxPushIov];
};
static_assert(sizeof(PushRequest) == 320, "PushRequest layout");
static_assert(offsetof(PushRequest, iov) == 32, "PushRequest layout");

struct alignas(64) ChannelHeader {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint32_t total_size;
    uint32_t ring_slots;
    uint32_t slot_size;
    uint32_t ring_offset[2];
    uint32_t pid[2];             // 0 = active side, 1 = passive side
    char pad0[28];
    std::atomic<uint32_t> wake_wanted[2];  // side s sleeps and wants its wake eventfd written
    char pad1[56];
    RingControl ring[2];
    // Side s's cross-memory copies into or out of the other side's memory
    // now running (checked against the other side's MR table first). A
    // Deregister waits for the peer's to drain; on a line of its own so the
    // rings' readers do not share it.
    std::atomic<uint32_t> remote_access[2];
    // Side s's queue pair is gone: the other side makes no more copies into
    // or out of side s's memory (checked after announcing one in
    // remote_access, so a gone queue pair drains the last ones and then
    // needs no barrier of Deregister's to cover it).
    std::atomic<uint32_t> closed[2];
    char pad2[48];
    PushRequest push[2];  // push[s]: side s asks side 1 - s (see PushRequest)
};
static_assert(sizeof(ChannelHeader) == 1088, "ChannelHeader layout");
static_assert(offsetof(ChannelHeader, push) == 448, "ChannelHeader layout");
static_assert(offsetof(ChannelHeader, remote_access) == 384, "ChannelHeader layout");
static_assert(offsetof(ChannelHeader, closed) == 392, "ChannelHeader layout");
static_assert(offsetof(ChannelHeader, wake_wanted) == 64, "ChannelHeader layout");
static_assert(offsetof(ChannelHeader, ring) == 128, "ChannelHeader layout");
constexpr uint32_t kChannelHeaderBytes = 4096;
static_assert(sizeof(ChannelHeader) <= kChannelHeaderBytes, "the channel header fits its page");
constexpr uint32_t kChannelBytes = kChannelHeaderBytes + 2 * kRingSlots * kSlotSize;

enum class MsgType : uint8_t {
    Pad = 1,           // skip to the end of the ring
    SendInline = 2,    // payload: the data
    SendCma = 3,       // payload: SgeRef[n] in the sender's address space
    // Without cross-memory attach (not permitted between the two processes),
    // data moves through the ring in fragments:
    SendFragment = 4,  // payload: FragmentHeader + data
    WriteFragment = 5, // payload: RemoteHeader + data, placed by the target
    ReadRequest = 6,   // payload: RemoteHeader (offset 0, total = bytes to read)
    ReadResponse = 7,  // payload: ResponseHeader + data
    // The next Send message (SendInline, SendCma, or the SendFragment that
    // ends a message) is a Send with Invalidate of this token: published
    // just before it, in the same turn. At most one waits at a time.
    InvalidateNext = 8,  // payload: InvalidateHeader
};
constexpr uint8_t kMsgSolicited = 0x1;
constexpr uint8_t kMsgFirst = 0x2;
constexpr uint8_t kMsgLast = 0x4;
constexpr uint64_t kProbeMagic = 0x4F4E44434D415052ull;  // "ONDCMAPR"

// The first 16 bytes of a message. `seq` is written last by the producer
// (release) and equals (position + 1) truncated to 32 bits.
struct MsgHeader {
    std::atomic<uint32_t> seq;
    MsgType type;
    uint8_t flags;
    uint16_t slots;    // slots this message occupies
    uint32_t length;   // bytes of data carried (inline) or described (CMA)
    std::atomic<int32_t> status;  // written by the consumer before it advances tail
};
static_assert(sizeof(MsgHeader) == 16, "MsgHeader layout");

struct FragmentHeader {
    uint32_t total;   // bytes in the whole message
    uint32_t offset;  // where this fragment's data goes
};
static_assert(sizeof(FragmentHeader) == 8, "FragmentHeader layout");

struct RemoteHeader {
    uint64_t address;  // target virtual address of the whole operation
    uint32_t token;    // remote token as the application passed it (network order)
    uint32_t total;
    uint32_t offset;
    uint32_t reserved;
    uint64_t read_id;  // ReadRequest: echoed in the responses
};
static_assert(sizeof(RemoteHeader) == 32, "RemoteHeader layout");

struct ResponseHeader {
    uint64_t read_id;
    uint32_t offset;
    int32_t status;  // ND status of the read at the target (last fragment)
};
static_assert(sizeof(ResponseHeader) == 16, "ResponseHeader layout");

struct InvalidateHeader {
    uint32_t token;  // the receiver's token as the application passed it (network order)
    uint32_t reserved;
};
static_assert(sizeof(InvalidateHeader) == 8, "InvalidateHeader layout");

// Data bytes per fragment: one ring message of at most 4 KiB of payload.
constexpr uint32_t kFragmentData = 4096 - 32;

struct SgeRef {
    uint64_t address;
    uint64_t length;
};
static_assert(sizeof(SgeRef) == 16, "SgeRef layout");

constexpr uint32_t kInlineThreshold = 4096;  // larger Sends move by cross-memory attach

// ---- memory-region table (read-only for peers) ----
// Open addressing on the token. Each entry is written under a seqlock:
// `version` is odd while the owner changes it; readers retry.
constexpr uint32_t kMrTableMagic = 0x4F4E444D;  // "ONDM"
constexpr uint32_t kMrTableEntries = 1u << 16;

enum MrRights : uint32_t {
    kRightLocalWrite = 0x1,
    kRightRemoteRead = 0x2,
    kRightRemoteWrite = 0x4,
    kRightReadSink = 0x8,
    kIsWindow = 0x100,
};

struct MrEntry {
    std::atomic<uint32_t> version;
    uint32_t token;   // 0 = free
    uint32_t rights;  // MrRights
    uint32_t reserved;
    uint64_t address;
    uint64_t length;
    uint64_t qp_id;   // windows: the QP they are bound through (0 for regions)
    uint64_t delta;   // owner's address - remote address (fast-registered windows; else 0)
};
static_assert(sizeof(MrEntry) == 48, "MrEntry layout");

struct MrTableHeader {
    uint32_t magic;
    uint16_t version;
    uint16_t entry_size;
    uint32_t entries;
    uint32_t pid;
    char pad[48];
};
static_assert(sizeof(MrTableHeader) == 64, "MrTableHeader layout");
constexpr size_t kMrTableBytes = sizeof(MrTableHeader) + size_t(kMrTableEntries) * sizeof(MrEntry);

}  // namespace soft
