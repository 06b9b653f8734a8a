// Win32 events over an eventfd.
#pragma once

#include "win32/handle_table.h"

namespace opennd::win32 {

// State: signalled_ (guarded by mu_) is the truth; the eventfd counter mirrors
// it (non-zero exactly while signalled_) so the event can be polled. Every
// transition changes both under mu_, so a waiter that polls the fd readable
// and then locks mu_ sees either the signal or that another waiter took it
// (auto reset), in which case it polls again.
class EventObject final : public Object {
public:
    static constexpr ObjectKind kKind = ObjectKind::Event;

    EventObject(int fd, bool manual_reset, bool initial_state);

    bool SignalledLocked() override { return signalled_; }
    // An auto-reset event releases one waiter per signal.
    void ConsumeLocked() override {
        if (!manual_reset_) ClearLocked();
    }

    void Set();
    void Reset();

private:
    void ClearLocked();

    const bool manual_reset_;
    bool signalled_ = false;  // guarded by mu_
};

// SetEvent for internal callers: leaves the thread's last error alone and
// reports whether h was an open event.
bool SignalEventHandle(HANDLE h);

}  // namespace opennd::win32
