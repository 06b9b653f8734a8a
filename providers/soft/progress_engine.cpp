#include "progress_engine.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "soft_clock.h"
#include "soft_limits.h"
#include "opennd/params.h"

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
    opennd::kit::ProgressConfig config;
    // OPENND_SOFT_ARMED_POLL_MS (default 200) lets a test make a lost wake-up
    // obvious. Read per engine (per adapter), not once per process, so a test
    // can set it for the adapters it opens whatever ran before it.
    config.armed_poll_ms = static_cast<int>(EnvMs("OPENND_SOFT_ARMED_POLL_MS", 200));
    config.park_ms = static_cast<int>(EnvMs("OPENND_SOFT_PARK_MS", 1));
    // Default 0: spinning measured slower on 2-core VMs.
    config.spin_us = std::max(0L, opennd::ParamLong("OPENND_SOFT_SPIN_US", 0));
    if (!e->Start(e, config)) return nullptr;
    return e;
}

Engine::~Engine() {
    for (const auto &p : stalled_peers_) close(p.second);
}

void Engine::MarkStalledPeer(pid_t pid) {
    if (StalledPeer(pid)) return;
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) return;  // gone already
    std::lock_guard<std::mutex> lock(mu_);
    stalled_peers_.emplace_back(pid, pidfd);
}

bool Engine::StalledPeer(pid_t pid) {
    std::lock_guard<std::mutex> lock(mu_);
    bool found = false;
    std::erase_if(stalled_peers_, [&](const std::pair<pid_t, int> &p) {
        pollfd exited{p.second, POLLIN, 0};
        if (poll(&exited, 1, 0) != 0) {  // it exited (or the pidfd broke): forgotten
            close(p.second);
            return true;
        }
        found = found || p.first == pid;
        return false;
    });
    return found;
}

// Every queue pair is passed, one that is being destroyed too (its
// destructor waits), with one deadline for the whole barrier: N stopped
// peers cost it kQuiesceLimitMs, not N times that.
void Engine::QuiescePlacements() {
    const uint64_t until = NowMs() + kQuiesceLimitMs;
    ForEachPollable([until](opennd::kit::Pollable *p) { static_cast<Pollable *>(p)->Quiesce(until); });
}

}  // namespace soft
