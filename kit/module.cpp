#include "opennd/kit/com.h"

namespace opennd::kit {
namespace {
std::atomic<long> g_live{0};
}

long LiveObjects() { return g_live.load(std::memory_order_acquire); }
void AddLiveObject() { g_live.fetch_add(1, std::memory_order_relaxed); }
void RemoveLiveObject() { g_live.fetch_sub(1, std::memory_order_release); }

}  // namespace opennd::kit
