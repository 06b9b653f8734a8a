#include "smbd_test_util.h"

namespace ndk_test {
namespace {
constexpr size_t kSlot = 8192;
constexpr size_t kSendArea = 512 * 1024;  // receives below, sends above
constexpr int kSendSlots = 32;
}  // namespace

RawPeer::~RawPeer() { pair_.Release(); }

bool RawPeer::Open() { return pair_.Open(); }

bool RawPeer::Connect(uint16_t port) {
    side_ = &pair_.client;
    sockaddr_in src = Loopback(), dst = Loopback(port);
    Completion connected, completed;
    NDK_CONNECTOR *c = side_->connector;
    NTSTATUS s = c->Dispatch->NdkConnect(c, side_->qp, Sa(&src), sizeof src, Sa(&dst), sizeof dst, 16, 16, nullptr, 0,
                                         Completion::Request, &connected);
    if (Finish(s, connected) != STATUS_SUCCESS) return false;
    s = c->Dispatch->NdkCompleteConnect(c, Completion::Event, &side_->disconnected, Completion::Request, &completed);
    return Finish(s, completed) == STATUS_SUCCESS;
}

bool RawPeer::Listen(uint16_t *port) {
    side_ = &pair_.server;
    *port = pair_.port;
    return true;
}

bool RawPeer::Accept(std::chrono::milliseconds timeout) {
    NDK_CONNECTOR *incoming = pair_.NextIncoming(timeout);
    if (!incoming) return false;
    Close(side_->connector);
    side_->connector = incoming;
    Completion accepted;
    NTSTATUS s = incoming->Dispatch->NdkAccept(incoming, side_->qp, 16, 16, nullptr, 0, Completion::Event,
                                               &side_->disconnected, Completion::Request, &accepted);
    return Finish(s, accepted) == STATUS_SUCCESS;
}

void RawPeer::PostReceives(int n) {
    for (int i = 0; i < n; ++i) {
        int slot = receive_slot_++ % 64;
        NDK_SGE sge = side_->region.Sge(size_t(slot) * kSlot, kSlot);
        NTSTATUS s = side_->qp->Dispatch->NdkReceive(side_->qp, reinterpret_cast<void *>(intptr_t(slot)), &sge, 1);
        EXPECT_EQ(s, STATUS_SUCCESS);
    }
}

bool RawPeer::Send(const std::vector<uint8_t> &bytes) {
    int slot = send_slot_++ % kSendSlots;
    size_t at = kSendArea + size_t(slot) * kSlot;
    std::memcpy(side_->region.bytes.data() + at, bytes.data(), bytes.size());
    NDK_SGE sge = side_->region.Sge(at, bytes.size());
    return side_->qp->Dispatch->NdkSend(side_->qp, &send_slot_, &sge, 1, 0) == STATUS_SUCCESS;
}

bool RawPeer::Pump(std::chrono::milliseconds timeout) {
    NDK_RESULT_EX r = side_->Next(timeout);
    if (r.Status == STATUS_IO_TIMEOUT && r.RequestContext == nullptr && r.Type == 0) return false;  // nothing came
    if (r.Type == NdkOperationTypeReceive) {
        if (r.Status != STATUS_SUCCESS) {
            ended = true;  // flushed: the connection is gone
            return true;
        }
        size_t slot = size_t(reinterpret_cast<intptr_t>(r.RequestContext));
        const char *p = side_->region.bytes.data() + slot * kSlot;
        received_.emplace_back(p, p + r.BytesTransferred);
    } else if (r.Status != STATUS_SUCCESS) {
        ended = true;
    }
    return true;
}

bool RawPeer::Receive(std::vector<uint8_t> *message, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (received_.empty() && !ended && Clock::now() < deadline) {
        // A disconnect ends the wait only once the CQ holds nothing more: a
        // message that arrived before it is still there to be reaped.
        bool gone = side_->disconnected.Count() > 0;
        bool got = Pump(std::chrono::milliseconds(50));
        if (gone && !got) ended = true;
    }
    if (received_.empty()) return false;
    *message = std::move(received_.front());
    received_.pop_front();
    return true;
}

std::vector<uint8_t> RawPeer::Negotiate(uint16_t min_v, uint16_t max_v, uint16_t credits, uint32_t send,
                                        uint32_t receive, uint32_t fragmented) {
    smbd::NegotiateRequest r;
    r.min_version = min_v;
    r.max_version = max_v;
    r.credits_requested = credits;
    r.preferred_send_size = send;
    r.max_receive_size = receive;
    r.max_fragmented_size = fragmented;
    std::vector<uint8_t> bytes(smbd::kNegotiateRequestSize);
    smbd::Encode(r, bytes.data());
    return bytes;
}

std::vector<uint8_t> RawPeer::NegotiateResponse(const smbd::NegotiateResponse &r) {
    std::vector<uint8_t> bytes(smbd::kNegotiateResponseSize);
    smbd::Encode(r, bytes.data());
    return bytes;
}

std::vector<uint8_t> RawPeer::Data(uint16_t requested, uint16_t granted, uint16_t flags, uint32_t remaining,
                                   uint32_t offset, const std::vector<uint8_t> &payload) {
    smbd::DataHeader h;
    h.credits_requested = requested;
    h.credits_granted = granted;
    h.flags = flags;
    h.remaining_data_length = remaining;
    h.data_offset = payload.empty() ? 0 : offset;
    h.data_length = static_cast<uint32_t>(payload.size());
    std::vector<uint8_t> bytes(std::max<size_t>(smbd::kDataOffset, offset) + payload.size());
    size_t header = smbd::Encode(h, bytes.data());
    if (payload.empty()) bytes.resize(header);
    else std::memcpy(bytes.data() + offset, payload.data(), payload.size());
    return bytes;
}

bool SmbdServer::Start(const smbd::Limits &limits) {
    if (!endpoint.Open("127.0.0.1") || !endpoint.Listen(0, &port)) return false;
    result = std::async(std::launch::async,
                        [this, limits] { return endpoint.AcceptOne(limits, &connection, 10000); });
    return true;
}

}  // namespace ndk_test
