// Which live objects of a type this provider library created, so an
// interface pointer handed in by the application (a CQ to CreateQueuePair, a
// region to Bind) can be checked before it is treated as one of ours. The
// registry is per provider library (the kit is linked statically into each).
#pragma once

#include <mutex>
#include <type_traits>
#include <unordered_set>

#include "ndspi.h"

namespace opennd::kit {

// The set exists only while it has members, so a provider library that is
// unloaded once all its objects are gone leaves nothing allocated behind; the
// mutex is trivially destructible, so it is safe at any point of process exit.
static_assert(std::is_trivially_destructible_v<std::mutex>, "a static mutex must survive process exit");

template <class Impl, class Interface>
class Registry {
public:
    static void Add(Impl *p) {
        std::lock_guard<std::mutex> lock(mu());
        if (!set()) set() = new std::unordered_set<Interface *>;
        set()->insert(static_cast<Interface *>(p));
    }
    static void Remove(Impl *p) {
        std::lock_guard<std::mutex> lock(mu());
        if (!set()) return;
        set()->erase(static_cast<Interface *>(p));
        if (set()->empty()) {
            delete set();
            set() = nullptr;
        }
    }
    // The implementation behind `unknown` if it is a live object of ours
    // answering `iid`; nullptr otherwise. Adds no reference.
    static Impl *Find(IUnknown *unknown, REFIID iid) {
        if (!unknown) return nullptr;
        void *p = nullptr;
        if (FAILED(unknown->QueryInterface(iid, &p)) || !p) return nullptr;
        auto *itf = static_cast<Interface *>(p);
        bool ours;
        {
            std::lock_guard<std::mutex> lock(mu());
            ours = set() && set()->count(itf) != 0;
        }
        itf->Release();
        return ours ? static_cast<Impl *>(itf) : nullptr;
    }

private:
    static std::mutex &mu() {
        static std::mutex m;
        return m;
    }
    static std::unordered_set<Interface *> *&set() {
        static std::unordered_set<Interface *> *s = nullptr;
        return s;
    }
};

}  // namespace opennd::kit
