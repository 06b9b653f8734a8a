// ndconformance support: one side of a simultaneous connect. Each process
// has its own listener and connector; both connect to each other at the
// same time while accepting (or rejecting) the other's request. Shared by
// the test process and the peer so both sides run the same state machine.
#pragma once

#include "support/objects.h"

namespace ndc {

struct SimultaneousResult {
    HRESULT active = kHang;   // Connect (+ CompleteConnect if it succeeded)
    HRESULT passive = kHang;  // GetConnectionRequest, then Accept or Reject
    std::string detail;
};

// Connects `active` to dest while taking one request on `listener` into
// `passive` and accepting it (or rejecting it when accept is false). Both
// Conns must have been created (QP and connector). Bounded by the wait bound.
SimultaneousResult ConnectSimultaneously(Node &node, Listener &listener, Conn &active, Conn &passive,
                                         const IpAddress &dest, bool accept);

}  // namespace ndc
