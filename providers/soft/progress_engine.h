// The per-adapter engine of the software provider: the memory-region table
// it publishes to peers, the descriptors peers wake it through, and the
// progress thread.
//
// The progress thread sleeps in epoll on the CM sockets (connection events,
// peer death), its own wake eventfd (Kick; never shared), each connected
// peer's wake descriptor (connection.h) and, while any CQ has an armed Notify, polls
// every queue pair so that completions arrive without the application
// polling. While nothing is armed, peers never make a system call to wake it:
// the application's own GetResults moves the data.
//
// Lifetime: the adapter and every child object hold a shared_ptr to the
// engine. Watched objects are registered by raw pointer and found again with
// TryAddRef, so the thread never keeps an object alive that the application
// has released; objects unregister in their destructors.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "connection.h"
#include "mr_table.h"

struct epoll_event;

namespace soft {

// Something with a CM socket the progress thread watches.
class Watched {
public:
    virtual bool TryRef() = 0;
    virtual void Unref() = 0;
    virtual void OnReadable(int fd) = 0;

protected:
    ~Watched() = default;
};

// Something the progress thread polls while notifications are armed.
class Pollable {
public:
    virtual bool TryRef() = 0;
    virtual void Unref() = 0;
    virtual void Poll() = 0;
    // Sets or clears "wake me" in its channel.
    virtual void WantWakeups(bool on) = 0;
    virtual bool NotifyArmed() = 0;
    // Returns once no placement into this process's memory that began
    // before the call is still running, or (a stopped peer's copies) once
    // NowMs() passes until_ms: one deadline for a whole barrier.
    virtual void Quiesce(uint64_t until_ms) = 0;

protected:
    ~Pollable() = default;
};

class Engine {
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
    // eventfd): watched edge-triggered, every write to its eventfd wakes the
    // progress thread. fd must stay open until UnwatchPeerWake returns.
    bool WatchPeerWake(int fd);
    void UnwatchPeerWake(int fd);
    uint64_t NextQpId() { return next_qp_id_.fetch_add(1) + 1; }

    // fd must stay open until Unwatch returns.
    void Watch(int fd, Watched *w);
    // A TCP stream: edge-triggered, readable and writable (the watcher
    // reads and writes until the socket would block).
    void WatchStream(int fd, Watched *w);
    void Unwatch(int fd);
    void AddPollable(Pollable *p);
    void RemovePollable(Pollable *p);
    // Deregister's barrier: once a token is out of the table, waits until
    // no queue pair is still placing data it checked against the old entry
    // (no byte lands in memory after its Deregister completed). Never call
    // it holding a queue pair's lock.
    void QuiescePlacements();
    // Wakes the progress thread to look again (a Notify was armed).
    void Kick();
    // Has the progress thread call fd's watcher again soon, as if the socket
    // had signalled: for an event another thread consumed (an edge-triggered
    // watch fires once).
    void Redispatch(int fd);
    // A stream whose application is busy polling (it reads the socket
    // itself): stop waking the progress thread for it. `polled` is the
    // time of the application's last poll (NowNs). The progress thread
    // looks at it kParkLookNs later, then at twice the last interval, up
    // to the park time (1 ms; OPENND_SOFT_PARK_MS, which tests raise to
    // make a wrong park show): while the application polls, the stream
    // stays parked; at the first look that finds no poll since the one
    // before, it is watched again and its watcher called, which may park
    // it again. An application that polled briefly and stopped (to wait on
    // memory a Write fills) gets its data within about 2 x kParkLookNs.
    // Progress thread only.
    void Park(int fd, std::shared_ptr<const std::atomic<uint64_t>> polled);
    static constexpr uint64_t kParkLookNs = 50 * 1000;
    // Calls fd's watcher once, as for a socket event, when NowMs() reaches
    // at_ms: a watcher's own deadline (it looks at the time itself; a
    // watcher may also be called earlier). One time per fd: a later call
    // replaces it. Unwatch forgets it.
    void WakeAt(int fd, uint64_t at_ms);
    // While any timer is registered the progress thread passes every few
    // milliseconds (a hold that must end on time).
    void AddTimer() {
        timers_.fetch_add(1);
        Kick();
    }
    void RemoveTimer() { timers_.fetch_sub(1); }
    // True while the progress thread is polling for an armed Notify: a QP
    // that connects now must ask its peer for wake-ups at once.
    bool armed() const { return armed_.load(std::memory_order_seq_cst); }

private:
    // What the progress thread needs even after the engine is gone: it holds
    // the engine only weakly (and never while it sleeps), so the last
    // reference can be dropped anywhere, the progress thread included.
    struct Loop {
        int wake_fd = -1;
        int epoll_fd = -1;
        int armed_poll_ms = 200;  // OPENND_SOFT_ARMED_POLL_MS when the engine was created
        int park_ms = 1;          // OPENND_SOFT_PARK_MS, likewise (Park)
        std::atomic<bool> stop{false};
        ~Loop();
    };
    Engine() = default;
    static void Run(std::weak_ptr<Engine> weak, std::shared_ptr<Loop> loop);
    static constexpr int kMaxEvents = 16;
    static int Wait(const std::weak_ptr<Engine> &weak, Loop &loop, ::epoll_event *events, int timeout_ms);
    bool AnyArmed();
    void PollAll(bool armed_changed, bool armed);
    void Dispatch(int fd);
    void Add(int fd, Watched *w, uint32_t events);
    // The looks due at `now` (Park); 0, or when the next one is due.
    uint64_t LookAtParked(uint64_t now);
    // Calls the watchers whose WakeAt time came; returns the milliseconds
    // to the next one, at most `most`.
    int WakeDue(int most);
    // The pollables still alive, each with a reference the caller drops (Unref).
    std::vector<Pollable *> LivePollables();

    MrTable mrs_;
    PeerEngines peers_;
    std::shared_ptr<Loop> loop_ = std::make_shared<Loop>();
    std::atomic<uint64_t> next_qp_id_{0};
    std::mutex mu_;  // guards watched_
    // Guards pollables_ and passing_; held only briefly (never while a
    // Quiesce runs). RemovePollable waits on passed_cv_ while its pollable
    // is being passed without a reference (QuiescePlacements).
    std::mutex pollables_mu_;
    std::condition_variable passed_cv_;
    std::vector<Pollable *> passing_;  // a multiset: barriers may overlap
    std::unordered_map<int, Watched *> watched_;
    std::vector<int> redispatch_;  // requires mu_
    struct ParkedStream {
        int fd;
        std::shared_ptr<const std::atomic<uint64_t>> polled;
        uint64_t seen;  // *polled at the last look
        uint64_t interval_ns, next_look_ns;
    };
    std::vector<ParkedStream> parked_;  // requires mu_
    std::vector<std::pair<int, uint64_t>> wake_at_;  // (fd, NowMs), requires mu_
    std::vector<std::pair<pid_t, int>> stalled_peers_;  // (pid, pidfd), requires mu_
    std::vector<Pollable *> pollables_;
    std::atomic<bool> armed_{false};
    std::atomic<int> timers_{0};
    std::thread thread_;
};

}  // namespace soft
