#include "smbd_wire.h"

#include <algorithm>

namespace smbd {
namespace {

void Put16(uint8_t *p, uint16_t v) {
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
}
void Put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void Put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint16_t Get16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t Get32(const uint8_t *p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t Get64(const uint8_t *p) { return uint64_t(Get32(p)) | uint64_t(Get32(p + 4)) << 32; }

}  // namespace

size_t Encode(const NegotiateRequest &m, uint8_t *out) {
    Put16(out, m.min_version);
    Put16(out + 2, m.max_version);
    Put16(out + 4, 0);
    Put16(out + 6, m.credits_requested);
    Put32(out + 8, m.preferred_send_size);
    Put32(out + 12, m.max_receive_size);
    Put32(out + 16, m.max_fragmented_size);
    return kNegotiateRequestSize;
}

size_t Encode(const NegotiateResponse &m, uint8_t *out) {
    Put16(out, m.min_version);
    Put16(out + 2, m.max_version);
    Put16(out + 4, m.negotiated_version);
    Put16(out + 6, 0);
    Put16(out + 8, m.credits_requested);
    Put16(out + 10, m.credits_granted);
    Put32(out + 12, m.status);
    Put32(out + 16, m.max_read_write_size);
    Put32(out + 20, m.preferred_send_size);
    Put32(out + 24, m.max_receive_size);
    Put32(out + 28, m.max_fragmented_size);
    return kNegotiateResponseSize;
}

size_t Encode(const DataHeader &m, uint8_t *out) {
    Put16(out, m.credits_requested);
    Put16(out + 2, m.credits_granted);
    Put16(out + 4, m.flags);
    Put16(out + 6, 0);
    Put32(out + 8, m.remaining_data_length);
    Put32(out + 12, m.data_offset);
    Put32(out + 16, m.data_length);
    if (m.data_length == 0) return kDataHeaderMin;
    Put32(out + 20, 0);  // padding up to the 8-aligned payload
    return kDataOffset;
}

void Encode(const BufferDescriptor &d, uint8_t *out) {
    Put64(out, d.offset);
    Put32(out + 8, d.token);
    Put32(out + 12, d.length);
}

bool Decode(const uint8_t *in, size_t length, NegotiateRequest *m) {
    if (length < kNegotiateRequestSize) return false;
    m->min_version = Get16(in);
    m->max_version = Get16(in + 2);
    m->credits_requested = Get16(in + 6);
    m->preferred_send_size = Get32(in + 8);
    m->max_receive_size = Get32(in + 12);
    m->max_fragmented_size = Get32(in + 16);
    return true;
}

bool Decode(const uint8_t *in, size_t length, NegotiateResponse *m) {
    if (length < kNegotiateResponseSize) return false;
    m->min_version = Get16(in);
    m->max_version = Get16(in + 2);
    m->negotiated_version = Get16(in + 4);
    m->credits_requested = Get16(in + 8);
    m->credits_granted = Get16(in + 10);
    m->status = Get32(in + 12);
    m->max_read_write_size = Get32(in + 16);
    m->preferred_send_size = Get32(in + 20);
    m->max_receive_size = Get32(in + 24);
    m->max_fragmented_size = Get32(in + 28);
    return true;
}

bool Decode(const uint8_t *in, size_t length, DataHeader *m) {
    if (length < kDataHeaderMin) return false;
    m->credits_requested = Get16(in);
    m->credits_granted = Get16(in + 2);
    m->flags = Get16(in + 4);
    m->remaining_data_length = Get32(in + 8);
    m->data_offset = Get32(in + 12);
    m->data_length = Get32(in + 16);
    return true;
}

void Decode(const uint8_t *in, BufferDescriptor *d) {
    d->offset = Get64(in);
    d->token = Get32(in + 8);
    d->length = Get32(in + 12);
}

NTSTATUS AcceptNegotiateRequest(const uint8_t *in, size_t length, const Limits &ours, uint16_t granted,
                                NegotiateResponse *response, Negotiated *out) {
    NegotiateRequest req;
    if (!Decode(in, length, &req)) return STATUS_INVALID_PARAMETER;  // too short: disconnect
    *response = NegotiateResponse{};
    if (req.min_version > kProtocolV1 || req.max_version < kProtocolV1) {
        response->negotiated_version = 0;
        response->status = static_cast<uint32_t>(STATUS_NOT_SUPPORTED);
        return STATUS_NOT_SUPPORTED;
    }
    if (req.credits_requested == 0 || req.max_receive_size < kMinReceiveSize ||
        req.max_fragmented_size < kMinFragmentedSize)
        return STATUS_INVALID_PARAMETER;
    out->max_receive_size = std::max(std::min(ours.max_receive_size, req.preferred_send_size), kMinReceiveSize);
    out->max_send_size = std::min(ours.max_send_size, req.max_receive_size);
    out->max_fragmented_send_size = req.max_fragmented_size;
    out->max_read_write_size = ours.max_read_write_size;
    out->receive_credit_target = std::min(req.credits_requested, ours.receive_credit_max);
    out->initial_send_credits = 0;  // the initiator grants in its first data transfer
    response->credits_requested = ours.send_credit_target;
    response->credits_granted = granted;
    response->status = 0;
    response->max_read_write_size = ours.max_read_write_size;
    response->preferred_send_size = out->max_send_size;
    response->max_receive_size = out->max_receive_size;
    response->max_fragmented_size = ours.max_fragmented_size;
    return STATUS_SUCCESS;
}

NTSTATUS AcceptNegotiateResponse(const uint8_t *in, size_t length, const Limits &ours, Negotiated *out) {
    NegotiateResponse r;
    if (!Decode(in, length, &r)) return STATUS_INVALID_PARAMETER;
    if (r.status != 0) return static_cast<NTSTATUS>(r.status);
    if (r.negotiated_version != kProtocolV1 || r.max_receive_size < kMinReceiveSize ||
        r.max_fragmented_size < kMinFragmentedSize || r.credits_granted == 0 || r.credits_requested == 0 ||
        r.preferred_send_size > ours.max_receive_size)
        return STATUS_INVALID_PARAMETER;
    out->max_receive_size = std::max(std::min(ours.max_receive_size, r.preferred_send_size), kMinReceiveSize);
    out->max_send_size = std::min(ours.max_send_size, r.max_receive_size);
    out->max_fragmented_send_size = r.max_fragmented_size;
    out->max_read_write_size = std::min(ours.max_read_write_size, r.max_read_write_size);
    out->receive_credit_target = std::min(r.credits_requested, ours.receive_credit_max);
    out->initial_send_credits = r.credits_granted;
    return STATUS_SUCCESS;
}

NTSTATUS CheckDataTransfer(const uint8_t *in, size_t length, uint32_t max_fragmented_receive, DataHeader *out) {
    if (!Decode(in, length, out)) return STATUS_INVALID_PARAMETER;
    if (out->credits_requested == 0) return STATUS_INVALID_PARAMETER;
    if (out->data_offset % 8 != 0) return STATUS_INVALID_PARAMETER;
    if (out->data_length && uint64_t(out->data_offset) + out->data_length > length) return STATUS_INVALID_PARAMETER;
    if (out->data_length && out->data_offset < kDataOffset) return STATUS_INVALID_PARAMETER;  // inside the header
    if (uint64_t(out->data_length) + out->remaining_data_length > max_fragmented_receive)
        return STATUS_INVALID_PARAMETER;
    return STATUS_SUCCESS;
}

}  // namespace smbd
