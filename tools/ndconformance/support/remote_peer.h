// ndconformance support: peers on another machine. The suite's peer is
// normally a child process on this host (support/peer.h). To run the
// two-sided cases against a different provider on another host (ndsoft
// here, ndverbs on an RDMA device there), that host runs
//
//   ndconformance --provider NAME --serve-peers PORT
//
// which starts one peer process per connection to PORT, the connection
// being its control channel, and the suite here runs with
// --peer-host HOST:PORT --peer-address ADDR (the ND address the peers use
// there). A connection's first line says what it wants:
//
//   "peer\n"          a fresh peer; the answer is "pid N\n", then the
//                     connection is that peer's control channel;
//   "peer isolated\n" the same, in a user namespace of its own (no
//                     capability over the server's other processes);
//   "signal N S\n"    signal S to peer N (one of this server's); "ok\n" or
//                     "err\n" (Peer::Kill and Peer::Signal use it).
//
// For test networks only: anyone who reaches PORT can start peers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ndc {

// Serves peers on `port` (every address, IPv4 and IPv6) until killed;
// each peer runs `peer_args` (this binary's --peer command line) with its
// control channel added. Returns only on a setup failure (exit status).
int ServePeers(uint16_t port, const std::vector<std::string> &peer_args);

// The test side. "HOST:PORT" or "[V6]:PORT"; "" or why not.
std::string SetPeerHost(const std::string &host_port);
bool PeerHostSet();
// A connection to the peer server that asked for `request` and read its
// one-line answer; -1 (and *why) on failure. The descriptor stays open
// (for "peer", it is the new peer's control channel).
int AskPeerHost(const std::string &request, std::string *answer, std::string *why);

}  // namespace ndc
