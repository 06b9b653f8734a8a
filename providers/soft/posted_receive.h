// A receive as the provider keeps it: the caller's context and a copy of its
// SGEs (a Receive may reuse its SGE array once the call returns, R091).
#pragma once

#include <cstdint>

#include "ndspi.h"

namespace soft {

struct PostedReceive {
    void *context;
    uint32_t nsge;
    ND2_SGE sge[16];
};

}  // namespace soft
