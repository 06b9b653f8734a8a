// kit::Progress, the progress service: a watched descriptor's watcher runs
// when it is readable and never after Unwatch; WakeAt runs it at its time;
// while a pollable has a Notify armed every pollable is polled and told to
// ask for wake-ups; a released object is never called; the barrier passes
// a pollable being destroyed and holds its RemovePollable until done; the
// last reference may be dropped on the progress thread.
#include "opennd/kit/progress.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "opennd/kit/clock.h"

namespace {

using opennd::kit::NowMs;
using namespace std::chrono_literals;

class TestProgress : public opennd::kit::Progress {
public:
    static std::shared_ptr<TestProgress> Make(opennd::kit::ProgressConfig config = {}) {
        std::shared_ptr<TestProgress> p(new TestProgress);
        if (!p->Start(p, config)) return nullptr;
        return p;
    }
    using Progress::ForEachPollable;
};

// Waits (bounded) for pred, woken by Signal.
class Waiter {
public:
    template <class P>
    bool WaitFor(P pred, std::chrono::milliseconds most = 10s) {
        std::unique_lock<std::mutex> lock(mu_);
        return cv_.wait_for(lock, most, pred);
    }
    template <class F>
    void Signal(F change) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            change();
        }
        cv_.notify_all();
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
};

