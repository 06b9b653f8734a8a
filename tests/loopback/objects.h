// Factories for the loopback provider's child objects (objects.cpp).
#pragma once

#include <vector>

#include "ndspi.h"
#include "opennd/kit/adapter.h"
#include "opennd/ip_address.h"

namespace loopback {

uint32_t RandomToken();
HRESULT MakeMemoryRegion(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);
HRESULT MakeQueuePair(IND2Adapter *adapter, const opennd::kit::QueuePairArgs &args, REFIID iid, void **pp);
HRESULT MakeConnector(IND2Adapter *adapter, HANDLE file, const ND2_ADAPTER_INFO &info, REFIID iid, void **pp,
                      std::vector<opennd::net::IpAddress> addresses);
HRESULT MakeListener(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp,
                     std::vector<opennd::net::IpAddress> addresses);

}  // namespace loopback
