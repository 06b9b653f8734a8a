// The thread behind a moderated CQ's deadline (completion_queue.h): it
// sleeps until the earliest deadline asked for, then lets the CQ look.
// It takes no lock of the CQ's while holding its own, and At() is called
// under the CQ's lock, so the two never wait for each other.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "opennd/kit/clock.h"
#include "opennd/kit/completion_queue.h"

namespace opennd::kit {

class CompletionQueue::ModerationTimer {
public:
    explicit ModerationTimer(CompletionQueue *cq) : cq_(cq), thread_([this] { Run(); }) {}
    ~ModerationTimer() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }
    // Look at the CQ at `deadline_ns` (NowNs), or earlier if already asked.
    void At(uint64_t deadline_ns) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (deadline_ns_ && deadline_ns_ <= deadline_ns) return;
            deadline_ns_ = deadline_ns;
        }
        cv_.notify_one();
    }

private:
    void Run() {
        std::unique_lock<std::mutex> lock(mu_);
        while (!stop_) {
            if (!deadline_ns_) {
                cv_.wait(lock);
                continue;
            }
            const uint64_t now = NowNs();
            if (now < deadline_ns_) {
                cv_.wait_for(lock, std::chrono::nanoseconds(deadline_ns_ - now));
                continue;
            }
            deadline_ns_ = 0;
            lock.unlock();
            cq_->OnModerationTimer();
            lock.lock();
        }
    }

    CompletionQueue *const cq_;
    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t deadline_ns_ = 0;  // 0: none
    bool stop_ = false;
    std::thread thread_;  // last: it starts once the rest is set
};

}  // namespace opennd::kit
