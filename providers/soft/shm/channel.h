// A connection's shared-memory channel: two single-producer/single-consumer
// message rings (wire.h), one per direction, in a memfd that the active side
// creates and hands to the passive side over the CM socket. Side 0 (active)
// produces ring 0 and consumes ring 1; side 1 the other way round.
//
// Ring protocol: a message takes whole 64-byte slots; one that would wrap
// is preceded by a Pad to the end of the ring. The producer fills a message
// and publishes it by storing seq = position + 1 (release). The consumer
// handles messages in order, writes each one's status into its header, then
// advances tail (release). The producer reuses a slot only after it has read
// the status of the message that held it (Reap).
//
// Threads: one producer and one consumer per side at a time; the QP's send
// and receive locks provide that.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "ndspi.h"
#include "shm_wire.h"

namespace soft {

class Channel {
public:
    // Active side: a new channel file, initialised.
    static std::shared_ptr<Channel> Create(std::string *error);
    // Passive side: maps and validates the file received from the peer.
    static std::shared_ptr<Channel> Attach(int fd, std::string *error);
    ~Channel();

    int fd() const { return fd_; }
    void CloseFd();
    ChannelHeader *header() const { return header_; }
    MsgHeader *At(int ring, uint64_t pos) const {
        return reinterpret_cast<MsgHeader *>(rings_[ring] + (pos % kRingSlots) * kSlotSize);
    }
    // Payload bytes available in a message of `slots` slots.
    static uint32_t SlotsFor(uint32_t payload) { return (payload + sizeof(MsgHeader) + kSlotSize - 1) / kSlotSize; }
    static char *Payload(MsgHeader *m) { return reinterpret_cast<char *>(m) + sizeof(MsgHeader); }

private:
    Channel() = default;
    int fd_ = -1;
    void *base_ = nullptr;
    ChannelHeader *header_ = nullptr;
    char *rings_[2] = {nullptr, nullptr};
};

// The producer end of one ring (side s produces ring s).
class RingProducer {
public:
    RingProducer() = default;
    RingProducer(Channel *ch, int ring) : ch_(ch), ring_(ring) {}

    // Reserves a message with `payload` bytes; nullptr if the ring is full
    // (after Reap). `*pos` receives its position.
    MsgHeader *Reserve(uint32_t payload, uint64_t *pos);
    // Publishes the message reserved at `pos`.
    void Publish(MsgHeader *m, uint64_t pos);
    // Position below which the consumer has finished every message.
    uint64_t ConsumedUpTo() const { return ch_->header()->ring[ring_].tail.load(std::memory_order_acquire); }
    // Slots free as of the last Reaped.
    uint64_t FreeSlots() const { return kRingSlots - (head_ - reaped_); }
    // Marks slots below `pos` reusable (their statuses have been read).
    void Reaped(uint64_t pos) { reaped_ = pos; }
    uint64_t reaped() const { return reaped_; }
    uint64_t head() const { return head_; }  // past the last reserved message
    MsgHeader *At(uint64_t pos) const { return ch_->At(ring_, pos); }

private:
    Channel *ch_ = nullptr;
    int ring_ = 0;
    uint64_t head_ = 0;
    uint64_t reaped_ = 0;
};

// A message's header as read once. The peer can rewrite the shared slot at
// any time: what was checked must be what is used, so the consumer works
// from this copy. `slots` 0: malformed (no slots, or running past the end
// of the ring).
struct MsgInfo {
    MsgType type;
    uint8_t flags;
    uint16_t slots;
    uint32_t length;
};

// Copies n bytes out of the shared mapping once: the compiler may not read
// the source again in place of the copy.
inline void CopyOnce(void *dst, const void *src, size_t n) {
    std::memcpy(dst, src, n);
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

// The consumer end of one ring.
class RingConsumer {
public:
    RingConsumer() = default;
    RingConsumer(Channel *ch, int ring) : ch_(ch), ring_(ring) {}

    // The next published message (Pads are skipped), or nullptr; *info its
    // header, read once.
    MsgHeader *Peek(MsgInfo *info);
    // Finishes the message returned by Peek with `status`.
    void Finish(MsgHeader *m, const MsgInfo &info, int32_t status);
    uint64_t position() const { return tail_; }
    // True if a message (or a pad) is published at `pos`: a lock-free hint.
    bool PublishedAt(uint64_t pos) const {
        return ch_->At(ring_, pos)->seq.load(std::memory_order_acquire) == static_cast<uint32_t>(pos + 1);
    }

private:
    Channel *ch_ = nullptr;
    int ring_ = 0;
    uint64_t tail_ = 0;
};

// A completion status the peer wrote (a ring slot's status, a Read
// Response's): only the failures an OpenND peer reports reach our CQ as
// they are; any other failure is the peer's invention and reads
// ND_REMOTE_ERROR, any success code ND_SUCCESS. The other process is not
// trusted, not even with a number.
inline HRESULT StatusFromPeer(int32_t status) {
    const auto s = static_cast<HRESULT>(status);
    if (SUCCEEDED(s)) return ND_SUCCESS;
    if (s == ND_REMOTE_ERROR || s == ND_ACCESS_VIOLATION || s == ND_INVALID_DEVICE_REQUEST) return s;
    return ND_REMOTE_ERROR;
}

}  // namespace soft
