// What a connected queue pair knows about its peer: the shared channel, the
// peer's process (for cross-memory attach), its wake eventfd and its
// memory-region table (mapped read-only). Built by the connector, handed to
// the queue pair; freed (mappings and descriptors) when both let go.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "channel.h"
#include "mr_table.h"

namespace soft {

struct Connection {
    int cm_fd = -1;  // the CM socket (owned): connection events and peer death
    std::shared_ptr<Channel> channel;
    int side = 0;  // 0 active, 1 passive
    bool peer_uses_srq = false;  // the peer may hold Sends back indefinitely (R048)
    pid_t peer_pid = 0;
    uint64_t peer_qp_id = 0;
    int peer_wake_fd = -1;
    int peer_mr_fd = -1;
    void *peer_mr_map = nullptr;
    MrTableView peer_mrs;

    Connection() = default;
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;
    ~Connection();

    // Takes ownership of the peer's descriptors and maps its MR table.
    bool SetPeer(pid_t pid, uint64_t qp_id, int wake_fd, int mr_fd, std::string *error);
    // Wakes the peer's progress thread if it asked for it (after publishing).
    void WakePeer() const;
};

}  // namespace soft
