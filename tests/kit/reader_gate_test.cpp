// ReaderGate: an edit never overlaps a reader inside, on the light
// (membarrier) path and the counted one, across thread exit and fork.
#include "opennd/kit/reader_gate.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using opennd::kit::ReaderGate;
using opennd::kit::ReaderScope;
using Clock = std::chrono::steady_clock;

// Spins (yielding) until pred() or 10 s; false on timeout.
template <class P>
bool WaitFor(P pred) {
    auto until = Clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (Clock::now() > until) return false;
        std::this_thread::yield();
    }
    return true;
}

TEST(ReaderGate, LightReadersWhereMembarrierWorks) {
    ReaderGate gate;
    ReaderGate::Pass p = gate.Enter();
    EXPECT_EQ(p, ReaderGate::LightReaders() ? ReaderGate::Pass::Light : ReaderGate::Pass::Counted);
    gate.Leave(p);
}

// An edit waits for a reader already inside; readers that come meanwhile are
// turned away; after the edit the gate is open again.
TEST(ReaderGate, EditWaitsForTheReaderInside) {
    ReaderGate gate;
    std::atomic<bool> inside{false}, leave{false}, edited{false};
    std::thread reader([&] {
        ReaderScope scope(gate);
        EXPECT_TRUE(scope.open());
        inside = true;
        EXPECT_TRUE(WaitFor([&] { return leave.load(); }));
    });
    ASSERT_TRUE(WaitFor([&] { return inside.load(); }));
    std::thread editor([&] { gate.Edit([&] { edited = true; }); });
    // Closed: a newcomer is turned away (on another thread: this one has no
    // reader inside, like the editor's).
    ASSERT_TRUE(WaitFor([&] {
        ReaderGate::Pass p = ReaderGate::Pass::Light;
        std::thread([&] { p = gate.Enter(); gate.Leave(p); }).join();
        return p == ReaderGate::Pass::Closed;
    }));
    EXPECT_FALSE(edited.load());
    leave = true;
    reader.join();
    editor.join();
    EXPECT_TRUE(edited.load());
    ReaderScope after(gate);
    EXPECT_TRUE(after.open());
}

// A thread inside one gate reads a second (and the first again) by counting.
TEST(ReaderGate, NestedReadsAreCounted) {
    ReaderGate a, b;
    ReaderGate::Pass outer = a.Enter();
    ReaderGate::Pass inner = b.Enter(), again = a.Enter();
    EXPECT_EQ(inner, ReaderGate::Pass::Counted);
    EXPECT_EQ(again, ReaderGate::Pass::Counted);
    std::atomic<bool> edited{false};
    std::thread editor([&] { b.Edit([&] { edited = true; }); });
    b.Leave(inner);
    editor.join();  // b no longer read: done although a is still read
    EXPECT_TRUE(edited.load());
    a.Leave(again);
    a.Leave(outer);
    a.Edit([] {});
}

// Readers walk a list of live objects while an editor replaces and frees
// them: a reader never meets a freed one (ASan and TSan builds check it).
TEST(ReaderGate, ReadersNeverSeeWhatAnEditFreed) {
    ReaderGate gate;
    std::vector<std::atomic<int> *> items{new std::atomic<int>(42)};
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> reads{0}, bad{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t)
        readers.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                ReaderScope scope(gate);
                if (!scope.open()) continue;
                for (std::atomic<int> *i : items)
                    if (i->load(std::memory_order_relaxed) != 42) ++bad;
                ++reads;
            }
        });
    auto until = Clock::now() + std::chrono::milliseconds(300);
    int edits = 0;
    while (Clock::now() < until || reads.load() < 1000) {
        auto *fresh = new std::atomic<int>(42);
        std::atomic<int> *old = nullptr;
        gate.Edit([&] {
            old = items.front();
            items.front() = fresh;
        });
        old->store(0);  // no reader can see it any more
        delete old;
        ++edits;
        if (Clock::now() > until + std::chrono::seconds(20)) break;
    }
    stop = true;
    for (auto &t : readers) t.join();
    delete items.front();
    EXPECT_EQ(bad.load(), 0u);
    EXPECT_GE(reads.load(), 1000u);
    EXPECT_GT(edits, 0);
}

// Threads that read once and exit leave nothing behind that an edit waits for.
TEST(ReaderGate, ExitedThreadsDoNotHoldEdits) {
    ReaderGate gate;
    for (int i = 0; i < 64; ++i) std::thread([&] { ReaderScope s(gate); }).join();
    std::atomic<bool> done{false};
    std::thread editor([&] {
        gate.Edit([] {});
        done = true;
    });
    EXPECT_TRUE(WaitFor([&] { return done.load(); }));
    editor.join();
}

// A child of fork has only the forking thread: a reader left inside by
// another thread of the parent must not stop the child's edits.
TEST(ReaderGate, ForkChildEditsDespiteTheParentsReaders) {
    ReaderGate gate;
    std::atomic<bool> inside{false}, leave{false};
    std::thread reader([&] {
        ReaderScope scope(gate);
        inside = true;
        WaitFor([&] { return leave.load(); });
    });
    ASSERT_TRUE(WaitFor([&] { return inside.load(); }));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        gate.Edit([] {});
        ReaderGate::Pass p = gate.Enter();  // and reading still works
        bool ok = p == (ReaderGate::LightReaders() ? ReaderGate::Pass::Light : ReaderGate::Pass::Counted);
        gate.Leave(p);
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    bool exited = WaitFor([&] { return waitpid(child, &status, WNOHANG) == child; });
    if (!exited) kill(child, SIGKILL), waitpid(child, &status, 0);
    leave = true;
    reader.join();
    ASSERT_TRUE(exited) << "the child's edit waited for a thread it does not have";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
