// The Winsock catalog calls of <ws2spi.h>, on top of the drop-in catalog in
// CatalogDirectory(). Errors are reported through *lpErrno only, as in Winsock.
#include <limits.h>

#include <cerrno>
#include <cwchar>

#include "catalog/catalog_internal.h"
#include "opennd/log.h"
#include "ws2spi.h"

namespace {

using opennd::CatalogEntry;

int Error(LPINT lpErrno, int code) {
    if (lpErrno) *lpErrno = code;
    return SOCKET_ERROR;
}

int ToWsaError(int err) {
    switch (err) {
    case EINVAL:
    case EEXIST:
    case ENOENT: return WSAEINVAL;
    case EACCES:
    case EPERM:
    case EROFS: return WSAEACCES;
    default: return WSANO_RECOVERY;
    }
}

const CatalogEntry *FindProvider(const std::vector<CatalogEntry> &entries, const GUID &id) {
    for (const CatalogEntry &e : entries)
        if (e.provider_id == id) return &e;
    return nullptr;
}

void Fill(const CatalogEntry &e, DWORD index, WSAPROTOCOL_INFOW *p) {
    memset(p, 0, sizeof *p);
    p->dwServiceFlags1 = e.service_flags1;
    p->dwProviderFlags = e.provider_flags;
    p->ProviderId = e.provider_id;
    p->dwCatalogEntryId = index + 1;
    p->ProtocolChain.ChainLen = BASE_PROTOCOL;
    p->iVersion = e.version;
    p->iAddressFamily = e.address_family;
    p->iMaxSockAddr = sizeof(sockaddr_in6);
    p->iMinSockAddr = sizeof(sockaddr_in);
    p->iSocketType = e.socket_type;
    p->iProtocol = e.protocol;
    p->iProtocolMaxOffset = e.protocol_max_offset;
    std::wstring name;
    if (!opennd::catalog::Utf8ToWide(e.name, &name)) name = L"?";  // the parser checked it; cannot happen
    if (name.size() > WSAPROTOCOL_LEN) name.resize(WSAPROTOCOL_LEN);
    wmemcpy(p->szProtocol, name.c_str(), name.size() + 1);
}

}  // namespace

extern "C" {

OPENND_API int WSCInstallProvider(LPGUID lpProviderId, const WCHAR *lpszProviderDllPath,
                                  const LPWSAPROTOCOL_INFOW lpProtocolInfoList, DWORD dwNumberOfEntries,
                                  LPINT lpErrno) {
    if (!lpProviderId || !lpszProviderDllPath || !lpProtocolInfoList || dwNumberOfEntries == 0)
        return Error(lpErrno, WSAEINVAL);
    std::string library;
    size_t path_len = wcsnlen(lpszProviderDllPath, PATH_MAX);
    if (path_len == 0 || path_len >= PATH_MAX ||
        !opennd::catalog::WideToUtf8(std::wstring_view(lpszProviderDllPath, path_len), &library) ||
        library[0] != '/') {
        OPENND_LOG(Error, "WSCInstallProvider: the library path is empty, too long, not text or not absolute");
        return Error(lpErrno, WSAEINVAL);
    }
    std::vector<CatalogEntry> entries;
    for (DWORD i = 0; i < dwNumberOfEntries; ++i) {
        const WSAPROTOCOL_INFOW &p = lpProtocolInfoList[i];
        CatalogEntry e;
        std::wstring_view wname(p.szProtocol, wcsnlen(p.szProtocol, WSAPROTOCOL_LEN + 1));
        if (!opennd::catalog::WideToUtf8(wname, &e.name)) return Error(lpErrno, WSAEINVAL);
        e.provider_id = *lpProviderId;
        e.library = library;
        e.library_path = library;
        e.service_flags1 = p.dwServiceFlags1;
        e.provider_flags = p.dwProviderFlags;
        e.version = p.iVersion;
        e.address_family = p.iAddressFamily;
        e.socket_type = p.iSocketType;
        e.protocol = p.iProtocol;
        e.protocol_max_offset = p.iProtocolMaxOffset;
        entries.push_back(std::move(e));
    }
    std::string dir = opennd::CatalogDirectory(), error;
    if (int err = opennd::catalog::InstallEntries(dir, entries, &error)) {
        OPENND_LOG(Error, "WSCInstallProvider %s: %s", opennd::FormatGuid(*lpProviderId).c_str(), error.c_str());
        return Error(lpErrno, ToWsaError(err));
    }
    return 0;
}

OPENND_API int WSCDeinstallProvider(LPGUID lpProviderId, LPINT lpErrno) {
    if (!lpProviderId) return Error(lpErrno, WSAEINVAL);
    std::string dir = opennd::CatalogDirectory(), error;
    if (int err = opennd::catalog::RemoveMatching(dir, lpProviderId, nullptr, &error)) {
        if (err != ENOENT) OPENND_LOG(Error, "WSCDeinstallProvider: %s", error.c_str());
        return Error(lpErrno, ToWsaError(err));
    }
    return 0;
}

OPENND_API int WSCEnumProtocols(LPINT lpiProtocols, LPWSAPROTOCOL_INFOW lpProtocolBuffer, LPDWORD lpdwBufferLength,
                                LPINT lpErrno) {
    (void)lpiProtocols;  // ND catalogs have no protocol numbers to filter on
    if (!lpdwBufferLength) return Error(lpErrno, WSAEFAULT);
    opennd::CatalogListing listing = opennd::ReadCatalog(opennd::CatalogDirectory());
    const size_t count = listing.entries.size();
    const size_t need = count * sizeof(WSAPROTOCOL_INFOW);
    if (need > 0xFFFFFFFFu) return Error(lpErrno, WSANO_RECOVERY);
    if (need > *lpdwBufferLength || (need > 0 && !lpProtocolBuffer)) {
        *lpdwBufferLength = static_cast<DWORD>(need);
        return Error(lpErrno, WSAENOBUFS);
    }
    for (size_t i = 0; i < count; ++i) Fill(listing.entries[i], static_cast<DWORD>(i), &lpProtocolBuffer[i]);
    return static_cast<int>(count);
}

// *lpProviderDllPathLen is the buffer size in WCHARs. If it is too small:
// WSAEFAULT, with *lpProviderDllPathLen set to the size needed (with the NUL).
OPENND_API int WSCGetProviderPath(LPGUID lpProviderId, WCHAR *lpszProviderDllPath, LPINT lpProviderDllPathLen,
                                  LPINT lpErrno) {
    if (!lpProviderId) return Error(lpErrno, WSAEINVAL);
    if (!lpProviderDllPathLen) return Error(lpErrno, WSAEFAULT);
    opennd::CatalogListing listing = opennd::ReadCatalog(opennd::CatalogDirectory());
    const CatalogEntry *e = FindProvider(listing.entries, *lpProviderId);
    if (!e) return Error(lpErrno, WSAEINVAL);
    std::wstring path;
    if (!opennd::catalog::Utf8ToWide(e->library_path, &path)) return Error(lpErrno, WSANO_RECOVERY);
    const int need = static_cast<int>(path.size() + 1);
    if (!lpszProviderDllPath || *lpProviderDllPathLen < need) {
        *lpProviderDllPathLen = need;
        return Error(lpErrno, WSAEFAULT);
    }
    wmemcpy(lpszProviderDllPath, path.c_str(), path.size() + 1);
    return 0;
}

}  // extern "C"
