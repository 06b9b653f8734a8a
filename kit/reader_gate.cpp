#include "opennd/kit/reader_gate.h"
#include "opennd/params.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

namespace opennd::kit {
namespace gate_detail {
thread_local ThreadRecord *t_record __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<bool> g_light{false};  // decided before any gate exists (ReaderGate's constructor)
}  // namespace gate_detail
namespace {

using gate_detail::g_light;
using gate_detail::t_record;
using gate_detail::ThreadRecord;

// A thread whose record is gone (it is exiting) reads by counting: this
// record is always full.
ThreadRecord g_exited(ReaderGate::kMaxDepth);


long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

bool RegisterMembarrier() {
    const char *off = ParamText("OPENND_NO_MEMBARRIER");
    if (off && std::strcmp(off, "1") == 0) return false;
    long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
    return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

// Never destroyed: threads may still exit after static destructors ran.
struct Registry {
    std::mutex mu;
    ThreadRecord list;  // sentinel of a circular list of every live record

    Registry() {
        list.prev = list.next = &list;
        g_light.store(RegisterMembarrier(), std::memory_order_relaxed);
        // Registration belongs to the address space, and a child of fork
        // has only the thread that forked: its registry drops the other
        // threads' records (they would never leave) and registers again.
        pthread_atfork([] { Get().mu.lock(); }, [] { Get().mu.unlock(); }, &AfterForkInChild);
    }

    // In static storage: never destroyed, and no heap block that a
    // provider library unloaded after its CQs (dlclose) would leave behind.
    static Registry &Get() {
        alignas(Registry) static unsigned char storage[sizeof(Registry)];
        static Registry *registry = new (storage) Registry;
        return *registry;
    }

    static void Unlink(ThreadRecord *r) {
        r->prev->next = r->next;
        r->next->prev = r->prev;
        r->prev = r->next = nullptr;
    }

    ThreadRecord *Register();

    void Exit(ThreadRecord *r) {
        {
            std::lock_guard<std::mutex> lock(mu);
            Unlink(r);
        }
        delete r;
        t_record = &g_exited;
    }

    static void AfterForkInChild() {
        Registry &reg = Get();
        for (ThreadRecord *r = reg.list.next; r != &reg.list;) {
            ThreadRecord *next = r->next;
            if (r != t_record) {
                Unlink(r);
                delete r;
            }
            r = next;
        }
        g_light.store(g_light.load(std::memory_order_relaxed) && RegisterMembarrier(), std::memory_order_relaxed);
        reg.mu.unlock();
    }

    // A full barrier on every thread of the process.
    static void FenceEveryThread() {
        for (int attempt = 0; attempt < 3; ++attempt)
            if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
        if (Membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;  // slower (every CPU schedules once); no registration
        // Neither (not seen: the kernel checks registration only): a
        // reader's announcement reaches memory within nanoseconds, as a
        // store buffer drains; wait well past that.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
};

// Unlinks the thread's record when the thread exits. A thread_local with a
// destructor, not a pthread key: glibc keeps this library loaded until such
// destructors have run, so a provider unloaded while one of its pollers'
// threads lives on is never called back in unmapped code.
struct RecordOwner {
    ThreadRecord *record = nullptr;
    ~RecordOwner() {
        if (record) Registry::Get().Exit(record);
    }
};
thread_local RecordOwner t_owner;

ThreadRecord *Registry::Register() {
    auto *r = new ThreadRecord;
    {
        std::lock_guard<std::mutex> lock(mu);
        r->next = list.next;
        r->prev = &list;
        list.next->prev = r;
        list.next = r;
    }
    t_owner.record = r;
    return t_record = r;
}

}  // namespace

ReaderGate::ReaderGate() { Registry::Get(); }

bool ReaderGate::LightReaders() {
    Registry::Get();
    return g_light.load(std::memory_order_relaxed);
}

ReaderGate::Pass ReaderGate::EnterSlow() {
    ThreadRecord *me = t_record;
    if (__builtin_expect(me == nullptr, 0)) me = Registry::Get().Register();
    const int d = me->depth;
    if (d == kMaxDepth) {  // nested too deep, or the thread is exiting
        counted_.fetch_add(1, std::memory_order_seq_cst);
        if (!closed_.load(std::memory_order_seq_cst)) return Pass{kCounted};
        counted_.fetch_sub(1, std::memory_order_release);
        return Pass{kClosed};
    }
    bool closed;
    if (g_light.load(std::memory_order_relaxed)) {
        me->inside[d].store(this, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the editor's membarrier orders the rest
        closed = closed_.load(std::memory_order_acquire);
    } else {
        me->inside[d].exchange(this, std::memory_order_seq_cst);
        closed = closed_.load(std::memory_order_seq_cst);
    }
    if (closed) {
        me->inside[d].store(nullptr, std::memory_order_release);
        return Pass{kClosed};
    }
    me->depth = d + 1;
    return Pass{static_cast<int8_t>(d)};
}

void ReaderGate::LeaveSlow(Pass pass) {  // kClosed or kCounted (Leave does a record's slots)
    if (pass.slot == kCounted) counted_.fetch_sub(1, std::memory_order_release);
}

void ReaderGate::Close() {
    closed_.store(true, std::memory_order_seq_cst);
    Registry &reg = Registry::Get();
    if (g_light.load(std::memory_order_relaxed)) Registry::FenceEveryThread();
    while (counted_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    // Look again from the start after every wait, so no lock is held while
    // a reader finishes (it may need the registry itself).
    for (;;) {
        bool busy = false;
        {
            std::lock_guard<std::mutex> lock(reg.mu);
            for (ThreadRecord *r = reg.list.next; r != &reg.list && !busy; r = r->next)
                for (const auto &slot : r->inside) busy = busy || slot.load(std::memory_order_seq_cst) == this;
        }
        if (!busy) return;
        std::this_thread::yield();
    }
}

}  // namespace opennd::kit
