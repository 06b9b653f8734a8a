// ndsoft's clocks are the kit's (opennd/kit/clock.h), under ndsoft's names.
#pragma once

#include "opennd/kit/clock.h"

namespace soft {

using opennd::kit::NowMs;
using opennd::kit::NowNs;

}  // namespace soft
