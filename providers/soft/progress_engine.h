// The per-adapter engine of the software provider: the memory-region table
// it publishes to peers, the peers' wake descriptors, and the kit's
// progress thread (opennd/kit/progress.h), which sleeps in epoll on the CM
// sockets (connection events, peer death), the TCP streams and each
// connected peer's wake descriptor (connection.h) and, while any CQ has an
// armed Notify, polls every queue pair so that completions arrive without
// the application polling. While nothing is armed, peers never make a
// system call to wake it: the application's own GetResults moves the data.
//
// Lifetime: the adapter and every child object hold a shared_ptr to the
// engine; the progress thread holds it only weakly.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "connection.h"
#include "mr_table.h"
#include "opennd/kit/progress.h"

namespace soft {

using opennd::kit::Watched;
class MemoryWindow;

// A queue pair, as the progress thread and Deregister's barrier see it.
class Pollable : public opennd::kit::Pollable {
public:
    // Returns once no placement into this process's memory that began
    // before the call is still running, or (a stopped peer's copies) once
    // NowMs() passes until_ms: one deadline for a whole barrier.
    virtual void Quiesce(uint64_t until_ms) = 0;

protected:
    ~Pollable() = default;
};

class Engine : public opennd::kit::Progress {
public:
    static std::shared_ptr<Engine> Create();
    ~Engine();

    MrTable &mrs() { return mrs_; }
    PeerEngines &peers() { return peers_; }
    // A peer process that held a copy into our memory past a barrier's
    // bound (QueuePair::DrainPeerCopies): its later connections' copy
    // counters and push claims are not waited for either. Kept while the
    // process lives (a pidfd: a reused pid is another process).
    void MarkStalledPeer(pid_t pid);
    bool StalledPeer(pid_t pid);
    // A same-host peer's wake descriptor (an epoll instance around its
    // eventfd): every write to its eventfd wakes the progress thread. fd
    // must stay open until UnwatchPeerWake returns.
    bool WatchPeerWake(int fd) { return WatchWake(fd); }
    void UnwatchPeerWake(int fd) { UnwatchWake(fd); }
    uint64_t NextQpId() { return next_qp_id_.fetch_add(1) + 1; }
    // Deregister's barrier: once a token is out of the table, waits until
    // no queue pair is still placing data it checked against the old entry
    // (no byte lands in memory after its Deregister completed). Never call
    // it holding a queue pair's lock.
    void QuiescePlacements();
    // Bound windows by (host-order) token: how a peer's Send with
    // Invalidate finds the window it names (InvalidateForPeer,
    // memory_objects.h). Edited under a window's own lock, then this one.
    std::mutex &windows_mu() { return windows_mu_; }
    std::unordered_map<uint32_t, MemoryWindow *> &windows() { return windows_; }

private:
    Engine() = default;

    MrTable mrs_;
    PeerEngines peers_;
    std::atomic<uint64_t> next_qp_id_{0};
    std::mutex mu_;  // guards stalled_peers_
    std::vector<std::pair<pid_t, int>> stalled_peers_;  // (pid, pidfd)
    std::mutex windows_mu_;
    std::unordered_map<uint32_t, MemoryWindow *> windows_;  // requires windows_mu_
};

}  // namespace soft
