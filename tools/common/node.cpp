#include "common/node.h"

#include "ndsupport.h"

namespace opennd::client {

Status QueryInfo(IND2Adapter *adapter, ND2_ADAPTER_INFO *info) {
    *info = ND2_ADAPTER_INFO{};
    info->InfoVersion = ND_VERSION_2;
    ULONG size = sizeof *info;
    HRESULT hr = adapter->Query(info, &size);
    if (FAILED(hr)) *info = ND2_ADAPTER_INFO{};
    return Status(hr, "IND2Adapter::Query");
}

Node::~Node() {
    // The adapter first: its objects are gone by now (their owners hold
    // Nodes, not the other way round), and the file outlives what used it.
    adapter.reset();
    if (file) CloseHandle(file);
}

Status Node::Open(const opennd::net::IpAddress &local) {
    ComPtr<IND2Adapter> opened;
    HRESULT hr = NdOpenAdapter(IID_IND2Adapter, local.sa(), local.length(), opened.put_void());
    if (FAILED(hr)) return Status(hr, "NdOpenAdapter");
    return Adopt(std::move(opened));
}

Status Node::Adopt(ComPtr<IND2Adapter> opened) {
    adapter = std::move(opened);
    HRESULT hr = adapter->CreateOverlappedFile(&file);
    if (FAILED(hr)) return Status(hr, "CreateOverlappedFile");
    return QueryInfo(adapter, &info);
}

}  // namespace opennd::client
