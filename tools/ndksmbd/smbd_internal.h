// Private pieces shared by the smbd_*.cpp files.
#pragma once

#include "smbd_connection.h"

namespace smbd {

constexpr size_t kSendSlots = 32;     // messages in flight (each max_send_size bytes)
constexpr ULONG kOpSlots = 64;        // RDMA, bind and invalidate requests in flight
constexpr ULONG kReadLimit = 16;      // IRD/ORD asked for at connection time

// What a work request's RequestContext points to.
struct Connection::Context {
    enum class Kind { Receive, Send, Op } kind = Kind::Receive;
    size_t index = 0;  // Receive/Send: the buffer slot
    Op *op = nullptr;  // Op: the waiting request
};

// RDMA Read/Write, Bind or Invalidate requests waited for together. Heap
// allocated: it must outlive every completion it counts.
struct Connection::Op {
    Context ctx;
    int pending = 0;                  // guarded by the connection's mu_
    NTSTATUS status = STATUS_SUCCESS; // first failure
    Op() {
        ctx.kind = Context::Kind::Op;
        ctx.op = this;
    }
};

}  // namespace smbd
