// SMB Direct ([MS-SMBD] 2.2) messages: layouts, little-endian encoding and
// the receiver checks of 3.1.5.6-3.1.5.8. Pure functions, no I/O, so the
// protocol rules are testable on their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ndkpi.h"

namespace smbd {

constexpr uint16_t kProtocolV1 = 0x0100;
constexpr size_t kNegotiateRequestSize = 20;
constexpr size_t kNegotiateResponseSize = 32;
constexpr size_t kDataHeaderMin = 20;    // a data transfer message without payload
constexpr size_t kDataOffset = 24;       // where payload starts (8-byte aligned)
constexpr uint32_t kMinReceiveSize = 128;
constexpr uint32_t kMinFragmentedSize = 131072;
constexpr uint16_t kFlagResponseRequested = 0x0001;
constexpr size_t kBufferDescriptorSize = 16;

// SMB2 channel values telling how a buffer descriptor is to be used.
constexpr uint32_t kChannelRdmaV1 = 1;
constexpr uint32_t kChannelRdmaV1Invalidate = 2;

struct NegotiateRequest {  // 2.2.1
    uint16_t min_version = kProtocolV1;
    uint16_t max_version = kProtocolV1;
    uint16_t credits_requested = 0;
    uint32_t preferred_send_size = 0;
    uint32_t max_receive_size = 0;
    uint32_t max_fragmented_size = 0;
};

struct NegotiateResponse {  // 2.2.2
    uint16_t min_version = kProtocolV1;
    uint16_t max_version = kProtocolV1;
    uint16_t negotiated_version = kProtocolV1;
    uint16_t credits_requested = 0;
    uint16_t credits_granted = 0;
    uint32_t status = 0;  // an NTSTATUS
    uint32_t max_read_write_size = 0;
    uint32_t preferred_send_size = 0;
    uint32_t max_receive_size = 0;
    uint32_t max_fragmented_size = 0;
};

struct DataHeader {  // 2.2.3, without the payload
    uint16_t credits_requested = 0;
    uint16_t credits_granted = 0;
    uint16_t flags = 0;
    uint32_t remaining_data_length = 0;
    uint32_t data_offset = 0;
    uint32_t data_length = 0;
};

struct BufferDescriptor {  // 2.2.3.1 SMB_DIRECT_BUFFER_DESCRIPTOR_V1
    uint64_t offset = 0;
    uint32_t token = 0;
    uint32_t length = 0;
};

// Encoders write exactly the documented size (data: kDataOffset bytes, or
// kDataHeaderMin when there is no payload) and return it.
size_t Encode(const NegotiateRequest &m, uint8_t *out);
size_t Encode(const NegotiateResponse &m, uint8_t *out);
size_t Encode(const DataHeader &m, uint8_t *out);
void Encode(const BufferDescriptor &d, uint8_t *out);

// Decoders: false if `length` is below the message's minimum size.
bool Decode(const uint8_t *in, size_t length, NegotiateRequest *m);
bool Decode(const uint8_t *in, size_t length, NegotiateResponse *m);
bool Decode(const uint8_t *in, size_t length, DataHeader *m);
void Decode(const uint8_t *in, BufferDescriptor *d);

// What a side is willing to do (Connection.* initial values of 3.1.1.1).
struct Limits {
    uint16_t receive_credit_max = 255;
    uint16_t send_credit_target = 255;
    uint32_t max_send_size = 1364;
    uint32_t max_receive_size = 8192;
    uint32_t max_fragmented_size = 1u << 20;
    uint32_t max_read_write_size = 1u << 20;
};

// The connection parameters both sides settle on.
struct Negotiated {
    uint32_t max_send_size = 0;             // bytes per message we may send
    uint32_t max_receive_size = 0;          // bytes per message we accept
    uint32_t max_fragmented_send_size = 0;  // largest upper-layer message the peer reassembles
    uint32_t max_read_write_size = 0;
    uint16_t receive_credit_target = 0;     // credits the peer asks us for
    uint16_t initial_send_credits = 0;
};

// Listener side (3.1.5.6). STATUS_SUCCESS: respond with `*response` (built
// from `ours` and `granted`). STATUS_NOT_SUPPORTED: no common version;
// respond with `*response` (a failure response) and disconnect. Any other
// error: disconnect without responding.
NTSTATUS AcceptNegotiateRequest(const uint8_t *in, size_t length, const Limits &ours, uint16_t granted,
                                NegotiateResponse *response, Negotiated *out);
// Initiator side (3.1.5.7): the response's checks; an error means disconnect.
// A response carrying a failure status returns that status.
NTSTATUS AcceptNegotiateResponse(const uint8_t *in, size_t length, const Limits &ours, Negotiated *out);
// Data transfer checks (3.1.5.8) against our receive parameters.
NTSTATUS CheckDataTransfer(const uint8_t *in, size_t length, uint32_t max_fragmented_receive, DataHeader *out);

}  // namespace smbd
