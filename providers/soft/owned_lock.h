// A lock that can tell whether the calling thread holds it. The Deregister
// barrier passes every queue pair's placement locks; run on a thread that
// already holds one (a region's last reference dropped inside a placement),
// it must not wait for that lock, and need not: no other placement can be
// running under it.
#pragma once

#include <pthread.h>

#include <atomic>

namespace soft {

template <typename Lock>
class OwnedLock {
public:
    void lock() {
        lock_.lock();
        owner_.store(pthread_self(), std::memory_order_relaxed);
    }
    bool try_lock() {
        if (!lock_.try_lock()) return false;
        owner_.store(pthread_self(), std::memory_order_relaxed);
        return true;
    }
    void unlock() {
        owner_.store(pthread_t{}, std::memory_order_relaxed);
        lock_.unlock();
    }
    // Only this thread stores its own id, and clears it before unlocking,
    // so a relaxed load is exact for the question "is it mine?".
    bool held_by_me() const { return pthread_equal(owner_.load(std::memory_order_relaxed), pthread_self()); }

private:
    Lock lock_;
    std::atomic<pthread_t> owner_{};
};

}  // namespace soft
