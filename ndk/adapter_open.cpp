// Opening and closing NDK adapters: NdkOpenAdapter (interface index),
// NdkOpenAdapterByAddress, NdkCloseAdapter.
//
// An NDK adapter is the ND2 adapter NdOpenAdapter finds for an address (any
// provider in the catalog), plus an overlapped file bound to a completion
// port and the dispatcher thread reading it.
#include <ifaddrs.h>
#include <net/if.h>

#include <cstring>
#include <vector>

#include "ndsupport.h"
#include "objects.h"
#include "opennd/nd_extensions.h"

namespace opennd::ndk {
namespace {

constexpr ULONG_PTR kIoKey = 1;

bool VersionSupported(NDK_VERSION v) { return v.Major == NDK_VERSION_MAJOR && v.Minor <= NDK_VERSION_MINOR; }

// The IP addresses of interface `index`, IPv4 first (as the ND catalog lists them).
NTSTATUS InterfaceAddresses(NET_IFINDEX index, std::vector<sockaddr_storage> *out) {
    char name[IF_NAMESIZE];
    if (index == 0 || !if_indextoname(index, name)) return STATUS_NOT_FOUND;
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return STATUS_INSUFFICIENT_RESOURCES;
    for (int family : {AF_INET, AF_INET6}) {
        for (ifaddrs *a = list; a; a = a->ifa_next) {
            if (!a->ifa_addr || a->ifa_addr->sa_family != family || std::strcmp(a->ifa_name, name) != 0) continue;
            sockaddr_storage s{};
            std::memcpy(&s, a->ifa_addr, family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
            out->push_back(s);
        }
    }
    freeifaddrs(list);
    return out->empty() ? STATUS_INVALID_ADDRESS : STATUS_SUCCESS;
}

}  // namespace

Adapter::Adapter(IND2Adapter *nd, HANDLE file, HANDLE port)
    : Object(this, NdkObjectTypeAdapter), nd_(nd), file_(file), port_(port), lams_(nd, file) {
    InitHeader(&face_.pub.Header);
    face_.pub.Dispatch = &kAdapterDispatch;
    face_.self = this;
    IOpenNdAdapterExt *ext = nullptr;
    if (SUCCEEDED(nd_->QueryInterface(IID_IOpenNdAdapterExt, reinterpret_cast<void **>(&ext))) && ext) {
        extensions_ = ext->Extensions();
        ext->Release();
    }
}

Adapter::~Adapter() {
    lams_.ReleaseAll();  // mappings the consumer never released
    nd_->Release();
    CloseHandle(port_);
    CloseHandle(file_);
    NdCleanup();
}

NTSTATUS Adapter::Open(const sockaddr *address, ULONG length, NDK_ADAPTER **out) {
    if (NdStartup() != ND_SUCCESS) return STATUS_DEVICE_NOT_READY;
    IND2Adapter *nd = nullptr;
    HRESULT hr = NdOpenAdapter(IID_IND2Adapter, address, length, reinterpret_cast<void **>(&nd));
    if (FAILED(hr)) {
        NdCleanup();
        return StatusFromNd(hr);
    }
    HANDLE file = nullptr, port = nullptr;
    if (FAILED(hr = nd->CreateOverlappedFile(&file)) ||
        !(port = CreateIoCompletionPort(file, nullptr, kIoKey, 0))) {
        if (file) CloseHandle(file);
        nd->Release();
        NdCleanup();
        return FAILED(hr) ? StatusFromNd(hr) : STATUS_INSUFFICIENT_RESOURCES;
    }
    Adapter *a = new (std::nothrow) Adapter(nd, file, port);
    if (!a) {
        CloseHandle(port);
        CloseHandle(file);
        nd->Release();
        NdCleanup();
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    try {
        a->thread_ = std::thread(&Adapter::Run, a);
    } catch (...) {
        delete a;
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->dispatcher_id_ = a->thread_.get_id();
    *out = a->pub();
    return STATUS_SUCCESS;
}

}  // namespace opennd::ndk

using opennd::ndk::Adapter;

extern "C" {

OPENND_API NTSTATUS NdkOpenAdapterByAddress(NDK_VERSION Version, CONST SOCKADDR *pAddress, ULONG AddressLength,
                                            NDK_ADAPTER **ppNdkAdapter) {
    if (!ppNdkAdapter || !pAddress) return STATUS_INVALID_PARAMETER;
    if (!opennd::ndk::VersionSupported(Version)) return NDIS_STATUS_BAD_VERSION;
    return Adapter::Open(pAddress, AddressLength, ppNdkAdapter);
}

OPENND_API NTSTATUS NdkOpenAdapter(NDK_VERSION Version, NET_IFINDEX IfIndex, NDK_ADAPTER **ppNdkAdapter) {
    if (!ppNdkAdapter) return STATUS_INVALID_PARAMETER;
    if (!opennd::ndk::VersionSupported(Version)) return NDIS_STATUS_BAD_VERSION;
    std::vector<sockaddr_storage> addresses;
    NTSTATUS status = opennd::ndk::InterfaceAddresses(IfIndex, &addresses);
    if (!NT_SUCCESS(status)) return status;
    for (const sockaddr_storage &s : addresses) {
        ULONG len = s.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
        status = Adapter::Open(reinterpret_cast<const sockaddr *>(&s), len, ppNdkAdapter);
        if (NT_SUCCESS(status)) return status;
    }
    return status;
}

OPENND_API NTSTATUS NdkCloseAdapter(NDK_ADAPTER *pNdkAdapter, NDK_FN_CLOSE_COMPLETION CloseCompletion,
                                    PVOID Context) {
    if (!pNdkAdapter || pNdkAdapter->Header.ObjectType != NdkObjectTypeAdapter) return STATUS_INVALID_PARAMETER;
    return Adapter::From(pNdkAdapter)->CloseAdapter(CloseCompletion, Context);
}

}  // extern "C"
