// opennd::client::Node: one process's adapter and the overlapped file its
// objects report to, with the adapter's ND2_ADAPTER_INFO.
#pragma once

#include "common/com_ptr.h"
#include "common/status.h"
#include "ndspi.h"
#include "opennd/ip_address.h"

namespace opennd::client {

// IND2Adapter::Query with the right version and size.
Status QueryInfo(IND2Adapter *adapter, ND2_ADAPTER_INFO *info);

// The members are public, as Connection's: users hand them to ND calls
// and to the other pieces. Released adapter first, then the file.
struct Node {
    ComPtr<IND2Adapter> adapter;
    HANDLE file = nullptr;
    ND2_ADAPTER_INFO info{};

    Node() = default;
    ~Node();
    Node(const Node &) = delete;
    Node &operator=(const Node &) = delete;

    // NdOpenAdapter for `local` (the catalog picks the provider), then the
    // overlapped file and the adapter's info.
    Status Open(const opennd::net::IpAddress &local);
    // An adapter opened some other way (a named provider, a provider
    // library loaded directly): the overlapped file and the info.
    Status Adopt(ComPtr<IND2Adapter> adapter);
};

}  // namespace opennd::client
