// ReaderGate: an edit never overlaps a reader inside, whether the reader
// announced itself in its thread's record (light or locked) or was counted
// (nested too deep), across thread exit and fork. test_kit_no_membarrier
// runs these again with OPENND_NO_MEMBARRIER=1.
#include "opennd/kit/reader_gate.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
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

// A thread joined within 10 s: one stuck (a broken gate) is left behind
// (detached) so the test fails instead of hanging.
class BoundedThread {
public:
    explicit BoundedThread(std::function<void()> f)
        : done_(std::make_shared<std::atomic<bool>>(false)), t_([f = std::move(f), d = done_] {
              f();
              *d = true;
          }) {}
    ~BoundedThread() { Join(); }
    bool Join() {
        if (!t_.joinable()) return *done_;
        if (!WaitFor([&] { return done_->load(); })) {
            t_.detach();
            return false;
        }
        t_.join();
        return true;
    }

private:
    std::shared_ptr<std::atomic<bool>> done_;
    std::thread t_;
};

bool MembarrierTurnedOff() {
    const char *v = std::getenv("OPENND_NO_MEMBARRIER");
    return v && std::strcmp(v, "1") == 0;
}

// True once a reader on a fresh thread is turned away.
bool SeenClosed(ReaderGate &gate) {
    return WaitFor([&] {
        bool open = true;
        std::thread([&] { open = ReaderScope(gate).open(); }).join();
        return !open;
    });
}

TEST(ReaderGate, LightReadersExactlyWhereMembarrierIsUsed) {
    ReaderGate gate;
    if (MembarrierTurnedOff()) {
        EXPECT_FALSE(ReaderGate::LightReaders());
    }
    ReaderScope s(gate);
    EXPECT_TRUE(s.open());
}

// An edit waits for a reader already inside; newcomers are turned away
// meanwhile; afterwards the gate is open again.
TEST(ReaderGate, EditWaitsForTheReaderInside) {
    ReaderGate gate;
    std::atomic<bool> inside{false}, leave{false}, edited{false};
    BoundedThread reader([&] {
        ReaderScope scope(gate);
        EXPECT_TRUE(scope.open());
        inside = true;
        WaitFor([&] { return leave.load(); });
    });
    ASSERT_TRUE(WaitFor([&] { return inside.load(); }));
    BoundedThread editor([&] { gate.Edit([&] { edited = true; }); });
    EXPECT_TRUE(SeenClosed(gate));
    EXPECT_FALSE(edited.load());
    leave = true;
    EXPECT_TRUE(reader.Join());
    EXPECT_TRUE(editor.Join());
    EXPECT_TRUE(edited.load());
    EXPECT_TRUE(ReaderScope(gate).open());
}

// Nested reads (the same gate again, other gates, deeper than a record
// holds): an edit of any of them waits for exactly its own readers.
TEST(ReaderGate, NestedReadsHoldTheirOwnGate) {
    constexpr int kGates = ReaderGate::kMaxDepth + 2;  // the last ones are counted
    ReaderGate gates[kGates];
    std::vector<ReaderGate::Pass> passes;
    for (ReaderGate &g : gates) passes.push_back(g.Enter());
    passes.push_back(gates[0].Enter());  // the first gate twice
    for (const ReaderGate::Pass &p : passes) ASSERT_TRUE(p.open());
    EXPECT_EQ(passes[kGates - 1].slot, ReaderGate::kCounted);
    for (int i : {0, 1, kGates - 1}) {  // a record slot, another slot, a counted one
        std::atomic<bool> edited{false};
        BoundedThread editor([&] { gates[i].Edit([&] { edited = true; }); });
        EXPECT_TRUE(SeenClosed(gates[i])) << i;
        EXPECT_FALSE(edited.load()) << i;
        if (i == 0) {
            gates[0].Leave(passes.back());  // one of two reads of gate 0: still held
            passes.pop_back();
            EXPECT_FALSE(edited.load());
        }
        gates[i].Leave(passes[i]);
        passes[i] = ReaderGate::Pass{ReaderGate::kClosed};
        EXPECT_TRUE(editor.Join()) << i;
        EXPECT_TRUE(edited.load()) << i;
    }
    for (int i = 0; i < kGates; ++i) gates[i].Leave(passes[i]);
    // Out of order leaves freed every slot: a reader gets the first one.
    ReaderGate::Pass again = gates[2].Enter();
    EXPECT_EQ(again.slot, 0);
    gates[2].Leave(again);
}

