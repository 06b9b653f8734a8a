#include "common/region.h"

namespace opennd::client {

Status Region::Register(IND2Adapter *adapter, HANDLE file, void *data, size_t size, ULONG flags, Deadline d) {
    Reset();
    HRESULT hr = adapter->CreateMemoryRegion(IID_IND2MemoryRegion, file, mr_.put_void());
    if (FAILED(hr)) return Status(hr, "CreateMemoryRegion");
    Overlapped ov;
    Status s = Await(mr_, ov, mr_->Register(data, size, flags, &ov), d, "IND2MemoryRegion::Register");
    registered_ = s.ok();
    return s;
}

Status Region::Deregister(Deadline d) {
    if (!mr_) return Status();
    Overlapped ov;
    Status s = Await(mr_, ov, mr_->Deregister(&ov), d, "IND2MemoryRegion::Deregister");
    // A failed Deregister leaves the registration to the release: trying
    // again would only fail again.
    registered_ = false;
    return s;
}

void Region::Reset() {
    if (registered_) Deregister(Deadline::After(kTeardownMs));
    mr_.reset();
}

}  // namespace opennd::client
