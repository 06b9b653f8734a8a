#include "opennd/kit/reader_gate.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace opennd::kit {
namespace {

// One per thread that has read through a gate; lives until the thread exits.
struct ThreadRecord {
    std::atomic<const ReaderGate *> inside{nullptr};
    ThreadRecord *prev = nullptr, *next = nullptr;
};

// Where light readers are not possible, every thread points here: `inside`
// is never null, so Enter takes the counted path.
const ReaderGate *const kNoRecord = reinterpret_cast<const ReaderGate *>(1);
ThreadRecord g_no_record;

// Initial-exec: one load off the thread pointer, not a __tls_get_addr call
// on every poll (8 bytes of the static TLS that glibc keeps for dlopen).
thread_local ThreadRecord *t_record __attribute__((tls_model("initial-exec"))) = nullptr;

long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

bool RegisterMembarrier() {
    long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
    return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

// Never destroyed: threads may still exit after static destructors ran.
struct Registry {
    std::mutex mu;
    ThreadRecord list;  // sentinel of a circular list of every live record
    pthread_key_t key{};
    std::atomic<bool> light{false};

    Registry() {
        list.prev = list.next = &list;
        g_no_record.inside.store(kNoRecord, std::memory_order_relaxed);
        light.store(RegisterMembarrier() && pthread_key_create(&key, &ThreadExit) == 0, std::memory_order_relaxed);
        // The registration belongs to the address space, and a child of
        // fork has only the thread that forked: its registry drops the
        // others' records (they would never leave) and registers again.
        pthread_atfork([] { Get().mu.lock(); }, [] { Get().mu.unlock(); }, &AfterForkInChild);
    }

    static Registry &Get() {
        static Registry *registry = new Registry;
        return *registry;
    }

    static void Unlink(ThreadRecord *r) {
        r->prev->next = r->next;
        r->next->prev = r->prev;
        r->prev = r->next = nullptr;
    }

    static void ThreadExit(void *p) {
        Registry &reg = Get();
        auto *r = static_cast<ThreadRecord *>(p);
        {
            std::lock_guard<std::mutex> lock(reg.mu);
            Unlink(r);
        }
        if (t_record == r) t_record = nullptr;
        delete r;
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
        bool light = reg.light.load(std::memory_order_relaxed) && RegisterMembarrier();
        reg.light.store(light, std::memory_order_relaxed);
        if (!light && t_record && t_record != &g_no_record) {
            Unlink(t_record);
            delete t_record;
            t_record = &g_no_record;
        }
        reg.mu.unlock();
    }

    ThreadRecord *Register() {
        if (!light.load(std::memory_order_relaxed)) return &g_no_record;
        auto *r = new ThreadRecord;
        {
            std::lock_guard<std::mutex> lock(mu);
            r->next = list.next;
            r->prev = &list;
            list.next->prev = r;
            list.next = r;
        }
        pthread_setspecific(key, r);
        return r;
    }
};

}  // namespace

ReaderGate::ReaderGate() { Registry::Get(); }  // decided before the first reader comes

bool ReaderGate::LightReaders() { return Registry::Get().light.load(std::memory_order_relaxed); }

ReaderGate::Pass ReaderGate::Enter() {
    ThreadRecord *me = t_record;
    if (__builtin_expect(me == nullptr, 0)) me = t_record = Registry::Get().Register();
    if (me->inside.load(std::memory_order_relaxed) == nullptr) {
        me->inside.store(this, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the editor's membarrier orders the rest
        if (!closed_.load(std::memory_order_acquire)) return Pass::Light;
        me->inside.store(nullptr, std::memory_order_release);
        return Pass::Closed;
    }
    // No membarrier, or this thread is already inside a gate.
    counted_.fetch_add(1, std::memory_order_seq_cst);
    if (!closed_.load(std::memory_order_seq_cst)) return Pass::Counted;
    counted_.fetch_sub(1, std::memory_order_release);
    return Pass::Closed;
}

void ReaderGate::Leave(Pass pass) {
    if (pass == Pass::Light)
        t_record->inside.store(nullptr, std::memory_order_release);
    else if (pass == Pass::Counted)
        counted_.fetch_sub(1, std::memory_order_release);
}

void ReaderGate::Close() {
    // Counted readers: seq_cst on both sides (their increment, then their
    // load of the flag; our store, then our load of the count).
    closed_.store(true, std::memory_order_seq_cst);
    Registry &reg = Registry::Get();
    if (reg.light.load(std::memory_order_relaxed) && Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        // Cannot fail once registered (the kernel checks only that). Should
        // it, a reader's announcement still reaches memory within
        // nanoseconds (a store buffer drains): wait well past that.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    while (counted_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    // Light readers: look again from the start after every wait, so no lock
    // is held while a reader finishes (it may need the registry itself).
    for (;;) {
        bool busy = false;
        {
            std::lock_guard<std::mutex> lock(reg.mu);
            for (ThreadRecord *r = reg.list.next; r != &reg.list && !busy; r = r->next)
                busy = r->inside.load(std::memory_order_acquire) == this;
        }
        if (!busy) return;
        std::this_thread::yield();
    }
}

}  // namespace opennd::kit
