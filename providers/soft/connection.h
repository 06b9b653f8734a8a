// What a connected queue pair knows about its peer: the shared channel, the
// peer's process (for cross-memory attach), the peer's engine's memory-region
// table (mapped read-only), and the descriptors that wake each side.
//
// Waking: each side makes an eventfd that only it holds, inside an epoll
// instance, and hands the peer the epoll descriptor, which the peer's
// progress thread watches edge-triggered. Writing our own non-blocking
// eventfd never blocks: no peer can change its flags or fill its count (a
// shared eventfd let a hostile peer do both, and hang the writer). Built by the
// connector, handed to the queue pair; freed when both let go.
//
// Peer engines are shared: every connection to the same engine of the same
// peer process uses one mapping (PeerEngines).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "channel.h"
#include "mr_table.h"
#include "tcp_link.h"

namespace soft {

class Engine;

struct PeerEngine {
    void *mr_map = nullptr;
    MrTableView mrs;
    ~PeerEngine();
};

// The peer engines this engine is connected to, by the identity of their
// memory-region table file.
class PeerEngines {
public:
    // Takes ownership of mr_fd (closing it if the peer engine is already
    // known). nullptr with *error on a bad table. mr_fd -1: the peer's
    // table is not ours to see (a peer engine of its own, no table).
    std::shared_ptr<PeerEngine> Get(int mr_fd, std::string *error);

private:
    std::mutex mu_;
    std::map<std::pair<dev_t, ino_t>, std::weak_ptr<PeerEngine>> known_;
};

// The address peers probe to learn whether cross-memory attach works.
uint64_t ProbeAddress();
// True if this process may and can reach the peer's memory with cross-
// memory attach: it grants us no power the peer lacks (CmaGrantsNothing)
// and process_vm_readv reads the probe word (false when forced off with
// OPENND_SOFT_CMA=0). `uid`: the peer's (CmPeerUid).
bool ProbeCma(pid_t pid, uid_t uid, uint64_t address);
// The kernel checks every cross-memory copy against the target's
// credentials at that moment, so a peer that execs a setuid program is
// out of reach, unless we hold CAP_SYS_PTRACE: then we could be made to
// read and write that program at addresses the peer chose. So: the peer
// runs as our effective uid, and we hold no CAP_SYS_PTRACE unless that
// uid is root (a root peer gains nothing by exec).
bool CmaGrantsNothing(uid_t peer_uid);
// A copy of descriptor `fd` of process `pid` (pidfd_getfd: the same ptrace
// access as cross-memory attach), or -1.
int FetchPeerFd(pid_t pid, int fd);

struct Connection {
    int cm_fd = -1;  // the CM socket (owned): connection events and peer death
    std::shared_ptr<Channel> channel;
    int side = 0;                // 0 active, 1 passive
    bool peer_uses_srq = false;  // the peer may hold Sends back while its SRQ is empty (R048)
    // A Send the peer has not taken fails ND_IO_TIMEOUT after this; a ring-
    // path Read it took, after this without a piece of its answer. Set by
    // SetTimeouts: 3 s, 60 s when the peer says it uses an SRQ; 15 s.
    uint32_t send_timeout_ms = 3000, read_answer_timeout_ms = 15000;
    // Sets peer_uses_srq and the timeouts (OPENND_SOFT_SRQ_SEND_TIMEOUT_MS
    // and OPENND_SOFT_READ_ANSWER_TIMEOUT_MS shorten them for tests).
    void SetTimeouts(bool peer_srq);
    pid_t peer_pid = 0;
    uint64_t peer_qp_id = 0;
    std::shared_ptr<PeerEngine> peer;
    // Cross-memory attach, each way (probed at connection setup). Without
    // it data moves through the ring (MsgType::*Fragment, Read*).
    bool can_access_peer = false;
    bool peer_can_access_us = false;
    // Over TCP (another host, or forced): the socket and its MPA handshake;
    // then cm_fd, channel and peer are unused.
    std::shared_ptr<TcpLink> tcp;
    // Same host: our eventfd, written to wake the peer; the peer's epoll
    // descriptor, watched by our engine (both owned).
    int wake_out = -1;
    int wake_in = -1;
    std::shared_ptr<Engine> wake_engine;  // watches wake_in

    Connection() = default;
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;
    ~Connection();

    // Takes ownership of mr_fd.
    bool SetPeer(PeerEngines &engines, pid_t pid, uint64_t qp_id, int mr_fd, std::string *error);
    // Makes wake_out; returns the epoll descriptor for the peer (the caller
    // closes it once sent), or -1.
    int MakeWake();
    // Takes the peer's wake descriptor (owned from here on, even on
    // failure): it must be an epoll instance; `engine` watches it.
    bool AdoptPeerWake(std::shared_ptr<Engine> engine, int fd, std::string *error);
    const MrTableView &peer_mrs() const { return peer->mrs; }
    // Wakes the peer's progress thread if it asked for it (after publishing).
    void WakePeer() const {
        if (channel->header()->wake_wanted[1 - side].load(std::memory_order_seq_cst)) WakePeerNow();
    }
    void WakePeerNow() const;
};

}  // namespace soft
