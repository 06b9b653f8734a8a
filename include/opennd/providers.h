/* OpenND: the catalogued providers as the helper library sees them, for
 * tools (ndinfo, ndperf, ndconformance) that need more than NdOpenAdapter:
 * every catalog entry, whether it loads, and its IND2Provider. */
#ifndef OPENND_PROVIDERS_H
#define OPENND_PROVIDERS_H

#include <string>
#include <vector>

#include "ndspi.h"
#include "opennd/catalog.h"

namespace opennd {

struct CatalogProvider {
    CatalogEntry entry;
    bool candidate = false;            /* passes the ND registration predicate (§5.2) */
    std::string failure;               /* why it is not usable ("" if it is) */
    IND2Provider *provider = nullptr;  /* AddRef'ed; the caller releases it */
};

struct CatalogSnapshot {
    std::string directory;
    std::vector<CatalogProvider> providers; /* catalog order */
    std::vector<CatalogProblem> problems;   /* files that could not be read */
};

/* Reads the catalog and loads every ND provider in it. Requires NdStartup. */
OPENND_API CatalogSnapshot OpenCatalogProviders();

/* Loads one provider library directly by path (not through the catalog), as
 * `ndconformance --library` does. The library stays loaded. */
OPENND_API HRESULT OpenProviderLibrary(const std::string &path, const GUID &id, IND2Provider **out,
                                       std::string *failure);

}  // namespace opennd

#endif
