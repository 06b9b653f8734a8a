// IP address helpers shared by libopennd (the Nd* helpers), the provider
// kit, providers, tools and tests: comparing
// addresses the way ND does (IP only: port, flow info and scope ignored),
// validating caller-supplied sockaddrs, and writing SOCKET_ADDRESS_LIST
// buffers with the sizing rules of the SPI (§2.5.5). Header-only.
#pragma once

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ndspi.h"

namespace opennd::net {

struct IpAddress {
    sockaddr_storage storage{};
    const sockaddr *sa() const { return reinterpret_cast<const sockaddr *>(&storage); }
    sockaddr *sa() { return reinterpret_cast<sockaddr *>(&storage); }
    int family() const { return storage.ss_family; }
    socklen_t length() const { return family() == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in); }
};

// The length a sockaddr of this family must have; 0 for non-IP families.
inline socklen_t SockaddrLength(int family) {
    return family == AF_INET ? sizeof(sockaddr_in) : family == AF_INET6 ? sizeof(sockaddr_in6) : 0;
}

// True if (sa, len) is a complete IPv4 or IPv6 address.
inline bool IsIpSockaddr(const sockaddr *sa, size_t len) {
    if (!sa || len < sizeof(sa_family_t)) return false;
    socklen_t need = SockaddrLength(sa->sa_family);
    return need != 0 && len >= need;
}

inline bool FromSockaddr(const sockaddr *sa, size_t len, IpAddress *out) {
    if (!IsIpSockaddr(sa, len)) return false;
    *out = IpAddress{};
    std::memcpy(&out->storage, sa, SockaddrLength(sa->sa_family));
    return true;
}

inline bool SameIp(const sockaddr *a, const sockaddr *b) {
    if (a->sa_family != b->sa_family) return false;
    if (a->sa_family == AF_INET)
        return reinterpret_cast<const sockaddr_in *>(a)->sin_addr.s_addr ==
               reinterpret_cast<const sockaddr_in *>(b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return std::memcmp(&reinterpret_cast<const sockaddr_in6 *>(a)->sin6_addr,
                           &reinterpret_cast<const sockaddr_in6 *>(b)->sin6_addr, sizeof(in6_addr)) == 0;
    return false;
}

inline bool IsWildcard(const sockaddr *a) {
    if (a->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in *>(a)->sin_addr.s_addr == INADDR_ANY;
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6 *>(a)->sin6_addr);
    return false;
}

inline bool IsLoopback(const sockaddr *a) {
    if (a->sa_family == AF_INET)
        return (ntohl(reinterpret_cast<const sockaddr_in *>(a)->sin_addr.s_addr) >> 24) == 127;
    if (a->sa_family == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6 *>(a)->sin6_addr);
    return false;
}

inline uint16_t Port(const sockaddr *a) {
    if (a->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in *>(a)->sin_port);
    if (a->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 *>(a)->sin6_port);
    return 0;
}

inline void SetPort(sockaddr *a, uint16_t port) {
    if (a->sa_family == AF_INET) reinterpret_cast<sockaddr_in *>(a)->sin_port = htons(port);
    if (a->sa_family == AF_INET6) reinterpret_cast<sockaddr_in6 *>(a)->sin6_port = htons(port);
}

// "127.0.0.1", "::1", "[fe80::1%2]:7471" style text, for logs and tools.
inline std::string ToString(const sockaddr *a, bool with_port = false) {
    char ip[INET6_ADDRSTRLEN] = "?";
    if (a->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(a)->sin_addr, ip, sizeof ip);
    else if (a->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(a)->sin6_addr, ip, sizeof ip);
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false
    // positive) on `"literal" + std::string` once inlined here.
    const bool bracket = with_port && a->sa_family == AF_INET6;
    std::string s = bracket ? "[" : "";
    s += ip;
    if (a->sa_family == AF_INET6) {
        uint32_t scope = reinterpret_cast<const sockaddr_in6 *>(a)->sin6_scope_id;
        if (scope) {
            s += '%';
            s += std::to_string(scope);
        }
    }
    if (bracket) s += ']';
    if (with_port) {
        s += ':';
        s += std::to_string(Port(a));
    }
    return s;
}

// Parses "1.2.3.4", "::1", "1.2.3.4:80", "[::1]:80" (and "fe80::1%eth0").
inline bool ParseAddress(const std::string &text, IpAddress *out) {
    std::string host = text;
    uint16_t port = 0;
    auto parse_port = [&](const std::string &p) {
        if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
        unsigned long v = std::stoul(p);
        if (v > 65535) return false;
        port = static_cast<uint16_t>(v);
        return true;
    };
    if (!host.empty() && host[0] == '[') {
        size_t close = host.find(']');
        if (close == std::string::npos) return false;
        std::string rest = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!rest.empty() && (rest[0] != ':' || !parse_port(rest.substr(1)))) return false;
    } else if (std::count(host.begin(), host.end(), ':') == 1) {
        size_t colon = host.find(':');
        if (!parse_port(host.substr(colon + 1))) return false;
        host = host.substr(0, colon);
    }
    *out = IpAddress{};
    auto *v4 = reinterpret_cast<sockaddr_in *>(&out->storage);
    auto *v6 = reinterpret_cast<sockaddr_in6 *>(&out->storage);
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
    } else {
        std::string ip = host;
        uint32_t scope = 0;
        size_t pct = host.find('%');
        if (pct != std::string::npos) {
            ip = host.substr(0, pct);
            std::string ifname = host.substr(pct + 1);
            scope = if_nametoindex(ifname.c_str());
            if (!scope && ifname.find_first_not_of("0123456789") == std::string::npos && !ifname.empty())
                scope = static_cast<uint32_t>(std::stoul(ifname));
            if (!scope) return false;
        }
        if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) != 1) return false;
        v6->sin6_family = AF_INET6;
        v6->sin6_scope_id = scope;
    }
    SetPort(out->sa(), port);
    return true;
}

