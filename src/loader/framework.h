// The state behind the Nd* helpers (ndsupport.h): the started count, the
// providers known from the catalog, and the merged address list.
//
// Refresh model: the reference helper refreshes lazily at the start of each
// query, on catalog and address-change events. OpenND does the same work on
// every query (re-reading a directory of a few small files and asking each
// provider for its addresses costs microseconds next to opening an adapter),
// so there are no watches to get out of date.
//
// Locking: one mutex guards everything here and is held across calls into
// providers; the helpers are control-path calls.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "loader/provider_library.h"
#include "opennd/ip_address.h"

namespace opennd {

struct AddressEntry {
    opennd::net::IpAddress address;
    ProviderLibrary *provider;
};

class Framework {
public:
    static Framework &Get();

    HRESULT Startup();
    HRESULT Cleanup();
    bool started();  // requires mu held

    // Re-reads the catalog and every active provider's address list.
    void RefreshLocked();
    // Unloads idle libraries; forgets records no longer in the catalog once unloaded.
    void FlushLocked();

    std::mutex mu;
    std::vector<std::unique_ptr<ProviderLibrary>> providers;  // catalog order
    std::vector<ProviderLibrary *> active;                    // in the catalog now
    std::vector<AddressEntry> v2_addresses;                   // provider order, then report order

private:
    int started_ = 0;
};

}  // namespace opennd
