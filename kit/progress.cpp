#include "opennd/kit/progress.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "opennd/kit/clock.h"

namespace opennd::kit {

Progress::Progress() = default;

bool Progress::Start(std::weak_ptr<Progress> self, const ProgressConfig &config) {
    Loop &loop = *loop_;
    loop.config = config;
    loop.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (loop.wake_fd < 0 || loop.epoll_fd < 0) return false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = loop.wake_fd;
    if (epoll_ctl(loop.epoll_fd, EPOLL_CTL_ADD, loop.wake_fd, &ev) != 0) return false;
    thread_ = std::thread(&Progress::Run, std::move(self), loop_);
    return true;
}

Progress::Loop::~Loop() {
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
}

// A derived class's members are gone by now; the thread cannot be inside
// this object (it holds it only through a shared_ptr, and the count is 0).
Progress::~Progress() {
    loop_->stop = true;
    Kick();
    if (thread_.joinable()) {
        // The thread itself may drop the last reference; it then finds
        // `stop` set and returns without touching this object again. A
        // provider library is never unloaded (-z nodelete), so its code stays.
        if (thread_.get_id() == std::this_thread::get_id())
            thread_.detach();
        else
            thread_.join();
    }
}

// A pollable whose last reference is gone may still be working for a call
// already running (a queue pair's CQ pollers until its destructor stopped
// them); only then does it leave the list. So one that cannot be referenced
// any more is passed too: listed in passing_, which keeps its
// RemovePollable (and so its destructor) waiting until we are done.
void Progress::ForEachPollable(const std::function<void(Pollable *)> &fn) {
    std::vector<Pollable *> live, dying;
    {
        std::lock_guard<std::mutex> lock(pollables_mu_);
        for (Pollable *p : pollables_) {
            if (p->TryRef()) {
                live.push_back(p);
            } else {
                dying.push_back(p);
                passing_.push_back(p);
            }
        }
    }
    for (Pollable *p : dying) fn(p);
    if (!dying.empty()) {
        std::lock_guard<std::mutex> lock(pollables_mu_);
        for (Pollable *p : dying) passing_.erase(std::find(passing_.begin(), passing_.end(), p));
        passed_cv_.notify_all();
    }
    for (Pollable *p : live) {
        fn(p);
        p->Unref();
    }
}

void Progress::Watch(int fd, Watched *w) { Add(fd, w, EPOLLIN | EPOLLRDHUP); }

namespace {
constexpr uint32_t kStreamEvents = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
}

void Progress::WatchStream(int fd, Watched *w) { Add(fd, w, kStreamEvents); }

void Progress::Park(int fd, std::shared_ptr<const std::atomic<uint64_t>> polled) {
    std::lock_guard<std::mutex> lock(mu_);  // with the MOD: Unwatch (and a reuse of fd) cannot come between
    if (!watched_.count(fd) ||
        std::any_of(parked_.begin(), parked_.end(), [fd](const ParkedStream &p) { return p.fd == fd; }))
        return;
    const uint64_t seen = polled->load(std::memory_order_relaxed);
    parked_.push_back({fd, std::move(polled), seen, kParkLookNs, NowNs() + kParkLookNs});
    epoll_event ev{};
    ev.events = EPOLLET;  // edge-triggered even for hang-ups: reported once, not in a loop
    ev.data.fd = fd;
    epoll_ctl(loop_->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
}

// A stream whose application polled since the last look stays parked and
// is looked at again after twice the interval (at most the park time);
// the others are watched again and their watchers called: whatever came
// while they were parked is looked at now (re-arming an edge-triggered fd
// that is ready reports it, too).
uint64_t Progress::LookAtParked(uint64_t now) {
    std::vector<int> fds;
    uint64_t next = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        const uint64_t most = static_cast<uint64_t>(loop_->config.park_ms) * 1000000;
        std::erase_if(parked_, [&](ParkedStream &p) {
            if (now < p.next_look_ns) {
                next = next ? std::min(next, p.next_look_ns) : p.next_look_ns;
                return false;
            }
            const uint64_t polled = p.polled->load(std::memory_order_relaxed);
            if (polled != p.seen) {  // still polling
                p.seen = polled;
                p.interval_ns = std::min(p.interval_ns * 2, std::max(most, kParkLookNs));
                p.next_look_ns = now + p.interval_ns;
                next = next ? std::min(next, p.next_look_ns) : p.next_look_ns;
                return false;
            }
            if (watched_.count(p.fd)) {
                epoll_event ev{};
                ev.events = kStreamEvents;
                ev.data.fd = p.fd;
                epoll_ctl(loop_->epoll_fd, EPOLL_CTL_MOD, p.fd, &ev);  // under mu_: Unwatch cannot interleave
                fds.push_back(p.fd);
            }
            return true;
        });
    }
    for (int fd : fds) Dispatch(fd);
    return next;
}

void Progress::WakeAt(int fd, uint64_t at_ms) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = std::find_if(wake_at_.begin(), wake_at_.end(), [fd](const auto &w) { return w.first == fd; });
        if (it == wake_at_.end())
            wake_at_.emplace_back(fd, at_ms);
        else
            it->second = at_ms;  // one time per watcher
    }
    Kick();  // the progress thread's sleep may end later
}

