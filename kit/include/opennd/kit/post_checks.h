// The SPI's checks of every request a queue pair or SRQ is handed, in the
// order the spec gives its statuses (§7, R096, R100), for every provider.
// Inline functions on the caller's path: a check adds no call, no virtual
// dispatch and no lock to Send, Receive, Read or Write.
//
// What they do not check is the provider's: whether the memory is
// registered (a local access error completes the request, it is not a
// return value), and whether the queue has room (ND_NO_MORE_ENTRIES, under
// the provider's own lock).
#pragma once

#include <algorithm>
#include <cstdint>

#include "ndspi.h"

namespace opennd::kit {

// The flags each request accepts (§7.3-§7.9); any other bit is refused.
inline constexpr ULONG kSendFlags =
    ND_OP_FLAG_SILENT_SUCCESS | ND_OP_FLAG_READ_FENCE | ND_OP_FLAG_SEND_AND_SOLICIT_EVENT | ND_OP_FLAG_INLINE;
inline constexpr ULONG kReadFlags = ND_OP_FLAG_SILENT_SUCCESS | ND_OP_FLAG_READ_FENCE;
inline constexpr ULONG kWriteFlags = ND_OP_FLAG_SILENT_SUCCESS | ND_OP_FLAG_READ_FENCE | ND_OP_FLAG_INLINE;
inline constexpr ULONG kBindFlags =
    ND_OP_FLAG_SILENT_SUCCESS | ND_OP_FLAG_READ_FENCE | ND_OP_FLAG_ALLOW_READ | ND_OP_FLAG_ALLOW_WRITE;
inline constexpr ULONG kInvalidateFlags = ND_OP_FLAG_SILENT_SUCCESS | ND_OP_FLAG_READ_FENCE;

// What one queue pair accepts per request, fixed when it is created.
struct PostLimits {
    ULONG initiator_sge = 0;    // SGEs of a Send, Read or Write that is not inline
    ULONG receive_sge = 0;      // SGEs of a Receive
    ULONG inline_size = 0;      // bytes of an inline Send or Write (the QP's inlineDataSize)
    ULONG inline_sge = 0;       // SGEs of an inline request: the SPI sets no limit, a provider has one
    uint64_t max_transfer = 0;  // bytes of one request (MaxTransferLength)
    ULONG read_sge = ~0u;       // SGEs of a Read (the adapter's MaxReadSge, when below the others)
};

[[gnu::always_inline]] inline uint64_t SgeBytes(const ND2_SGE *sge, ULONG nsge) {
    uint64_t total = 0;
    for (ULONG i = 0; i < nsge; ++i) total += sge[i].BufferLength;
    return total;
}

// Send: flags (_4), SGE count (ND_DATA_OVERRUN, not for inline), connection
// (`may_post`: the QP is or was connected; posting to one that failed or
// closed is accepted and completes ND_CANCELED), the SGE array (_2), the
// length (ND_BUFFER_OVERFLOW, also above the inline size). *total: bytes.
[[gnu::always_inline]] inline HRESULT CheckSend(const PostLimits &l, const ND2_SGE *sge, ULONG nsge, ULONG flags,
                                                bool may_post, uint64_t *total) {
    if (flags & ~kSendFlags) return ND_INVALID_PARAMETER_4;
    const bool inline_data = (flags & ND_OP_FLAG_INLINE) != 0;
    if (nsge > l.initiator_sge && !inline_data) return ND_DATA_OVERRUN;
    if (!may_post) return ND_CONNECTION_INVALID;
    if (nsge && !sge) return ND_INVALID_PARAMETER_2;
    if (inline_data && nsge > l.inline_sge) return ND_DATA_OVERRUN;
    *total = SgeBytes(sge, nsge);
    if (*total > l.max_transfer) return ND_BUFFER_OVERFLOW;
    if (inline_data && *total > l.inline_size) return ND_BUFFER_OVERFLOW;
    return ND_SUCCESS;
}

// Read and Write: as Send, with flags reported as _6; only a Write may be
// inline.
[[gnu::always_inline]] inline HRESULT CheckOneSided(const PostLimits &l, bool write, const ND2_SGE *sge, ULONG nsge,
                                                    ULONG flags, bool may_post, uint64_t *total) {
    if (flags & ~(write ? kWriteFlags : kReadFlags)) return ND_INVALID_PARAMETER_6;
    const bool inline_data = write && (flags & ND_OP_FLAG_INLINE);
    if (nsge > (write ? l.initiator_sge : std::min(l.initiator_sge, l.read_sge)) && !inline_data)
        return ND_DATA_OVERRUN;
    if (!may_post) return ND_CONNECTION_INVALID;
    if (nsge && !sge) return ND_INVALID_PARAMETER_2;
    if (inline_data && nsge > l.inline_sge) return ND_DATA_OVERRUN;
    *total = SgeBytes(sge, nsge);
    if (*total > l.max_transfer) return ND_BUFFER_OVERFLOW;  // R096
    if (inline_data && *total > l.inline_size) return ND_BUFFER_OVERFLOW;
    return ND_SUCCESS;
}

// Receive, on a queue pair or an SRQ: SGE count (ND_DATA_OVERRUN), the SGE
// array (_2), more bytes than one transfer (ND_BUFFER_OVERFLOW).
[[gnu::always_inline]] inline HRESULT CheckReceive(ULONG max_sge, uint64_t max_transfer, const ND2_SGE *sge,
                                                   ULONG nsge) {
    if (nsge > max_sge) return ND_DATA_OVERRUN;
    if (nsge && !sge) return ND_INVALID_PARAMETER_2;
    if (SgeBytes(sge, nsge) > max_transfer) return ND_BUFFER_OVERFLOW;
    return ND_SUCCESS;
}

}  // namespace opennd::kit
