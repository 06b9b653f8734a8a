#include "loader/framework.h"

#include <algorithm>

#include "opennd/log.h"
#include "opennd/catalog.h"

namespace opennd {

Framework &Framework::Get() {
    static Framework *f = new Framework;  // never destroyed: providers may outlive static destructors
    return *f;
}

bool Framework::started() { return started_ > 0; }

HRESULT Framework::Startup() {
    std::lock_guard<std::mutex> lock(mu);
    ++started_;
    return S_OK;
}

HRESULT Framework::Cleanup() {
    std::lock_guard<std::mutex> lock(mu);
    if (started_ == 0) return ND_DEVICE_NOT_READY;
    if (--started_ > 0) return S_OK;
    v2_addresses.clear();
    active.clear();
    for (auto &p : providers) p->TryUnload();
    // Libraries still in use (an adapter not yet released) stay loaded and known.
    std::erase_if(providers, [](const auto &p) { return !p->loaded(); });
    return S_OK;
}

void Framework::RefreshLocked() {
    CatalogListing listing = ReadCatalog(CatalogDirectory());
    static std::vector<std::string> reported;  // problems logged once per process
    for (const auto &problem : listing.problems) {
        std::string line = problem.file + ": " + problem.reason;
        if (std::find(reported.begin(), reported.end(), line) == reported.end()) {
            OPENND_LOG(Warn, "catalog entry skipped: %s", line.c_str());
            reported.push_back(line);
        }
    }
    active.clear();
    for (const CatalogEntry &e : listing.entries) {
        std::string why;
        if (!IsNdCandidate(e, &why)) {
            std::string line = e.file + ": not an ND provider entry: " + why;
            if (std::find(reported.begin(), reported.end(), line) == reported.end()) {
                OPENND_LOG(Info, "%s", line.c_str());
                reported.push_back(line);
            }
            continue;
        }
        auto it = std::find_if(providers.begin(), providers.end(), [&](const auto &p) { return p->id() == e.provider_id; });
        ProviderLibrary *lib;
        if (it == providers.end()) {
            providers.push_back(std::make_unique<ProviderLibrary>(e.provider_id, e.name, e.library_path, e.version));
            lib = providers.back().get();
        } else {
            lib = it->get();
            // One entry per GUID: the first in catalog order, as in Winsock
            // (and as WSCGetProviderPath and the snapshot report it).
            if (std::find(active.begin(), active.end(), lib) != active.end()) continue;
            lib->SetPath(e.library_path, e.version);
        }
        active.push_back(lib);
    }

    v2_addresses.clear();
    for (ProviderLibrary *lib : active) {
        if (lib->version() == ND_VERSION_1) continue;
        IND2Provider *prov = nullptr;
        if (FAILED(lib->GetProvider(&prov))) continue;
        std::vector<char> buf(1024);
        ULONG cb = static_cast<ULONG>(buf.size());
        HRESULT hr = prov->QueryAddressList(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()), &cb);
        if (hr == ND_BUFFER_OVERFLOW) {
            buf.resize(cb);
            hr = prov->QueryAddressList(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()), &cb);
        }
        prov->Release();
        if (FAILED(hr)) {
            OPENND_LOG(Warn, "provider %s: QueryAddressList failed (0x%08X)", lib->name().c_str(),
                       static_cast<unsigned>(hr));
            continue;
        }
        auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
        for (INT i = 0; i < list->iAddressCount; ++i) {
            AddressEntry entry{{}, lib};
            if (opennd::net::FromSockaddr(list->Address[i].lpSockaddr, static_cast<size_t>(list->Address[i].iSockaddrLength),
                                  &entry.address))
                v2_addresses.push_back(entry);
        }
    }
    FlushLocked();
}

void Framework::FlushLocked() {
    for (auto &p : providers) p->TryUnload();
    std::erase_if(providers, [&](const auto &p) {
        bool is_active = std::find(active.begin(), active.end(), p.get()) != active.end();
        bool referenced = std::any_of(v2_addresses.begin(), v2_addresses.end(),
                                      [&](const AddressEntry &a) { return a.provider == p.get(); });
        return !is_active && !referenced && !p->loaded();
    });
}

}  // namespace opennd
