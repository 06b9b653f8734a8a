// A receive as the provider keeps it: the caller's context and a copy of its
// SGEs (a Receive may reuse its SGE array once the call returns, R091).
#pragma once

#include <cstdint>

#include "ndspi.h"

namespace soft {

struct PostedReceive {
    static constexpr uint32_t kCapacity = 16;  // kMaxSge
    void *context = nullptr;
    uint32_t nsge = 0;
    ND2_SGE sge[kCapacity];

    PostedReceive() = default;
    PostedReceive(const PostedReceive &o) { *this = o; }
    // Copies only the SGEs in use: a receive is copied into its queue and
    // out again on every message, and the whole array (272 bytes, a `rep
    // movs`) cost more than the rest of posting it.
    PostedReceive &operator=(const PostedReceive &o) {
        Assign(o.context, o.sge, o.nsge);
        return *this;
    }
    void Assign(void *ctx, const ND2_SGE *from, uint32_t n) {
        context = ctx;
        nsge = n < kCapacity ? n : kCapacity;
        for (uint32_t i = 0; i < nsge; ++i) sge[i] = from[i];
    }
};

}  // namespace soft
