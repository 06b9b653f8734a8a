// Factories for the loopback provider's child objects (objects.cpp).
#pragma once

#include <vector>

#include "ndspi.h"
#include "opennd/kit/address.h"

namespace loopback {

uint32_t RandomToken();
HRESULT MakeMemoryRegion(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);
HRESULT MakeQueuePair(IND2Adapter *adapter, REFIID iid, IUnknown *rcq, IUnknown *icq, void *context, ULONG rdepth,
                      ULONG idepth, ULONG rsge, ULONG isge, ULONG inline_size, void **pp);
HRESULT MakeConnector(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);
HRESULT MakeListener(IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp,
                     std::vector<opennd::kit::IpAddress> addresses);

}  // namespace loopback
