// An ND "hello": written against the Windows ND names only. It starts the
// helper library, lists every address the catalogued providers serve and
// opens the adapter behind each one.
//   g++ -std=c++17 hello.cpp $(pkg-config --cflags --libs opennd) -o hello
#include <ndsupport.h>
#include <ndspi.h>

#include <cstdio>
#include <vector>

int main() {
    HRESULT hr = NdStartup();
    if (FAILED(hr)) {
        std::printf("NdStartup failed: 0x%08X\n", static_cast<unsigned>(hr));
        return 1;
    }
    SIZE_T cb = 0;
    hr = NdQueryAddressList(0, nullptr, &cb);
    std::vector<char> buf(cb ? cb : sizeof(SOCKET_ADDRESS_LIST));
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    list->iAddressCount = 0;
    if (hr == ND_BUFFER_OVERFLOW) hr = NdQueryAddressList(0, list, &cb);
    if (FAILED(hr)) {
        std::printf("NdQueryAddressList failed: 0x%08X\n", static_cast<unsigned>(hr));
        return 1;
    }
    std::printf("%d NetworkDirect address(es)\n", list->iAddressCount);
    int opened = 0;
    for (INT i = 0; i < list->iAddressCount; ++i) {
        const SOCKET_ADDRESS &a = list->Address[i];
        char text[64] = "?";
        if (a.lpSockaddr->sa_family == AF_INET)
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(a.lpSockaddr)->sin_addr, text, sizeof text);
        else
            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(a.lpSockaddr)->sin6_addr, text, sizeof text);
        IND2Adapter *adapter = nullptr;
        hr = NdOpenAdapter(IID_IND2Adapter, a.lpSockaddr, a.iSockaddrLength, reinterpret_cast<void **>(&adapter));
        if (FAILED(hr)) {
            std::printf("  %-40s open failed: 0x%08X\n", text, static_cast<unsigned>(hr));
            continue;
        }
        ND2_ADAPTER_INFO info = {};
        info.InfoVersion = ND_VERSION_2;
        ULONG size = sizeof info;
        adapter->Query(&info, &size);
        std::printf("  %-40s adapter %llu, max transfer %lu bytes\n", text,
                    static_cast<unsigned long long>(info.AdapterId), static_cast<unsigned long>(info.MaxTransferLength));
        adapter->Release();
        ++opened;
    }
    NdCleanup();
    return opened == list->iAddressCount ? 0 : 1;
}
