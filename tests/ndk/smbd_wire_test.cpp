// SMB Direct message layouts and the receiver rules of [MS-SMBD] 3.1.5.6-8,
// without a connection.
#include <gtest/gtest.h>

#include "smbd_test_util.h"

using namespace smbd;
using ndk_test::RawPeer;

namespace {

Limits Ours() { return Limits{}; }  // 255 credits, send 1364, receive 8192, fragmented 1 MiB

NegotiateResponse GoodResponse() {
    NegotiateResponse r;
    r.credits_requested = 255;
    r.credits_granted = 10;
    r.max_read_write_size = 1 << 20;
    r.preferred_send_size = 1024;
    r.max_receive_size = 1024;
    r.max_fragmented_size = 1 << 17;
    return r;
}

}  // namespace

TEST(SmbdWire, LayoutsAreLittleEndianAndOfTheDocumentedSize) {
    auto req = RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 1024, 0x20000);
    ASSERT_EQ(req.size(), 20u);
    EXPECT_EQ(req[0], 0x00);  // MinVersion 0x0100, little-endian
    EXPECT_EQ(req[1], 0x01);
    EXPECT_EQ(req[6], 10);    // CreditsRequested at offset 6
    EXPECT_EQ(req[18], 0x02); // MaxFragmentedSize 0x00020000 at offset 16
    auto resp = RawPeer::NegotiateResponse(GoodResponse());
    ASSERT_EQ(resp.size(), 32u);
    NegotiateResponse back;
    ASSERT_TRUE(Decode(resp.data(), resp.size(), &back));
    EXPECT_EQ(back.credits_granted, 10);
    EXPECT_EQ(back.max_fragmented_size, 1u << 17);
    DataHeader h;
    h.credits_requested = 1;
    uint8_t bytes[kDataOffset];
    EXPECT_EQ(Encode(h, bytes), kDataHeaderMin);  // no payload: 20 bytes
    h.data_length = 5;
    h.data_offset = kDataOffset;
    EXPECT_EQ(Encode(h, bytes), kDataOffset);
    BufferDescriptor d{0x1122334455667788ull, 0xAABBCCDD, 4096}, e;
    uint8_t db[kBufferDescriptorSize];
    Encode(d, db);
    EXPECT_EQ(db[0], 0x88);
    Decode(db, &e);
    EXPECT_EQ(e.offset, d.offset);
    EXPECT_EQ(e.token, d.token);
    EXPECT_EQ(e.length, d.length);
}

TEST(SmbdWire, ListenerAcceptsAGoodRequestAndTakesTheSmallerSizes) {
    auto req = RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 2048, 0x20000);
    NegotiateResponse r;
    Negotiated n;
    ASSERT_EQ(AcceptNegotiateRequest(req.data(), req.size(), Ours(), 100, &r, &n), STATUS_SUCCESS);
    EXPECT_EQ(r.negotiated_version, kProtocolV1);
    EXPECT_EQ(r.status, 0u);
    EXPECT_EQ(r.credits_granted, 100);
    EXPECT_EQ(r.credits_requested, 255);
    EXPECT_EQ(n.max_send_size, 1364u);        // min(ours 1364, their receive 2048)
    EXPECT_EQ(n.max_receive_size, 1024u);     // min(ours 8192, their preferred send 1024)
    EXPECT_EQ(r.max_receive_size, 1024u);
    EXPECT_EQ(n.receive_credit_target, 10);
    EXPECT_EQ(n.max_fragmented_send_size, 0x20000u);
    // A version range that includes 1.0 is fine too.
    req = RawPeer::Negotiate(0x0100, 0x0300, 10, 1024, 2048, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(req.data(), req.size(), Ours(), 1, &r, &n), STATUS_SUCCESS);
    // A tiny preferred send size still leaves 128 bytes.
    req = RawPeer::Negotiate(0x0100, 0x0100, 10, 64, 2048, 0x20000);
    ASSERT_EQ(AcceptNegotiateRequest(req.data(), req.size(), Ours(), 1, &r, &n), STATUS_SUCCESS);
    EXPECT_EQ(n.max_receive_size, 128u);
}

