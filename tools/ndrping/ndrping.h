// ndrping: rdma-core's rping over NetworkDirect. Speaks rping's protocol
// (rping_protocol.h) through the public ND API, so it pairs with rping on a
// verbs device (e.g. Linux siw) as well as with itself.
#pragma once

#include <cstdint>
#include <string>

#include "opennd/ip_address.h"

namespace ndrping {

struct Options {
    bool server = false;
    bool client = false;
    std::string address;  // server: where to listen; client: the server
    std::string source;   // client: local address (default: by route)
    uint16_t port = 7174;
    uint32_t count = 0;   // 0: until interrupted (client) / the client leaves (server)
    uint32_t size = 64;
    bool size_given = false;
    int verbose = 0;      // -v: print the ping data, as rping does
    bool debug = false;   // -d
    uint64_t timeout_ms = 30000;
    uint32_t connect_pause_ms = 0;  // client: between Connect and CompleteConnect
    bool bulk = false;    // --bulk: the bulk exchange (bulk_protocol.h) instead of rping's
};

// All return the process exit status; failures throw Error.
int RunClient(const Options &o);
int RunServer(const Options &o);
int RunBulk(const Options &o);  // either role

// A host name or numeric address; throws Error naming `what`.
opennd::net::IpAddress Resolve(const std::string &text, const char *what);
// The client's destination (-a, -p) and local address (-I, or by route).
void ClientAddresses(const Options &o, opennd::net::IpAddress *dest, opennd::net::IpAddress *local);

}  // namespace ndrping