// What a provider object does for the progress thread: a count the thread
// takes only while it is above zero (TryRef). Retire drops the object's own
// reference and waits until the thread holds none: after that, and after
// Unwatch/RemovePollable, the thread never calls it again (what a
// destructor relies on).
class Counted {
public:
    bool TryRefCount() {
        int n = refs_.load();
        while (n > 0)
            if (refs_.compare_exchange_weak(n, n + 1)) return true;
        return false;
    }
    void UnrefCount() { refs_.fetch_sub(1); }
    void Retire() {
        refs_.fetch_sub(1);
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (refs_.load() != 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        ASSERT_EQ(refs_.load(), 0);
    }

private:
    std::atomic<int> refs_{1};
};

struct EventFd {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ~EventFd() { close(fd); }
    void Signal() const {
        uint64_t one = 1;
        ASSERT_EQ(write(fd, &one, sizeof one), ssize_t(sizeof one));
    }
    void Drain() const {
        uint64_t v;
        ssize_t n = read(fd, &v, sizeof v);
        (void)n;
    }
};

class CountingWatcher : public opennd::kit::Watched, public Counted {
public:
    explicit CountingWatcher(const EventFd &efd) : efd_(efd) {}
    bool TryRef() override { return TryRefCount(); }
    void Unref() override { UnrefCount(); }
    void OnReadable(int) override {
        efd_.Drain();
        waiter.Signal([&] {
            ++calls;
            last_call_ms = NowMs();
        });
    }
    Waiter waiter;
    int calls = 0;  // guarded by waiter
    uint64_t last_call_ms = 0;

private:
    const EventFd &efd_;
};

TEST(Progress, WatcherRunsWhenReadableAndNeverAfterUnwatch) {
    EventFd efd;  // (watched objects outlive the service: its thread may be calling them)
    CountingWatcher w(efd);
    auto progress = TestProgress::Make();
    ASSERT_TRUE(progress);
    progress->Watch(efd.fd, &w);
    efd.Signal();
    ASSERT_TRUE(w.waiter.WaitFor([&] { return w.calls == 1; }));
    efd.Signal();
    ASSERT_TRUE(w.waiter.WaitFor([&] { return w.calls == 2; }));
    progress->Unwatch(efd.fd);
    efd.Signal();
    progress->Kick();
    EXPECT_FALSE(w.waiter.WaitFor([&] { return w.calls != 2; }, 100ms));
    w.Retire();
}

TEST(Progress, ReleasedWatcherIsNotCalled) {
    EventFd efd;
    CountingWatcher w(efd);
    auto progress = TestProgress::Make();
    w.Retire();  // its last reference is gone, its destructor not yet run
    progress->Watch(efd.fd, &w);
    efd.Signal();
    EXPECT_FALSE(w.waiter.WaitFor([&] { return w.calls != 0; }, 100ms));
    progress->Unwatch(efd.fd);
}

TEST(Progress, WakeAtCallsTheWatcherAtItsTimeAndRedispatchAtOnce) {
    EventFd efd;
    CountingWatcher w(efd);
    auto progress = TestProgress::Make();
    progress->Watch(efd.fd, &w);
    const uint64_t at = NowMs() + 150;
    progress->WakeAt(efd.fd, at);
    ASSERT_TRUE(w.waiter.WaitFor([&] { return w.calls == 1; }));
    EXPECT_GE(w.last_call_ms + 10, at);  // (NowMs is coarse: a few ms)
    progress->Redispatch(efd.fd);
    ASSERT_TRUE(w.waiter.WaitFor([&] { return w.calls == 2; }));
    w.Retire();
    progress->Unwatch(efd.fd);
}

class TestPollable : public opennd::kit::Pollable, public Counted {
public:
    bool TryRef() override { return TryRefCount(); }
    void Unref() override { UnrefCount(); }
    void Poll() override {
        waiter.Signal([&] { ++polls; });
    }
    void WantWakeups(bool on) override {
        waiter.Signal([&] { wants = on; });
    }
    bool NotifyArmed() override { return armed; }
    std::atomic<bool> armed{false};
    Waiter waiter;
    int polls = 0;  // guarded by waiter
    bool wants = false;
};

TEST(Progress, ArmedNotifyPollsEveryPollableAndAsksForWakeups) {
    opennd::kit::ProgressConfig config;
    config.armed_poll_ms = 5;
    TestPollable a, b, released;
    auto progress = TestProgress::Make(config);
    released.Retire();
    progress->AddPollable(&a);
    progress->AddPollable(&b);
    progress->AddPollable(&released);
    a.armed = true;
    progress->Kick();
    ASSERT_TRUE(b.waiter.WaitFor([&] { return b.wants && b.polls >= 3; }));  // polled without any event
    EXPECT_TRUE(progress->armed());
    a.armed = false;
    progress->Kick();
    ASSERT_TRUE(b.waiter.WaitFor([&] { return !b.wants; }));
    EXPECT_FALSE(progress->armed());
    EXPECT_EQ(released.polls, 0);
    a.Retire();
    b.Retire();
    progress->RemovePollable(&a);
    progress->RemovePollable(&b);
    progress->RemovePollable(&released);
}

TEST(Progress, BarrierPassesAPollableBeingDestroyedAndHoldsItsRemoval) {
    TestPollable dying;
    auto progress = TestProgress::Make();
    dying.Retire();
    progress->AddPollable(&dying);
    std::promise<void> inside, release;
    std::thread barrier([&] {
        progress->ForEachPollable([&](opennd::kit::Pollable *p) {
            EXPECT_EQ(p, &dying);
            inside.set_value();
            release.get_future().wait();
        });
    });
    inside.get_future().wait();
    auto removed = std::async(std::launch::async, [&] { progress->RemovePollable(&dying); });
    EXPECT_EQ(removed.wait_for(100ms), std::future_status::timeout);  // held while passed
    release.set_value();
    EXPECT_EQ(removed.wait_for(10s), std::future_status::ready);
    barrier.join();
}

// A watcher that drops the last reference to the service from the progress
// thread itself: the service ends without a deadlock or a use after free.
TEST(Progress, LastReferenceDroppedOnTheProgressThread) {
    auto progress = TestProgress::Make();
    EventFd efd;
    struct Dropper : opennd::kit::Watched {
        std::shared_ptr<TestProgress> held;
        std::promise<void> done;
        bool TryRef() override { return true; }
        void Unref() override { done.set_value(); }  // the thread's last touch
        void OnReadable(int fd) override {
            held->Unwatch(fd);
            held.reset();  // the last reference
        }
    } dropper;
    dropper.held = progress;
    progress->Watch(efd.fd, &dropper);
    std::future<void> done = dropper.done.get_future();
    progress.reset();
    efd.Signal();
    EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
}

}  // namespace