TEST(SmbdWire, ListenerRejectsBadRequests) {
    NegotiateResponse r;
    Negotiated n;
    auto wrong_version = RawPeer::Negotiate(0x0200, 0x0200, 10, 1024, 1024, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(wrong_version.data(), 20, Ours(), 1, &r, &n), STATUS_NOT_SUPPORTED);
    EXPECT_EQ(r.status, uint32_t(STATUS_NOT_SUPPORTED));  // a failure response is sent
    EXPECT_EQ(r.negotiated_version, 0);
    auto old_version = RawPeer::Negotiate(0x0001, 0x00FF, 10, 1024, 1024, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(old_version.data(), 20, Ours(), 1, &r, &n), STATUS_NOT_SUPPORTED);
    // These terminate the connection without a response.
    auto good = RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 1024, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(good.data(), 19, Ours(), 1, &r, &n), STATUS_INVALID_PARAMETER);
    auto no_credits = RawPeer::Negotiate(0x0100, 0x0100, 0, 1024, 1024, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(no_credits.data(), 20, Ours(), 1, &r, &n), STATUS_INVALID_PARAMETER);
    auto small_receive = RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 127, 0x20000);
    EXPECT_EQ(AcceptNegotiateRequest(small_receive.data(), 20, Ours(), 1, &r, &n), STATUS_INVALID_PARAMETER);
    auto small_fragmented = RawPeer::Negotiate(0x0100, 0x0100, 10, 1024, 1024, 131071);
    EXPECT_EQ(AcceptNegotiateRequest(small_fragmented.data(), 20, Ours(), 1, &r, &n), STATUS_INVALID_PARAMETER);
}

TEST(SmbdWire, InitiatorChecksTheResponse) {
    Negotiated n;
    auto check = [&](const NegotiateResponse &r, size_t cut = 0) {
        auto bytes = RawPeer::NegotiateResponse(r);
        return AcceptNegotiateResponse(bytes.data(), bytes.size() - cut, Ours(), &n);
    };
    ASSERT_EQ(check(GoodResponse()), STATUS_SUCCESS);
    EXPECT_EQ(n.initial_send_credits, 10);
    EXPECT_EQ(n.max_send_size, 1024u);    // min(ours 1364, their receive 1024)
    EXPECT_EQ(n.max_receive_size, 1024u); // min(ours 8192, their preferred send 1024)
    EXPECT_EQ(check(GoodResponse(), 1), STATUS_INVALID_PARAMETER);  // 31 bytes
    NegotiateResponse r = GoodResponse();
    r.negotiated_version = 0x0200;
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.credits_granted = 0;  // no credit to send anything: unusable
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.credits_requested = 0;
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.max_receive_size = 127;
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.max_fragmented_size = 65536;
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.preferred_send_size = 8193;  // more than we said we receive
    EXPECT_EQ(check(r), STATUS_INVALID_PARAMETER);
    r = GoodResponse();
    r.status = uint32_t(STATUS_NOT_SUPPORTED);
    EXPECT_EQ(check(r), STATUS_NOT_SUPPORTED);
}

TEST(SmbdWire, DataTransferChecks) {
    DataHeader h;
    std::vector<uint8_t> payload(100, 7);
    auto good = RawPeer::Data(1, 0, 0, 50, kDataOffset, payload);
    EXPECT_EQ(CheckDataTransfer(good.data(), good.size(), 1 << 17, &h), STATUS_SUCCESS);
    EXPECT_EQ(h.data_length, 100u);
    EXPECT_EQ(h.remaining_data_length, 50u);
    auto empty = RawPeer::Data(1, 5, 0, 0, 0, {});
    ASSERT_EQ(empty.size(), 20u);
    EXPECT_EQ(CheckDataTransfer(empty.data(), empty.size(), 1 << 17, &h), STATUS_SUCCESS);
    EXPECT_EQ(h.credits_granted, 5);
    EXPECT_EQ(CheckDataTransfer(empty.data(), 19, 1 << 17, &h), STATUS_INVALID_PARAMETER);
    auto no_request = RawPeer::Data(0, 0, 0, 0, kDataOffset, payload);
    EXPECT_EQ(CheckDataTransfer(no_request.data(), no_request.size(), 1 << 17, &h), STATUS_INVALID_PARAMETER);
    auto misaligned = RawPeer::Data(1, 0, 0, 0, 28, payload);
    EXPECT_EQ(CheckDataTransfer(misaligned.data(), misaligned.size(), 1 << 17, &h), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(CheckDataTransfer(good.data(), good.size() - 1, 1 << 17, &h), STATUS_INVALID_PARAMETER);  // past the end
    auto too_big = RawPeer::Data(1, 0, 0, (1 << 17) - 99, kDataOffset, payload);
    EXPECT_EQ(CheckDataTransfer(too_big.data(), too_big.size(), 1 << 17, &h), STATUS_INVALID_PARAMETER);
}
