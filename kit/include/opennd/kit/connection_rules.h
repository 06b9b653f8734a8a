// The SPI's rules for the arguments and answers of IND2Connector and
// IND2Listener calls (§6, §10, §11) that do not depend on how a provider
// connects: private data sizes, the destination of Connect, read-limit
// negotiation, and copying private data and addresses out. Setup path.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "ndspi.h"
#include "opennd/kit/address.h"

namespace opennd::kit {

// What Windows providers return where the SPI documents another status
// (COMPAT-NOTES): connecting to an unspecified address, and binding an
// address and port already in use (the SPI says ND_SHARING_VIOLATION).
inline constexpr HRESULT kStatusBadNetworkName = static_cast<HRESULT>(0xC00000CCu);
inline constexpr HRESULT kStatusAddressAlreadyAssociated = static_cast<HRESULT>(0xC0000238u);

// Private data given to Connect (`max`: MaxCallerData) or to Accept and
// Reject (MaxCalleeData): too long is ND_INVALID_BUFFER_SIZE and leaves the
// connector usable; bytes promised from a null pointer, ND_ACCESS_VIOLATION.
inline HRESULT CheckPrivateData(const void *data, ULONG size, ULONG max) {
    if (size > max) return ND_INVALID_BUFFER_SIZE;
    if (size && !data) return ND_ACCESS_VIOLATION;
    return ND_SUCCESS;
}

// An address a connector or listener may Bind to: the unspecified address
// or one the adapter serves (else ND_INVALID_ADDRESS).
inline bool BindableAddress(const std::vector<IpAddress> &served, const IpAddress &want) {
    return IsWildcard(want.sa()) || HasIp(served, want.sa());
}

// Connect's destination: an IPv4 or IPv6 address with a port. The
// unspecified address is STATUS_BAD_NETWORK_NAME (COMPAT).
inline HRESULT CheckDestination(const sockaddr *sa, ULONG size, IpAddress *out) {
    if (!FromSockaddr(sa, size, out)) return ND_INVALID_ADDRESS;
    if (IsWildcard(out->sa())) return kStatusBadNetworkName;
    if (Port(out->sa()) == 0) return ND_INVALID_ADDRESS;
    return ND_SUCCESS;
}

// A read limit as granted: what the application asked for, within the
// adapter's maximum and, once known, what the peer offers for the other
// direction. Clamped silently, never refused (R120).
inline ULONG ClampReadLimit(ULONG asked, ULONG adapter_max, ULONG peer_offer = ~0u) {
    return std::min({asked, adapter_max, peer_offer});
}

// GetPrivateData's answer: all of it, or ND_BUFFER_OVERFLOW with the size
// needed and as much as fits copied (D14).
inline HRESULT CopyOutPrivateData(const void *src, ULONG len, void *data, ULONG *size) {
    if (!data || *size < len) {
        if (data && *size) std::memcpy(data, src, *size);
        *size = len;
        return ND_BUFFER_OVERFLOW;
    }
    if (len) std::memcpy(data, src, len);
    *size = len;
    return ND_SUCCESS;
}

// GetLocalAddress and GetPeerAddress: ND_BUFFER_OVERFLOW with the size
// needed when the buffer is missing or short.
inline HRESULT CopyOutAddress(const IpAddress &a, sockaddr *out, ULONG *size) {
    if (!size) return ND_INVALID_PARAMETER_2;
    if (!out || *size < a.length()) {
        *size = a.length();
        return ND_BUFFER_OVERFLOW;
    }
    std::memcpy(out, &a.storage, a.length());
    *size = a.length();
    return ND_SUCCESS;
}

}  // namespace opennd::kit
