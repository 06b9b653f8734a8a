// The software provider's advertised limits (ND2_ADAPTER_INFO). They are
// what the implementation really supports: applications use them as-is.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include "ndspi.h"
#include "posted_receive.h"
#include "shm_wire.h"
#include "opennd/params.h"

namespace soft {

// A time in milliseconds from the environment (tests shorten timeouts):
// `otherwise` when unset or not a positive number, at most an hour.
inline uint32_t EnvMs(const char *name, uint32_t otherwise) {
    const long v = opennd::ParamLong(name, 0);
    return v > 0 ? static_cast<uint32_t>(std::min(v, 3600L * 1000)) : otherwise;
}

constexpr UINT16 kVendorId = 0x4F4E;  // "ON"
constexpr UINT16 kDeviceId = 0x0001;
constexpr UINT64 kAdapterId = 1;      // one adapter serves every local address
constexpr SIZE_T kMaxRegistrationSize = SIZE_T(1) << 40;
constexpr ULONG kMaxSge = 16;
static_assert(PostedReceive::kCapacity == kMaxSge, "a posted receive holds every SGE a Receive may have");
constexpr ULONG kMaxTransferLength = 1u << 30;
constexpr ULONG kMaxInlineData = kInlineThreshold;
constexpr ULONG kMaxReadLimit = 128;
constexpr ULONG kMaxQueueDepth = 16384;
constexpr ULONG kMaxCqDepth = 1u << 18;
constexpr ULONG kInlineRequestThreshold = 512;
constexpr ULONG kLargeRequestThreshold = 16384;
constexpr ULONG kSendTimeoutMs = 3000;  // a Send nobody receives fails with ND_IO_TIMEOUT
constexpr ULONG kSrqSendTimeoutMs = 60000;  // ... when the peer's QP says it uses an SRQ (R048)
constexpr ULONG kReadAnswerTimeoutMs = 15000;  // a ring-path Read the peer took and stopped answering
constexpr uint32_t kQuiesceLimitMs = 5000;  // Deregister's longest wait for a stopped peer's copy
// A Send this large is copied from both ends (PushRequest, shm_path_push.cpp);
// below it asking costs the receiver more than half a copy saves.
constexpr uint64_t kPushMin = 256 * 1024;
// Accepted connections that have not sent their request yet, per listener
// (Listener::AdmitLocked): this many, a quarter of them per peer (uid, or
// remote IP), before the oldest that had its grace goes; four times this
// many at most; none older than the timeout. A host that opens connections
// and sends nothing cannot use up descriptors, nor crowd out clients about
// to send their request.
constexpr size_t kMaxHandshakes = 256;
constexpr uint32_t kHandshakeGraceMs = 1000;  // never dropped for the bound before this
// Half-open handshakes a listener keeps at the very most, grace or not: a
// quarter of this process's descriptors, within 256 to 1024.
inline size_t HardHandshakes() {
    rlimit rl{};
    const size_t files = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<size_t>(rl.rlim_cur) : 1024;
    return std::clamp<size_t>(files / 4, kMaxHandshakes, 4 * kMaxHandshakes);
}
constexpr uint32_t kHandshakeTimeoutMs = 10000;
// Requests a listener holds for GetConnectionRequest at the very most,
// whatever its backlog (Listen(0): "no limit", R147), each holding a
// socket, a wake descriptor and a channel mapping: a quarter of this
// process's descriptors, within 256 to 4096 (OPENND_SOFT_MAX_QUEUED lowers
// it for tests). One peer (a uid, or a remote IP) holds a quarter of that
// at most. Past either a request is refused, as with a full backlog.
inline size_t HardQueuedRequests() {
    rlimit rl{};
    const size_t files = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? static_cast<size_t>(rl.rlim_cur) : 1024;
    size_t n = std::clamp<size_t>(files / 4, 256, 4096);
    if (const long v = opennd::ParamLong("OPENND_SOFT_MAX_QUEUED", 0); v > 0) n = std::min(n, static_cast<size_t>(v));
    return n;
}
// How long an Accept waits for the initiator to complete (its Ready, or
// over TCP its RTR) before it fails ND_IO_TIMEOUT: 30 s, lenient to a slow
// program (the SPI asks providers to be), bounded for one that never does.
// OPENND_SOFT_ACCEPT_TIMEOUT_MS (read at each Accept: tests set it per case).
inline uint32_t AcceptTimeoutMs() { return EnvMs("OPENND_SOFT_ACCEPT_TIMEOUT_MS", 30000); }

}  // namespace soft
