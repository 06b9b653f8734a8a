// Many readers that look at a structure on every call (GetResults walking a
// CQ's pollers), a rare editor (a queue pair joining or leaving that CQ)
// that must know no reader is still inside before it changes or frees
// anything they see.
//
// A reader announces itself in a record of its own thread (a slot per
// nesting level) and then reads the editor's flag. The editor raises the
// flag and waits until no thread's record names the gate. The two sides
// need a store-load barrier between them; where the kernel has membarrier,
// the reader's is only a compiler barrier and the editor pays instead with
// membarrier(PRIVATE_EXPEDITED), which puts a full barrier on every thread
// of the process (the asymmetric fence of liburcu's membarrier flavour): a
// poll costs no locked instruction (8 B ping-pong 0.196 -> 0.175 us), an
// edit one system call (about 1 us). Without membarrier (or with
// OPENND_NO_MEMBARRIER=1) the reader announces itself with a locked
// exchange instead.
//
// A child of fork keeps only the forking thread's record, so readers the
// parent's other threads left inside never hold up its edits.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace opennd::kit {

class ReaderGate;

namespace gate_detail {
constexpr int kMaxDepth = 4;
// One per thread that has read through a gate. `inside` is written by its
// thread only and read by editors; `depth` (slots in use) is the thread's.
struct ThreadRecord {
    ThreadRecord() = default;
    explicit ThreadRecord(int d) : depth(d) {}
    std::atomic<const ReaderGate *> inside[kMaxDepth] = {};
    int depth = 0;
    ThreadRecord *prev = nullptr, *next = nullptr;
};
// Initial-exec: one load off the thread pointer, not a __tls_get_addr call
// on every poll (8 bytes of the static TLS that glibc keeps for dlopen).
extern thread_local ThreadRecord *t_record __attribute__((tls_model("initial-exec")));
extern std::atomic<bool> g_light;  // readers announce themselves with no locked instruction
}  // namespace gate_detail

class ReaderGate {
public:
    static constexpr int kMaxDepth = gate_detail::kMaxDepth;  // gates one thread reads at once through its record

    // How a reader got in. Closed: an edit is under way, do not read (there
    // is nothing to leave). Deeper nesting than kMaxDepth is counted in the
    // gate itself (seq_cst), which a fork child cannot drop.
    struct Pass {
        int8_t slot;
        bool open() const { return slot != kClosed; }
    };
    static constexpr int8_t kClosed = -1, kCounted = kMaxDepth;

    ReaderGate();
    ReaderGate(const ReaderGate &) = delete;
    ReaderGate &operator=(const ReaderGate &) = delete;

    // Inline: a CQ poll passes here twice even when it finds nothing, and
    // how fast that loop turns is how soon it sees an arrival.
    Pass Enter() {
        gate_detail::ThreadRecord *me = gate_detail::t_record;
        if (__builtin_expect(me == nullptr || me->depth == kMaxDepth ||
                                 !gate_detail::g_light.load(std::memory_order_relaxed),
                             0))
            return EnterSlow();
        const int d = me->depth;
        me->inside[d].store(this, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the editor's membarrier orders the rest
        if (__builtin_expect(closed_.load(std::memory_order_acquire), 0)) {
            me->inside[d].store(nullptr, std::memory_order_release);
            return Pass{kClosed};
        }
        me->depth = d + 1;
        return Pass{static_cast<int8_t>(d)};
    }
    void Leave(Pass pass) {
        if (__builtin_expect(pass.slot < 0 || pass.slot >= kMaxDepth, 0)) return LeaveSlow(pass);
        gate_detail::ThreadRecord *me = gate_detail::t_record;
        me->inside[pass.slot].store(nullptr, std::memory_order_release);
        while (me->depth > 0 && me->inside[me->depth - 1].load(std::memory_order_relaxed) == nullptr) --me->depth;
    }

    // Runs edit() once no reader is inside; readers that come meanwhile are
    // turned away. Edits are serialised.
    template <class F>
    void Edit(F &&edit) {
        std::lock_guard<std::mutex> lock(edit_mu_);
        Close();
        edit();
        closed_.store(false, std::memory_order_release);
    }

    // True if readers announce themselves with no locked instruction.
    static bool LightReaders();

private:
    Pass EnterSlow();  // first read on this thread, nested too deep, exiting, or no membarrier
    void LeaveSlow(Pass pass);
    void Close();  // raise the flag, fence every thread, wait for readers

    std::mutex edit_mu_;
    std::atomic<bool> closed_{false};
    std::atomic<int> counted_{0};
};

// Enter and Leave in one scope.
class ReaderScope {
public:
    explicit ReaderScope(ReaderGate &gate) : gate_(gate), pass_(gate.Enter()) {}
    ~ReaderScope() { gate_.Leave(pass_); }
    ReaderScope(const ReaderScope &) = delete;
    ReaderScope &operator=(const ReaderScope &) = delete;
    bool open() const { return pass_.open(); }

private:
    ReaderGate &gate_;
    ReaderGate::Pass pass_;
};

}  // namespace opennd::kit
