// The loopback test provider: a provider library built only for the tests,
// which drives the framework (catalog, loader, Nd* helpers, overlapped I/O,
// kit CQ) with no network. It serves fixed loopback addresses, and its
// behaviour is chosen by the catalog GUID it is loaded under (the last byte
// of the GUID), so one library can play several providers:
//   1 normal: adapter 1 = 127.0.0.1 and ::1, adapter 2 = 127.0.0.2
//   2 DllGetClassObject fails
//   3 serves 127.0.0.1, but OpenAdapter fails (ND_INSUFFICIENT_RESOURCES)
//   4 QueryAddressList fails
//   5 normal, serving 127.0.0.1 only (a second provider for the same address)
// Query reports VendorId = the mode, so a test can tell which one opened.
//
// Test knobs: Register with flag kLoopbackInline completes inline with
// ND_SUCCESS (skip-on-success path); a QP's Send loops back into the same
// QP's posted Receives until it is connected. Connectors and listeners of
// one process connect to each other (connection.cpp), on the kit's state
// machine: the provider's example of a transport under the kit.
#pragma once

#include <cstdint>

#include "ndspi.h"

namespace loopback {

// {4F70656E-4E44-4C6F-6F70-6261636B00xx}
inline GUID ProviderGuid(uint8_t mode) {
    return GUID{0x4F70656E, 0x4E44, 0x4C6F, {0x6F, 0x70, 0x62, 0x61, 0x63, 0x6B, 0x00, mode}};
}
inline bool IsLoopbackGuid(const GUID &g) {
    GUID base = ProviderGuid(0);
    return memcmp(&g, &base, sizeof(GUID) - 1) == 0 && g.Data4[7] >= 1 && g.Data4[7] <= 5;
}

constexpr ULONG kLoopbackInline = 0x40000000;
constexpr ULONG kMaxCqDepth = 1 << 16;
constexpr ULONG kMaxQueueDepth = 4096;
constexpr ULONG kMaxSge = 4;
constexpr ULONG kMaxInlineData = 256;
constexpr ULONG kMaxTransferLength = 32u << 20;

}  // namespace loopback