// Readers walk a list of live objects while an editor replaces and frees
// them: a reader never meets a freed one (the freed block is poisoned
// first; ASan and TSan builds also check the accesses).
TEST(ReaderGate, ReadersNeverSeeWhatAnEditFreed) {
    ReaderGate gate;
    std::vector<std::atomic<int> *> items{new std::atomic<int>(42)};
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> reads{0}, bad{0};
    std::vector<std::unique_ptr<BoundedThread>> readers;
    for (int t = 0; t < 2; ++t)
        readers.push_back(std::make_unique<BoundedThread>([&] {
            while (!stop.load(std::memory_order_relaxed)) {
                ReaderScope scope(gate);
                if (!scope.open()) continue;
                for (std::atomic<int> *i : items)
                    if (i->load(std::memory_order_relaxed) != 42) ++bad;
                ++reads;
            }
        }));
    std::vector<std::atomic<int> *> freed;  // kept (poisoned) until the end: no reuse hides a late read
    auto until = Clock::now() + std::chrono::milliseconds(300);
    while ((Clock::now() < until || reads.load() < 1000) && Clock::now() < until + std::chrono::seconds(20)) {
        auto *fresh = new std::atomic<int>(42);
        std::atomic<int> *old = nullptr;
        gate.Edit([&] {
            old = items.front();
            items.front() = fresh;
        });
        old->store(0);  // no reader can see it any more
        freed.push_back(old);
    }
    stop = true;
    for (auto &r : readers) EXPECT_TRUE(r->Join());
    for (auto *f : freed) delete f;
    delete items.front();
    EXPECT_EQ(bad.load(), 0u);
    EXPECT_GE(reads.load(), 1000u);
    EXPECT_GT(freed.size(), 0u);
}

// Threads keep starting, reading and exiting while edits run: an edit
// never waits for a thread that has gone, nor misses one that reads.
TEST(ReaderGate, ThreadsExitingDuringEdits) {
    ReaderGate gate;
    std::atomic<bool> stop{false};
    std::atomic<int> spawned{0};
    BoundedThread churn([&] {
        while (!stop.load()) {
            std::thread([&] { ReaderScope s(gate); }).join();
            ++spawned;
        }
    });
    int edits = 0;
    auto until = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < until || spawned.load() < 50) {
        BoundedThread editor([&] { gate.Edit([] {}); });
        ASSERT_TRUE(editor.Join()) << "an edit waited for a thread that exited";
        ++edits;
        if (Clock::now() > until + std::chrono::seconds(20)) break;
    }
    stop = true;
    EXPECT_TRUE(churn.Join());
    EXPECT_GE(spawned.load(), 50);
    EXPECT_GT(edits, 0);
}

// A child of fork has only the forking thread: readers the parent's other
// threads left inside must not stop the child's edits.
TEST(ReaderGate, ForkChildEditsDespiteTheParentsReaders) {
    ReaderGate gate;
    std::atomic<bool> inside{false}, leave{false};
    BoundedThread reader([&] {
        ReaderScope scope(gate);
        inside = true;
        WaitFor([&] { return leave.load(); });
    });
    ASSERT_TRUE(WaitFor([&] { return inside.load(); }));
    pid_t child = fork();
    if (child == 0) {
        gate.Edit([] {});
        bool ok = ReaderScope(gate).open();  // and reading still works
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    bool exited = child > 0 && WaitFor([&] { return waitpid(child, &status, WNOHANG) == child; });
    if (child > 0 && !exited) kill(child, SIGKILL), waitpid(child, &status, 0);
    leave = true;
    EXPECT_TRUE(reader.Join());
    ASSERT_GT(child, 0);
    ASSERT_TRUE(exited) << "the child's edit waited for a thread it does not have";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
