// The Nd* helpers of ndsupport.h, with the reference helper's behaviour
// (ND2-SPEC §5.5): started checks, validation order, merge and routing rules.
#include "ndsupport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "opennd/log.h"
#include "loader/framework.h"

using opennd::Framework;

namespace {

// NdCheckAddress validation (also used by NdOpenAdapter, D20).
HRESULT ValidateAddress(const sockaddr *sa, SIZE_T cb) {
    if (!sa || cb < sizeof(sockaddr) || cb > UINT32_MAX) return ND_INVALID_PARAMETER_2;  // ND's ULONG is 32 bits
    if (sa->sa_family == AF_INET && cb < sizeof(sockaddr_in)) return ND_INVALID_PARAMETER_2;
    if (sa->sa_family == AF_INET6 && cb < sizeof(sockaddr_in6)) return ND_INVALID_PARAMETER_2;
    if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) return ND_INVALID_ADDRESS;
    return ND_SUCCESS;
}

bool IsNdAddressLocked(Framework &f, const sockaddr *sa) {
    for (const auto &e : f.v2_addresses)
        if (opennd::net::SameIp(e.address.sa(), sa)) return true;
    return false;
}

HRESULT RouteErrno(int err) {
    switch (err) {
    case ENETUNREACH:
    case ENETDOWN: return ND_NETWORK_UNREACHABLE;
    case EHOSTUNREACH: return ND_HOST_UNREACHABLE;
    case EAFNOSUPPORT:
    case EINVAL:
    case EADDRNOTAVAIL: return ND_INVALID_ADDRESS;
    default: return ND_UNSUCCESSFUL;
    }
}

// The local address the kernel would use towards `remote` (a UDP connect
// sends nothing; getsockname reports the route's source address).
HRESULT RouteSource(const sockaddr *remote, opennd::net::IpAddress *local) {
    opennd::net::IpAddress dst;
    if (!opennd::net::FromSockaddr(remote, opennd::net::SockaddrLength(remote->sa_family), &dst)) return ND_INVALID_ADDRESS;
    if (opennd::net::Port(dst.sa()) == 0) opennd::net::SetPort(dst.sa(), 9);  // connect() needs a port; none is contacted
    int fd = socket(dst.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return RouteErrno(errno);
    HRESULT hr = ND_SUCCESS;
    socklen_t len = sizeof(local->storage);
    if (connect(fd, dst.sa(), dst.length()) != 0)
        hr = RouteErrno(errno);
    else if (getsockname(fd, local->sa(), &len) != 0)
        hr = ND_UNSUCCESSFUL;
    close(fd);
    if (SUCCEEDED(hr)) opennd::net::SetPort(local->sa(), 0);
    return hr;
}

}  // namespace

extern "C" {

OPENND_API HRESULT NdStartup(void) { return Framework::Get().Startup(); }

OPENND_API HRESULT NdCleanup(void) { return Framework::Get().Cleanup(); }

OPENND_API void NdFlushProviders(void) {
    Framework &f = Framework::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.started()) f.FlushLocked();
}

OPENND_API HRESULT NdQueryAddressList(DWORD flags, SOCKET_ADDRESS_LIST *pAddressList, SIZE_T *pcbAddressList) {
    Framework &f = Framework::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.started()) return ND_DEVICE_NOT_READY;
    if (!pcbAddressList) return ND_INVALID_PARAMETER_3;
    f.RefreshLocked();
    std::vector<opennd::net::IpAddress> addrs;
    if (!(flags & ND_QUERY_EXCLUDE_NDv2_ADDRESSES))
        for (const auto &e : f.v2_addresses) addrs.push_back(e.address);
    // v1 providers are not loaded by OpenND, so their list is always empty.
    if (addrs.empty()) {
        *pcbAddressList = 0;  // D16: success, buffer untouched
        return ND_SUCCESS;
    }
    SIZE_T cb = *pcbAddressList;
    HRESULT hr = opennd::net::WriteAddressList(addrs, pAddressList, &cb);
    if (hr == ND_BUFFER_OVERFLOW) *pcbAddressList = cb;  // D16: not updated on success
    return hr;
}