// Every IPv4/IPv6 address of the interfaces that are up, loopback included.
inline std::vector<IpAddress> LocalIpAddresses() {
    std::vector<IpAddress> out;
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (ifaddrs *i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
        IpAddress a;
        if (FromSockaddr(i->ifa_addr, SockaddrLength(i->ifa_addr->sa_family), &a)) {
            SetPort(a.sa(), 0);
            out.push_back(a);
        }
    }
    freeifaddrs(list);
    return out;
}

// True if `a`'s IP is one of `addrs` (ports ignored, as everywhere in ND).
inline bool HasIp(const std::vector<IpAddress> &addrs, const sockaddr *a) {
    return std::any_of(addrs.begin(), addrs.end(), [a](const IpAddress &x) { return SameIp(x.sa(), a); });
}

// Bytes a SOCKET_ADDRESS_LIST holding these addresses needs (§2.5.5).
inline size_t AddressListSize(const std::vector<IpAddress> &addrs) {
    size_t n = offsetof(SOCKET_ADDRESS_LIST, Address) + addrs.size() * sizeof(SOCKET_ADDRESS);
    for (const auto &a : addrs) n += a.length();
    return n;
}

// Writes the list into a caller buffer of *pcb bytes. On a short or null
// buffer: ND_BUFFER_OVERFLOW, *pcb = bytes needed, buffer untouched. On
// success: ND_SUCCESS and *pcb = bytes used.
template <class SizeT>
HRESULT WriteAddressList(const std::vector<IpAddress> &addrs, SOCKET_ADDRESS_LIST *list, SizeT *pcb) {
    size_t need = AddressListSize(addrs);
    if (!list || *pcb < need) {
        *pcb = static_cast<SizeT>(need);
        return ND_BUFFER_OVERFLOW;
    }
    char *storage = reinterpret_cast<char *>(&list->Address[0]) + addrs.size() * sizeof(SOCKET_ADDRESS);
    list->iAddressCount = static_cast<INT>(addrs.size());
    for (size_t i = 0; i < addrs.size(); ++i) {
        std::memcpy(storage, &addrs[i].storage, addrs[i].length());
        list->Address[i].lpSockaddr = reinterpret_cast<LPSOCKADDR>(storage);
        list->Address[i].iSockaddrLength = static_cast<INT>(addrs[i].length());
        storage += addrs[i].length();
    }
    *pcb = static_cast<SizeT>(need);
    return ND_SUCCESS;
}

}  // namespace opennd::net
