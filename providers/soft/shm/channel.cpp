#include "channel.h"

#include "sealed_memfd.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace soft {

std::shared_ptr<Channel> Channel::Create(std::string *error) {
    std::shared_ptr<Channel> ch(new Channel);
    ch->fd_ = CreateSealedMemfd("opennd-channel", kChannelBytes, error);
    if (ch->fd_ < 0) return nullptr;
    void *p = mmap(nullptr, kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, ch->fd_, 0);
    if (p == MAP_FAILED) {
        *error = std::string("cannot map the channel: ") + std::strerror(errno);
        return nullptr;
    }
    ch->base_ = p;
    ch->header_ = new (p) ChannelHeader{};
    ChannelHeader *h = ch->header_;
    h->magic = kChannelMagic;
    h->version = kWireVersion;
    h->header_size = sizeof(ChannelHeader);
    h->total_size = kChannelBytes;
    h->ring_slots = kRingSlots;
    h->slot_size = kSlotSize;
    h->ring_offset[0] = kChannelHeaderBytes;
    h->ring_offset[1] = kChannelHeaderBytes + kRingSlots * kSlotSize;
    h->pid[0] = static_cast<uint32_t>(getpid());
    ch->rings_[0] = static_cast<char *>(p) + h->ring_offset[0];
    ch->rings_[1] = static_cast<char *>(p) + h->ring_offset[1];
    return ch;
}

std::shared_ptr<Channel> Channel::Attach(int fd, std::string *error) {
    std::shared_ptr<Channel> ch(new Channel);
    ch->fd_ = fd;
    if (!SealedAtSize(fd, kChannelBytes, "channel", error)) return nullptr;
    void *p = mmap(nullptr, kChannelBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        *error = std::string("cannot map the peer's channel: ") + std::strerror(errno);
        return nullptr;
    }
    ch->base_ = p;
    ch->header_ = static_cast<ChannelHeader *>(p);
    ChannelHeader *h = ch->header_;
    if (h->magic != kChannelMagic || h->version != kWireVersion || h->header_size != sizeof(ChannelHeader) ||
        h->total_size != kChannelBytes || h->ring_slots != kRingSlots || h->slot_size != kSlotSize ||
        h->ring_offset[0] != kChannelHeaderBytes || h->ring_offset[1] != kChannelHeaderBytes + kRingSlots * kSlotSize) {
        *error = "the peer's channel has an unknown layout (version mismatch?)";
        return nullptr;
    }
    h->pid[1] = static_cast<uint32_t>(getpid());
    // From the constants the header was checked against, not from the
    // header again: the peer can rewrite it at any time.
    ch->rings_[0] = static_cast<char *>(p) + kChannelHeaderBytes;
    ch->rings_[1] = static_cast<char *>(p) + kChannelHeaderBytes + kRingSlots * kSlotSize;
    return ch;
}

void Channel::CloseFd() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

Channel::~Channel() {
    if (base_) munmap(base_, kChannelBytes);
    if (fd_ >= 0) close(fd_);
}

MsgHeader *RingProducer::Reserve(uint32_t payload, uint64_t *pos) {
    uint32_t slots = Channel::SlotsFor(payload);
    uint64_t offset = head_ % kRingSlots;
    uint32_t pad = offset + slots > kRingSlots ? static_cast<uint32_t>(kRingSlots - offset) : 0;
    if (head_ + pad + slots - reaped_ > kRingSlots) return nullptr;
    if (pad) {
        MsgHeader *p = ch_->At(ring_, head_);
        p->type = MsgType::Pad;
        p->slots = static_cast<uint16_t>(pad);
        p->length = 0;
        p->seq.store(static_cast<uint32_t>(head_ + 1), std::memory_order_release);
        head_ += pad;
    }
    MsgHeader *m = ch_->At(ring_, head_);
    m->slots = static_cast<uint16_t>(slots);
    m->flags = 0;
    m->status.store(0, std::memory_order_relaxed);
    *pos = head_;
    head_ += slots;
    return m;
}

void RingProducer::Publish(MsgHeader *m, uint64_t pos) {
    // seq_cst: the store must be visible before we read the peer's
    // wake_wanted flag (Dekker with the consumer going to sleep).
    m->seq.store(static_cast<uint32_t>(pos + 1), std::memory_order_seq_cst);
}

MsgHeader *RingConsumer::Peek(MsgInfo *info) {
    for (;;) {
        MsgHeader *m = ch_->At(ring_, tail_);
        if (m->seq.load(std::memory_order_acquire) != static_cast<uint32_t>(tail_ + 1)) return nullptr;
        const volatile MsgHeader *v = m;
        *info = MsgInfo{v->type, v->flags, v->slots, v->length};
        std::atomic_signal_fence(std::memory_order_seq_cst);
        const uint64_t room = kRingSlots - tail_ % kRingSlots;  // a message never wraps around the end
        // A Pad runs exactly to the end, from somewhere past the start (a
        // message never needs a whole lap): so at most one per call, and a
        // peer publishing Pads cannot keep us here.
        const bool pad = info->type == MsgType::Pad;
        if (info->slots == 0 || info->slots > room || (pad && (info->slots != room || room == kRingSlots))) {
            info->slots = 0;  // malformed: the caller fails the connection
            return m;
        }
        if (!pad) return m;
        tail_ += info->slots;
        ch_->header()->ring[ring_].tail.store(tail_, std::memory_order_release);
    }
}

void RingConsumer::Finish(MsgHeader *m, const MsgInfo &info, int32_t status) {
    // Reserve left 0 (success) there: writing it again would take the
    // line from the producer for nothing (one more cache miss per message).
    if (status != 0) m->status.store(status, std::memory_order_relaxed);
    tail_ += info.slots == 0 ? 1 : info.slots;
    ch_->header()->ring[ring_].tail.store(tail_, std::memory_order_seq_cst);
}

}  // namespace soft
