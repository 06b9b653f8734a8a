// Public enumeration of catalogued providers for tools (opennd/providers.h).
#include "opennd/providers.h"

#include <algorithm>
#include <memory>

#include "loader/framework.h"

namespace opennd {

OPENND_API CatalogSnapshot OpenCatalogProviders() {
    CatalogSnapshot snap;
    snap.directory = CatalogDirectory();
    CatalogListing listing = ReadCatalog(snap.directory);
    snap.problems = listing.problems;
    Framework &f = Framework::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.started()) f.RefreshLocked();
    for (const CatalogEntry &e : listing.entries) {
        CatalogProvider p;
        p.entry = e;
        std::string why;
        p.candidate = IsNdCandidate(e, &why);
        if (!p.candidate) {
            p.failure = "not an ND provider entry: " + why;
        } else if (!f.started()) {
            p.failure = "NdStartup has not been called";
        } else {
            auto it = std::find_if(f.providers.begin(), f.providers.end(),
                                   [&](const auto &lib) { return lib->id() == e.provider_id; });
            if (it == f.providers.end()) {
                p.failure = "not loaded";
            } else if ((*it)->path() != e.library_path) {
                p.failure = "another entry with the same provider GUID comes first in the catalog";
            } else if (FAILED((*it)->GetProvider(&p.provider))) {
                p.failure = (*it)->failure();
            }
        }
        snap.providers.push_back(std::move(p));
    }
    return snap;
}

OPENND_API HRESULT OpenProviderLibrary(const std::string &path, const GUID &id, IND2Provider **out,
                                       std::string *failure) {
    // Kept for the life of the process: the provider objects point into it.
    static std::mutex mu;
    static auto *libraries = new std::vector<std::unique_ptr<ProviderLibrary>>;
    std::lock_guard<std::mutex> lock(mu);
    libraries->push_back(std::make_unique<ProviderLibrary>(id, path, path, ND_VERSION_2));
    HRESULT hr = libraries->back()->GetProvider(out);
    if (FAILED(hr) && failure) *failure = libraries->back()->failure();
    return hr;
}

}  // namespace opennd
