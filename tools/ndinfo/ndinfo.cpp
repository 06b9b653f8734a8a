// ndinfo: what NetworkDirect providers this machine has, the adapters they
// serve and every ND2_ADAPTER_INFO field. Like Windows' ndinstall -l plus
// ndadapterinfo, in one tool.
#include <cstdio>
#include <cstring>
#include <map>

#include "ndsupport.h"
#include "opennd/adapter_notes.h"
#include "opennd/ip_address.h"
#include "opennd/params.h"
#include "opennd/providers.h"
#include "report.h"

namespace {

void Usage(FILE *out) {
    std::fprintf(out,
                 "usage: ndinfo [--json] [--catalog DIR]\n"
                 "       ndinfo --params\n"
                 "Lists the NetworkDirect providers in the catalog, whether each loads (and why\n"
                 "not), the local addresses each serves grouped by adapter, and every field of\n"
                 "each adapter's ND2_ADAPTER_INFO.\n"
                 "  --params       list every OPENND_* environment variable: its default, the\n"
                 "                 value in effect and what it does (like fi_info -e)\n"
                 "  --json         machine-readable output\n"
                 "  --catalog DIR  read this catalog directory instead of the default\n"
                 "                 (same as OPENND_CATALOG=DIR)\n"
                 "  -h, --help     this text\n");
}

std::vector<opennd::net::IpAddress> Addresses(IND2Provider *p, HRESULT *hr) {
    std::vector<opennd::net::IpAddress> out;
    ULONG cb = 0;
    *hr = p->QueryAddressList(nullptr, &cb);
    if (*hr == ND_SUCCESS) return out;
    if (*hr != ND_BUFFER_OVERFLOW) return out;
    std::vector<char> buf(cb);
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    *hr = p->QueryAddressList(list, &cb);
    if (FAILED(*hr)) return out;
    for (INT i = 0; i < list->iAddressCount; ++i) {
        opennd::net::IpAddress a;
        if (opennd::net::FromSockaddr(list->Address[i].lpSockaddr, list->Address[i].iSockaddrLength, &a))
            out.push_back(a);
    }
    return out;
}

ProviderReport Describe(const opennd::CatalogProvider &cp) {
    ProviderReport pr;
    pr.name = cp.entry.name;
    pr.guid = opennd::FormatGuid(cp.entry.provider_id);
    pr.library = cp.entry.library_path;
    pr.file = cp.entry.file;
    pr.description = cp.entry.description;
    pr.version = cp.entry.version;
    pr.failure = cp.failure;
    if (!cp.provider) return pr;
    HRESULT hr;
    auto addrs = Addresses(cp.provider, &hr);
    if (FAILED(hr)) {
        pr.failure = "QueryAddressList failed: " + StatusText(hr);
        return pr;
    }
    pr.usable = true;
    std::map<UINT64, AdapterReport> adapters;
    for (auto &a : addrs) {
        UINT64 id = 0;
        if (FAILED(cp.provider->ResolveAddress(a.sa(), a.length(), &id))) continue;
        adapters[id].id = id;
        adapters[id].addresses.push_back(opennd::net::ToString(a.sa()));
    }
    for (auto &[id, ar] : adapters) {
        IND2Adapter *adapter = nullptr;
        ar.open_status = cp.provider->OpenAdapter(IID_IND2Adapter, id, reinterpret_cast<void **>(&adapter));
        if (SUCCEEDED(ar.open_status)) {
            ar.info.InfoVersion = ND_VERSION_2;
            ULONG cb = sizeof ar.info;
            ar.query_status = adapter->Query(&ar.info, &cb);
            IOpenNdAdapterNotes *notes = nullptr;
            if (SUCCEEDED(adapter->QueryInterface(IID_IOpenNdAdapterNotes, reinterpret_cast<void **>(&notes)))) {
                ULONG size = 0;
                if (notes->GetNotes(nullptr, &size) == ND_BUFFER_OVERFLOW) {
                    std::string text(size, '\0');
                    if (SUCCEEDED(notes->GetNotes(text.data(), &size))) ar.notes = text.c_str();
                }
                notes->Release();
            }
            adapter->Release();
        }
        pr.adapters.push_back(ar);
    }
    return pr;
}

// Every tunable, its default and the value this process sees.
int PrintParams() {
    size_t n = 0;
    const opennd::Param *params = opennd::Params(&n);
    for (size_t i = 0; i < n; ++i) {
        const opennd::Param &p = params[i];
        const char *now = opennd::ParamText(p.name);
        std::printf("%s (%s)\n    default: %s\n", p.name, p.component, *p.default_value ? p.default_value : "unset");
        if (now) std::printf("    set to:  %s\n", now);
        std::printf("    %s\n\n", p.help);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json")) {
            json = true;
        } else if (!std::strcmp(argv[i], "--params")) {
            return PrintParams();
        } else if (!std::strcmp(argv[i], "--catalog") && i + 1 < argc) {
            setenv("OPENND_CATALOG", argv[++i], 1);
        } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            Usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "ndinfo: unknown option '%s'\n", argv[i]);
            Usage(stderr);
            return 2;
        }
    }
    if (HRESULT hr = NdStartup(); FAILED(hr)) {
        std::fprintf(stderr, "ndinfo: NdStartup failed: %s\n", StatusText(hr).c_str());
        return 1;
    }
    opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
    Report report;
    report.catalog = snap.directory;
    for (const auto &p : snap.problems) report.problems.push_back(p.file + ": " + p.reason);
    for (auto &cp : snap.providers) {
        report.providers.push_back(Describe(cp));
        if (cp.provider) cp.provider->Release();
    }
    if (json)
        PrintJson(report);
    else
        PrintText(report);
    NdCleanup();
    bool any = false;
    for (const auto &p : report.providers) any = any || p.usable;
    return any ? 0 : 1;
}