int Progress::WakeDue(int most) {
    std::vector<int> due;
    uint64_t next = 0;
    const uint64_t now = NowMs();
    {
        std::lock_guard<std::mutex> lock(mu_);
        std::erase_if(wake_at_, [&](const std::pair<int, uint64_t> &w) {
            if (now >= w.second) {
                due.push_back(w.first);
                return true;
            }
            next = next ? std::min(next, w.second) : w.second;
            return false;
        });
    }
    for (int fd : due) Dispatch(fd);
    return next ? static_cast<int>(std::min<uint64_t>(next - now, static_cast<uint64_t>(most))) : most;
}

void Progress::Add(int fd, Watched *w, uint32_t events) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        watched_[fd] = w;
    }
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(loop_->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

bool Progress::WatchWake(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.fd = fd;  // no watcher: the pass after any event polls every queue pair
    return epoll_ctl(loop_->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void Progress::UnwatchWake(int fd) {
    std::lock_guard<std::mutex> lock(mu_);  // as Unwatch: Dispatch finds no watcher for it either way
    epoll_ctl(loop_->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
}

void Progress::Unwatch(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    epoll_ctl(loop_->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    watched_.erase(fd);
    std::erase_if(parked_, [fd](const ParkedStream &p) { return p.fd == fd; });
    std::erase_if(wake_at_, [fd](const std::pair<int, uint64_t> &w) { return w.first == fd; });
}

void Progress::AddPollable(Pollable *p) {
    std::lock_guard<std::mutex> lock(pollables_mu_);
    pollables_.push_back(p);
}

void Progress::RemovePollable(Pollable *p) {
    std::unique_lock<std::mutex> lock(pollables_mu_);
    std::erase(pollables_, p);
    // A barrier passing it without a reference (ForEachPollable) needs
    // it alive until done.
    passed_cv_.wait(lock, [&] { return std::find(passing_.begin(), passing_.end(), p) == passing_.end(); });
}

std::vector<Pollable *> Progress::LivePollables() {
    std::vector<Pollable *> live;
    std::lock_guard<std::mutex> lock(pollables_mu_);
    for (Pollable *p : pollables_)
        if (p->TryRef()) live.push_back(p);
    return live;
}

void Progress::Redispatch(int fd) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        redispatch_.push_back(fd);
    }
    Kick();
}

void Progress::Kick() {
    uint64_t one = 1;
    ssize_t n = write(loop_->wake_fd, &one, sizeof one);
    (void)n;
}

void Progress::PollAll(bool armed_changed, bool armed) {
    const std::vector<Pollable *> snapshot = LivePollables();
    for (Pollable *p : snapshot) {
        if (armed_changed) p->WantWakeups(armed);
        p->Poll();
    }
    // While a Notify waits, spin a little before sleeping, if configured:
    // a message often arrives within microseconds, a wake-up costs tens of
    // them (measured slower on 2-core VMs, where the spinning thread takes
    // the core the peer needs).
    const long spin_us = loop_->config.spin_us;
    if (armed && spin_us > 0) {
        auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
        bool waiting = true;
        while (waiting && std::chrono::steady_clock::now() < until) {
            waiting = false;
            for (Pollable *p : snapshot) {
                p->Poll();
                waiting = waiting || p->NotifyArmed();
            }
        }
    }
    for (Pollable *p : snapshot) p->Unref();
}

bool Progress::AnyArmed() {
    const std::vector<Pollable *> snapshot = LivePollables();
    bool armed = false;
    for (Pollable *p : snapshot) armed = armed || p->NotifyArmed();
    for (Pollable *p : snapshot) p->Unref();
    return armed;
}

void Progress::Dispatch(int fd) {
    Watched *w = nullptr;
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = watched_.find(fd);
        if (it != watched_.end() && it->second->TryRef()) w = it->second;
    }
    if (w) {
        w->OnReadable(fd);
        w->Unref();
    }
}

// epoll_wait for up to timeout_ms; while streams are parked, in steps to
// their next looks (LookAtParked). Holds the engine only for the looks.
int Progress::Wait(const std::weak_ptr<Progress> &weak, Loop &loop, epoll_event *events, int timeout_ms) {
    const uint64_t until = NowNs() + static_cast<uint64_t>(timeout_ms) * 1000000;
    for (;;) {
        uint64_t now = NowNs(), next = 0;
        if (now >= until) return 0;
        if (std::shared_ptr<Progress> e = weak.lock()) next = e->LookAtParked(now);
        if (loop.stop.load()) return 0;  // (that may have been the last reference)
        if (next == 0) break;
        now = NowNs();
        const uint64_t step = std::min(until, std::max(next, now)) - std::min(now, until);
        timespec ts{static_cast<time_t>(step / 1000000000), static_cast<long>(step % 1000000000)};
        int n = epoll_pwait2(loop.epoll_fd, events, kMaxEvents, &ts, nullptr);
        if (n < 0 && errno == ENOSYS) break;  // a kernel before 5.11: milliseconds
        if (n != 0 || loop.stop.load()) return n;
    }
    const uint64_t now = NowNs();
    int left = now >= until ? 0 : static_cast<int>((until - now + 999999) / 1000000);
    if (std::shared_ptr<Progress> e = weak.lock()) {
        std::lock_guard<std::mutex> lock(e->mu_);
        if (!e->parked_.empty()) left = std::min(left, loop.config.park_ms);  // (no epoll_pwait2)
    }
    return epoll_wait(loop.epoll_fd, events, kMaxEvents, left);
}

void Progress::Run(std::weak_ptr<Progress> weak, std::shared_ptr<Loop> loop) {
    // The park looks sleep from kParkLookNs: not the default 50 us of slack on top.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    bool armed = false;
    while (!loop->stop.load()) {
        {
            std::shared_ptr<Progress> e = weak.lock();
            if (!e) return;
            // Poll once after flagging "wake me", so nothing published before
            // the flag was visible is missed; then sleep. While armed, the
            // timeout bounds how late a send timeout is noticed.
            bool now_armed = e->AnyArmed();
            e->armed_.store(now_armed, std::memory_order_seq_cst);
            e->PollAll(now_armed != armed, now_armed);
            armed = now_armed;
        }  // may run the destructor here (it sets stop and detaches this thread)
        if (loop->stop.load()) return;
        epoll_event events[kMaxEvents];
        // While armed, a timeout bounds how late a send timeout is noticed; a
        // lost wake-up would show as this delay (ProgressConfig::armed_poll_ms).
        int timeout = armed ? loop->config.armed_poll_ms : 1000;
        {
            std::shared_ptr<Progress> e = weak.lock();
            if (e && e->timers_.load() > 0) timeout = std::min(timeout, 10);
            if (e) timeout = e->WakeDue(timeout);
        }  // (may run the destructor, as above)
        if (loop->stop.load()) return;
        int n = Wait(weak, *loop, events, timeout);
        if (n < 0 && errno != EINTR) return;
        if (loop->stop.load()) return;
        std::shared_ptr<Progress> e = weak.lock();
        if (!e) return;
        for (int i = 0; i < n; ++i) {
            if (events[i].data.fd == loop->wake_fd) {
                uint64_t v;
                ssize_t r = read(loop->wake_fd, &v, sizeof v);
                (void)r;
            } else {
                e->Dispatch(events[i].data.fd);
            }
        }
        std::vector<int> again;
        {
            std::lock_guard<std::mutex> lock(e->mu_);
            again.swap(e->redispatch_);
        }
        for (int fd : again) e->Dispatch(fd);
        e->LookAtParked(NowNs());  // (without epoll_pwait2, the only looks)
    }
}

}  // namespace opennd::kit
