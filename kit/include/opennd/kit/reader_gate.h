// Many readers that look at a structure on every call (GetResults walking a
// CQ's pollers), a rare editor (a queue pair joining or leaving that CQ)
// that must know no reader is still inside before it changes or frees
// anything they see.
//
// A reader announces itself with a plain store to a record of its own
// thread and reads the editor's flag after only a compiler barrier. The
// editor raises its flag, then issues membarrier(PRIVATE_EXPEDITED): every
// thread of the process passes a full barrier, so either a reader's
// announcement is visible to the editor, which then waits for the reader to
// leave, or the reader sees the flag and stays out. This is the asymmetric
// fence of liburcu's membarrier flavour: the cost moves from every poll (two
// locked instructions: 8 B ping-pong 0.196 -> 0.175 us) to every edit (one
// system call, about 1 us).
//
// Where membarrier is not available, and for a thread already inside another
// gate (one record per thread), readers count themselves in the gate with
// locked instructions instead; the editor waits for both kinds.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace opennd::kit {

class ReaderGate {
public:
    enum class Pass : uint8_t {
        Closed,   // an edit is under way: do not read; nothing to leave
        Light,    // announced in this thread's record
        Counted,  // counted in the gate
    };

    ReaderGate();
    ReaderGate(const ReaderGate &) = delete;
    ReaderGate &operator=(const ReaderGate &) = delete;

    Pass Enter();
    void Leave(Pass pass);

    // Runs edit() once no reader is inside; readers that come meanwhile are
    // turned away (Pass::Closed). Edits are serialised.
    template <class F>
    void Edit(F &&edit) {
        std::lock_guard<std::mutex> lock(edit_mu_);
        Close();
        edit();
        closed_.store(false, std::memory_order_release);
    }

    // True if readers take the light path in this process (tests, ndinfo).
    static bool LightReaders();

private:
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
    bool open() const { return pass_ != ReaderGate::Pass::Closed; }

private:
    ReaderGate &gate_;
    ReaderGate::Pass pass_;
};

}  // namespace opennd::kit
