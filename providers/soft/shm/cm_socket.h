// Connection-management transport for peers on the same host: an abstract
// Unix SOCK_SEQPACKET socket per listening address ("opennd-cm/IP/PORT"),
// CM messages (wire.h) with file descriptors passed as SCM_RIGHTS, and ND
// port reservation (a bound TCP socket holds the address and port, so ND and
// TCP agree on what is in use; port 0 picks from 49152-65535).
#pragma once

#include <sys/types.h>

#include <span>
#include <string>

#include "ndspi.h"
#include "opennd/kit/address.h"
#include "shm_wire.h"

namespace soft {

// Reserves `want` (port 0: an ephemeral ND port). On success returns the
// socket and sets *bound. Errors: ND_SHARING_VIOLATION (in use),
// ND_TOO_MANY_ADDRESSES (no free port), ND_INVALID_ADDRESS (not local).
// `shared` (IOpenNdConnectorExt::BindShared): the socket has SO_REUSEPORT,
// and no other flag, so every shared reservation of the address by this
// user gets it too, and nothing else does (a plain or SO_REUSEADDR bind
// conflicts with it; port 0 finds a port no one holds).
int ReservePort(const opennd::kit::IpAddress &want, opennd::kit::IpAddress *bound, HRESULT *hr,
                bool shared = false);

// A listening CM socket for a bound address (wildcard allowed).
int CmListen(const opennd::kit::IpAddress &bound, int backlog, HRESULT *hr);
// Connects to the listener for `dest`: its exact address, else a wildcard
// listener of the same port. -1 with ND_CONNECTION_REFUSED if none.
int CmConnect(const opennd::kit::IpAddress &dest, HRESULT *hr);

// Sends one message with up to 3 descriptors. False if the peer is gone.
bool CmSend(int fd, const CmMessage &m, const int *fds = nullptr, int nfds = 0);
// Receives one message. 1: a valid message (fds filled, *nfds set; the
// caller owns them); 0: the peer closed; -1: error or a malformed message
// (any descriptors that came with it are closed).
int CmRecv(int fd, CmMessage *m, int *fds, int *nfds);
// The process at the other end of a CM socket, as the kernel knows it
// (SO_PEERCRED, in our pid namespace), or -1. Never the pid a message
// claims: a peer naming another process (or us) would have our cross-memory
// reads and writes aimed at that process.
pid_t CmPeerPid(int fd);
// The peer's uid when it connected (SO_PEERCRED), or (uid_t)-1.
uid_t CmPeerUid(int fd);

CmMessage NewCmMessage(CmType type);
// Copies an application's private data into a CM message; false (nothing
// copied) if the buffer is not readable for `len` bytes (R116).
bool CopyPrivateData(CmMessage *m, const void *data, ULONG len);
// Private data that came over the wire (MPA), truncated to the message's room.
void SetPrivateData(CmMessage *m, std::span<const uint8_t> data);

}  // namespace soft
