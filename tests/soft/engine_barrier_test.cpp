// The Deregister barrier (Engine::QuiescePlacements) and queue pairs whose
// last reference is gone: such a one may still be placing data for a
// GetResults already running on its CQ, so the barrier passes it too, and
// it cannot leave the engine's list (and be freed) while the barrier does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "progress_engine.h"

namespace soft {
namespace {

struct FakeQueuePair final : Pollable {
    bool dying = false;  // TryRef fails: its last reference is gone
    std::atomic<int> refs{0}, quiesced{0};
    std::function<void()> on_quiesce;
    bool TryRef() override {
        if (dying) return false;
        ++refs;
        return true;
    }
    void Unref() override { --refs; }
    void Poll() override {}
    void WantWakeups(bool) override {}
    bool NotifyArmed() override { return false; }
    void Quiesce(uint64_t) override {
        ++quiesced;
        if (on_quiesce) on_quiesce();
    }
};

// The engine's progress thread polls the fakes too, and may still hold a
// snapshot of them when a test ends: they outlive every test.
FakeQueuePair &Fake(int i) {
    static FakeQueuePair fakes[3];
    return fakes[i];
}

TEST(EngineBarrier, PassesLiveAndDyingQueuePairs) {
    auto engine = Engine::Create();
    FakeQueuePair &live = Fake(0), &dying = Fake(1);
    dying.dying = true;
    engine->AddPollable(&live);
    engine->AddPollable(&dying);
    engine->QuiescePlacements();
    EXPECT_EQ(live.quiesced.load(), 1);
    EXPECT_EQ(dying.quiesced.load(), 1) << "a queue pair on its way out was skipped";
    engine->RemovePollable(&live);
    engine->RemovePollable(&dying);
}

TEST(EngineBarrier, ADyingQueuePairLeavesOnlyAfterTheBarrierPassedIt) {
    auto engine = Engine::Create();
    FakeQueuePair &dying = Fake(2);
    dying.dying = true;
    engine->AddPollable(&dying);
    std::atomic<bool> removed{false};
    std::future<void> destructor;
    bool left_early = false;
    dying.on_quiesce = [&] {
        // Its destructor reaches RemovePollable while the barrier is here.
        destructor = std::async(std::launch::async, [&] {
            engine->RemovePollable(&dying);
            removed = true;
        });
        left_early = destructor.wait_for(std::chrono::milliseconds(200)) == std::future_status::ready;
    };
    engine->QuiescePlacements();
    ASSERT_TRUE(destructor.valid()) << "the barrier did not pass the dying queue pair";
    EXPECT_FALSE(left_early) << "RemovePollable returned (the object may be freed) while the barrier used it";
    ASSERT_EQ(destructor.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_TRUE(removed.load());
    dying.on_quiesce = nullptr;
    engine->QuiescePlacements();  // gone from the list: not passed again
    EXPECT_EQ(dying.quiesced.load(), 1);
}

}  // namespace
}  // namespace soft
