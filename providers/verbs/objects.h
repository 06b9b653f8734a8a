// The verbs provider's objects, as its adapter makes them (provider.cpp).
#pragma once

#include <memory>

#include "device.h"
#include "opennd/kit/adapter.h"

namespace opennd::verbs {

HRESULT MakeMemoryRegion(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);
HRESULT MakeMemoryWindow(std::shared_ptr<Device> device, IND2Adapter *adapter, REFIID iid, void **pp);
HRESULT MakeQueuePair(std::shared_ptr<Device> device, IND2Adapter *adapter, const kit::QueuePairArgs &a, REFIID iid,
                      void **pp);
HRESULT MakeConnector(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);
HRESULT MakeListener(std::shared_ptr<Device> device, IND2Adapter *adapter, HANDLE file, REFIID iid, void **pp);

}  // namespace opennd::verbs
