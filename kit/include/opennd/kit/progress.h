// A progress service a provider may use: one thread per instance (usually
// per adapter) that sleeps in epoll on the descriptors the provider watches
// (CM sockets, streams, a peer's wake descriptor) and, while any of its
// pollables has a Notify armed, polls them all so completions arrive
// without the application polling. While nothing is armed and nothing is
// readable, it makes no call into the provider.
//
// Lifetime: a provider derives its engine from Progress and owns it with a
// shared_ptr; the thread holds it only weakly (never while it sleeps), so
// the last reference can be dropped anywhere, the thread included. Watched
// objects and pollables are registered by raw pointer and found again with
// TryRef, so the thread never keeps alive an object the application has
// released; they unregister in their destructors.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

struct epoll_event;

namespace opennd::kit {

// Something with a descriptor the progress thread watches.
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
    // Called when "any Notify armed" changes: a transport whose peer must
    // be asked for wake-ups asks (or stops asking) here.
    virtual void WantWakeups(bool on) = 0;
    virtual bool NotifyArmed() = 0;

protected:
    ~Pollable() = default;
};

struct ProgressConfig {
    // While armed, the longest sleep: bounds how late a timeout is seen,
    // and makes a lost wake-up show as this delay.
    int armed_poll_ms = 200;
    // The longest a parked stream goes unlooked-at (Park).
    int park_ms = 1;
    // While armed, spin this long polling before sleeping (0: never).
    long spin_us = 0;
};

class Progress {
public:
    Progress(const Progress &) = delete;
    Progress &operator=(const Progress &) = delete;

    // fd must stay open until Unwatch returns. Level-triggered, readable.
    void Watch(int fd, Watched *w);
    // A stream: edge-triggered, readable and writable (the watcher reads
    // and writes until the socket would block).
    void WatchStream(int fd, Watched *w);
    void Unwatch(int fd);
    // A descriptor with no watcher (a peer's wake eventfd, or an epoll
    // instance around one): each event only makes the thread pass over the
    // pollables. Edge-triggered.
    bool WatchWake(int fd);
    void UnwatchWake(int fd);
    void AddPollable(Pollable *p);
    // Returns once no ForEachPollable is still passing p.
    void RemovePollable(Pollable *p);
    // Wakes the thread to look again (a Notify was armed).
    void Kick();
    // Has the thread call fd's watcher again soon, as if the descriptor had
    // signalled: for an event another thread consumed (an edge-triggered
    // watch fires once).
    void Redispatch(int fd);
    // A stream whose application is busy polling (it reads the socket
    // itself): stop waking the thread for it. `polled` is the time of the
    // application's last poll (NowNs). The thread looks at it kParkLookNs
    // later, then at twice the last interval, up to the park time: while
    // the application polls, the stream stays parked; at the first look
    // that finds no poll since the one before, it is watched again and its
    // watcher called, which may park it again. An application that polled
    // briefly and stopped gets its data within about 2 x kParkLookNs.
    // Progress thread only.
    void Park(int fd, std::shared_ptr<const std::atomic<uint64_t>> polled);
    static constexpr uint64_t kParkLookNs = 50 * 1000;
    // Calls fd's watcher once, as for an event, when NowMs() reaches at_ms:
    // a watcher's own deadline (it looks at the time itself; it may also be
    // called earlier). One time per fd: a later call replaces it. Unwatch
    // forgets it.
    void WakeAt(int fd, uint64_t at_ms);
    // While any timer is registered the thread passes every few
    // milliseconds (a hold that must end on time).
    void AddTimer() {
        timers_.fetch_add(1);
        Kick();
    }
    void RemoveTimer() { timers_.fetch_sub(1); }
    // True while the thread is polling for an armed Notify: a queue pair
    // that connects now must ask its peer for wake-ups at once.
    bool armed() const { return armed_.load(std::memory_order_seq_cst); }

protected:
    Progress();
    ~Progress();
    // Starts the thread; self is the shared_ptr that owns this object.
    bool Start(std::weak_ptr<Progress> self, const ProgressConfig &config);
    // A barrier over the pollables: calls fn for each one registered now,
    // including one whose last reference is gone but whose destructor has
    // not yet unregistered it (its RemovePollable waits until fn returns).
    // Dying ones first. No lock is held while fn runs.
    void ForEachPollable(const std::function<void(Pollable *)> &fn);

private:
    // What the thread needs even after the object is gone.
    struct Loop {
        int wake_fd = -1;
        int epoll_fd = -1;
        ProgressConfig config;
        std::atomic<bool> stop{false};
        ~Loop();
    };
    static void Run(std::weak_ptr<Progress> weak, std::shared_ptr<Loop> loop);
    static constexpr int kMaxEvents = 16;
    static int Wait(const std::weak_ptr<Progress> &weak, Loop &loop, ::epoll_event *events, int timeout_ms);
    bool AnyArmed();
    void PollAll(bool armed_changed, bool armed);
    void Dispatch(int fd);
    void Add(int fd, Watched *w, uint32_t events);
    // The looks due at `now` (Park); 0, or when the next one is due.
    uint64_t LookAtParked(uint64_t now);
    // Calls the watchers whose WakeAt time came; returns the milliseconds
    // to the next one, at most `most`.
    int WakeDue(int most);
    // The pollables still alive, each with a reference the caller drops.
    std::vector<Pollable *> LivePollables();

    std::shared_ptr<Loop> loop_ = std::make_shared<Loop>();
    std::mutex mu_;  // guards watched_, redispatch_, parked_, wake_at_
    // Guards pollables_ and passing_; held only briefly. RemovePollable
    // waits on passed_cv_ while its pollable is being passed without a
    // reference (ForEachPollable).
    std::mutex pollables_mu_;
    std::condition_variable passed_cv_;
    std::vector<Pollable *> passing_;  // a multiset: barriers may overlap
    std::unordered_map<int, Watched *> watched_;
    std::vector<int> redispatch_;
    struct ParkedStream {
        int fd;
        std::shared_ptr<const std::atomic<uint64_t>> polled;
        uint64_t seen;  // *polled at the last look
        uint64_t interval_ns, next_look_ns;
    };
    std::vector<ParkedStream> parked_;
    std::vector<std::pair<int, uint64_t>> wake_at_;  // (fd, NowMs)
    std::vector<Pollable *> pollables_;
    std::atomic<bool> armed_{false};
    std::atomic<int> timers_{0};
    std::thread thread_;
};

}  // namespace opennd::kit