OPENND_API HRESULT NdResolveAddress(const sockaddr *pRemoteAddress, SIZE_T cbRemoteAddress, sockaddr *pLocalAddress,
                                    SIZE_T *pcbLocalAddress) {
    Framework &f = Framework::Get();
    {
        std::lock_guard<std::mutex> lock(f.mu);
        if (!f.started()) return ND_DEVICE_NOT_READY;
    }
    HRESULT hr = ValidateAddress(pRemoteAddress, cbRemoteAddress);
    if (FAILED(hr)) return hr;
    if (!pcbLocalAddress) return ND_INVALID_PARAMETER_4;
    opennd::net::IpAddress local;
    hr = RouteSource(pRemoteAddress, &local);
    if (FAILED(hr)) return hr;
    if (!pLocalAddress || *pcbLocalAddress < local.length()) {
        *pcbLocalAddress = local.length();
        return ND_BUFFER_OVERFLOW;
    }
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.started()) return ND_DEVICE_NOT_READY;  // the last NdCleanup ran meanwhile
    f.RefreshLocked();
    if (!IsNdAddressLocked(f, local.sa())) return ND_INVALID_ADDRESS;
    std::memcpy(pLocalAddress, &local.storage, local.length());
    *pcbLocalAddress = local.length();
    return S_OK;
}

OPENND_API HRESULT NdCheckAddress(const sockaddr *pAddress, SIZE_T cbAddress) {
    Framework &f = Framework::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.started()) return ND_DEVICE_NOT_READY;
    HRESULT hr = ValidateAddress(pAddress, cbAddress);
    if (FAILED(hr)) return hr;
    f.RefreshLocked();
    return IsNdAddressLocked(f, pAddress) ? ND_SUCCESS : ND_INVALID_ADDRESS;
}

OPENND_API HRESULT NdOpenAdapter(REFIID iid, const sockaddr *pAddress, SIZE_T cbAddress, void **ppIAdapter) {
    Framework &f = Framework::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.started()) return ND_DEVICE_NOT_READY;
    HRESULT hr = ValidateAddress(pAddress, cbAddress);
    if (FAILED(hr)) return hr;
    if (!ppIAdapter) return ND_INVALID_PARAMETER_4;
    *ppIAdapter = nullptr;
    f.RefreshLocked();
    // IID_INDAdapter asks for a v1 adapter: only v1 providers may answer, and
    // OpenND loads none (R158).
    if (iid == IID_INDAdapter) return ND_INVALID_ADDRESS;
    hr = ND_INVALID_ADDRESS;
    // Every entry whose IP matches, in list order: another provider may serve
    // the same IP if the first cannot open it.
    for (const auto &e : f.v2_addresses) {
        if (!opennd::net::SameIp(e.address.sa(), pAddress)) continue;
        IND2Provider *prov = nullptr;
        if (FAILED(e.provider->GetProvider(&prov))) {
            hr = ND_INVALID_ADDRESS;
            continue;
        }
        UINT64 id = 0;
        hr = prov->ResolveAddress(pAddress, static_cast<ULONG>(cbAddress), &id);
        if (FAILED(hr)) {
            hr = ND_INVALID_ADDRESS;
        } else {
            hr = prov->OpenAdapter(iid, id, ppIAdapter);
            if (FAILED(hr))
                OPENND_LOG(Info, "provider %s could not open the adapter for %s (0x%08X)",
                           e.provider->name().c_str(), opennd::net::ToString(pAddress).c_str(), static_cast<unsigned>(hr));
        }
        prov->Release();
        if (SUCCEEDED(hr)) break;
    }
    f.FlushLocked();
    return hr;
}

// Microsoft's ND v1 entry point (ndsupport.h). OpenND loads no v1 provider,
// so there is never a v1 adapter to open.
OPENND_API HRESULT NdOpenV1Adapter(const sockaddr *pAddress, SIZE_T cbAddress, INDAdapter **ppIAdapter) {
    (void)pAddress;
    (void)cbAddress;
    if (ppIAdapter) *ppIAdapter = nullptr;
    return ND_NOT_SUPPORTED;
}

}  // extern "C"
