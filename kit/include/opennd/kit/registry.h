// Which live objects of a type this provider library created, so an
// interface pointer handed in by the application (a CQ to CreateQueuePair, a
// region to Bind) can be checked before it is treated as one of ours. The
// registry is per provider library (the kit is linked statically into each).
#pragma once

#include <mutex>
#include <unordered_set>

#include "ndspi.h"

namespace opennd::kit {

template <class Impl, class Interface>
class Registry {
public:
    static void Add(Impl *p) {
        std::lock_guard<std::mutex> lock(mu());
        set().insert(static_cast<Interface *>(p));
    }
    static void Remove(Impl *p) {
        std::lock_guard<std::mutex> lock(mu());
        set().erase(static_cast<Interface *>(p));
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
            ours = set().count(itf) != 0;
        }
        itf->Release();
        return ours ? static_cast<Impl *>(itf) : nullptr;
    }

private:
    static std::mutex &mu() {
        static auto *m = new std::mutex;
        return *m;
    }
    static std::unordered_set<Interface *> &set() {
        static auto *s = new std::unordered_set<Interface *>;
        return *s;
    }
};

}  // namespace opennd::kit
