// The IP address helpers (opennd/ip_address.h, libopennd's) under the
// kit's namespace, where the kit and providers name them unqualified.
#pragma once

#include "opennd/ip_address.h"

namespace opennd::kit {
using namespace ::opennd::net;
}  // namespace opennd::kit
