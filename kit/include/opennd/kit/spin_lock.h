// A lock for critical sections of a few dozen instructions taken on every
// message (a CQ's ring). Unlocking is a plain release store, where
// std::mutex's unlock is another locked instruction; a waiter spins briefly,
// then yields its core (on a 2-core machine the holder may be descheduled).
// BasicLockable: works with std::lock_guard and std::unique_lock.
#pragma once

#include <atomic>
#include <thread>

namespace opennd::kit {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

class SpinLock {
public:
    void lock() {
        for (unsigned spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
            while (locked_.load(std::memory_order_relaxed)) {
                if (++spins < 64)
                    CpuRelax();
                else
                    std::this_thread::yield();
            }
        }
    }
    bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }
    void unlock() { locked_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> locked_{false};
};

}  // namespace opennd::kit
