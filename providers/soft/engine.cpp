#include "engine.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cerrno>

namespace soft {

std::shared_ptr<Engine> Engine::Create() {
    // Each connection holds a socket: let a process have as many as it may
    // (1,000 connections must not run into the default soft limit of 1,024).
    rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max && lim.rlim_cur < 65536) {
        lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 65536);
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    std::shared_ptr<Engine> e(new Engine);
    if (!e->mrs_.ok()) return nullptr;
    e->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    e->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (e->wake_fd_ < 0 || e->epoll_fd_ < 0) return nullptr;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = e->wake_fd_;
    if (epoll_ctl(e->epoll_fd_, EPOLL_CTL_ADD, e->wake_fd_, &ev) != 0) return nullptr;
    e->thread_ = std::thread([raw = e.get()] { raw->Run(); });
    return e;
}

Engine::~Engine() {
    stop_ = true;
    Kick();
    if (thread_.joinable()) {
        // The last reference can be dropped by the progress thread itself
        // (it held the last object alive); it then exits on its own. The
        // provider library is never unloaded (-z nodelete), so its code stays.
        if (thread_.get_id() == std::this_thread::get_id())
            thread_.detach();
        else
            thread_.join();
    }
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
}

void Engine::Watch(int fd, Watched *w) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        watched_[fd] = w;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
}

void Engine::Unwatch(int fd) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    std::lock_guard<std::mutex> lock(mu_);
    watched_.erase(fd);
}

void Engine::AddPollable(Pollable *p) {
    std::lock_guard<std::mutex> lock(mu_);
    pollables_.push_back(p);
}

void Engine::RemovePollable(Pollable *p) {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(pollables_, p);
}

void Engine::Kick() {
    uint64_t one = 1;
    ssize_t n = write(wake_fd_, &one, sizeof one);
    (void)n;
}

void Engine::PollAll(bool armed_changed, bool armed) {
    std::vector<Pollable *> snapshot;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (Pollable *p : pollables_)
            if (p->TryRef()) snapshot.push_back(p);
    }
    for (Pollable *p : snapshot) {
        if (armed_changed) p->WantWakeups(armed);
        p->Poll();
    }
    // While a Notify waits, spin a little before sleeping: a message often
    // arrives within microseconds, a wake-up costs tens of them here.
    // OPENND_SOFT_SPIN_US microseconds (default 0: measured slower on 2-core VMs,
    // where the spinning thread takes the core the peer needs).
    static const long spin_us = [] {
        const char *s = getenv("OPENND_SOFT_SPIN_US");
        return s && *s ? std::max(0L, std::atol(s)) : 0L;
    }();
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

void Engine::Run() {
    bool armed = false;
    while (!stop_.load()) {
        bool now_armed = false;
        {
            std::vector<Pollable *> snapshot;
            {
                std::lock_guard<std::mutex> lock(mu_);
                for (Pollable *p : pollables_)
                    if (p->TryRef()) snapshot.push_back(p);
            }
            for (Pollable *p : snapshot) now_armed = now_armed || p->NotifyArmed();
            for (Pollable *p : snapshot) p->Unref();
        }
        // Poll once after flagging "wake me", so nothing published before the
        // flag was visible is missed; then sleep. While armed, a timeout bounds
        // how late a send timeout can be noticed.
        PollAll(now_armed != armed, now_armed);
        armed = now_armed;
        epoll_event events[16];
        int n = epoll_wait(epoll_fd_, events, 16, armed ? 200 : 1000);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < n; ++i) {
            int fd = events[i].data.fd;
            if (fd == wake_fd_) {
                uint64_t v;
                ssize_t r = read(wake_fd_, &v, sizeof v);
                (void)r;
                continue;
            }
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
    }
}

}  // namespace soft
