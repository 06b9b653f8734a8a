// The TCP side of connection setup for peers reached over iWARP: the
// connection's socket and its MPA handshake (iwarp::Initiator on the active
// side, iwarp::Responder on the passive side). Owned by the Connection; the
// connector drives the handshake, then the queue pair's TcpPath takes over
// the stream (the socket stays owned here).
#pragma once

#include <atomic>

#include <sys/socket.h>

#include <memory>
#include <vector>

#include "iwarp/handshake.h"
#include "ndspi.h"
#include "opennd/kit/address.h"

namespace soft {

struct TcpLink {
    int fd = -1;
    bool connected = false;                  // the TCP connection is up
    // Past the handshake, the socket closes with a reset: ND has flushed
    // whatever was not confirmed, and a TIME_WAIT would keep the ND port
    // (a listener's, a connector's) from being bound again for a minute.
    bool abortive_close = false;
    // Disconnect shut the stream down in order (FIN after the last byte):
    // the close stays in order while the peer has not acknowledged them all.
    std::atomic<bool> ordered_end{false};
    // Initiator: how long after the MPA reply nothing may be sent (Linux 6.1
    // siw as a server misses data that arrives within ~0.3 s of its reply).
    uint32_t hold_ms = 0;
    std::unique_ptr<iwarp::Initiator> initiator;
    std::unique_ptr<iwarp::Responder> responder;
    std::vector<uint8_t> out;                // handshake bytes not yet sent
    std::vector<uint8_t> after;              // bytes read past the MPA reply: FPDUs

    explicit TcpLink(int f) : fd(f) {}
    TcpLink(const TcpLink &) = delete;
    TcpLink &operator=(const TcpLink &) = delete;
    ~TcpLink();

    // Sends what `out` holds; false if the connection broke.
    bool Flush();
    // Reads what is there into *in; false on EOF or error.
    bool ReadSome(std::vector<uint8_t> *in);
};

// True if connections to `dest` must go over TCP: OPENND_SOFT_TRANSPORT=tcp,
// or not an address of this host.
bool UseTcp(bool dest_is_local);

// Starts a non-blocking connect on `fd` (already bound). ND_SUCCESS or
// ND_PENDING (in progress); else the ND status of the failure.
HRESULT TcpConnect(int fd, const opennd::kit::IpAddress &dest);
// The outcome of a connect that was in progress: ND_SUCCESS, ND_PENDING, or why it failed.
HRESULT TcpConnectResult(int fd);
// A connector's port again, after its attempt failed: the attempt's socket
// may still be winding down; it was marked EndsSoon, so the new
// reservation passes over it (ReservePort), and over nothing live.
// `shared`: a reservation by IOpenNdConnectorExt::BindShared.
int RebindPort(const opennd::kit::IpAddress &local, bool shared);
// Marks a socket whose connection is ending (SO_REUSEADDR): the TIME_WAIT
// it may leave does not hold its port from the next Bind. Live sockets never
// have it, so a Bind still finds their port taken.
void EndsSoon(int fd);
// How long a peer may leave our data unacknowledged, or a connection idle
// without answering keepalives, before the connection counts as broken
// (network cut, host gone): OPENND_SOFT_TCP_TIMEOUT_MS, default 15000.
uint32_t TcpTimeoutMs();
// The initiator's hold after the MPA reply: OPENND_SOFT_MPA_HOLD_MS, default
// 300 ms for a peer on another host (it may be Linux siw), 0 on this host.
uint32_t MpaHoldMs(bool dest_is_local);
// Prepares an established socket: non-blocking, TCP_NODELAY, and the
// timeouts above (TCP_USER_TIMEOUT, keepalive), so nothing waits forever.
void TcpTune(int fd);

// The MPA parameters for an ND connection: IRD/ORD are ND's read limits.
// (With an outbound limit of 0 there are no fence Reads: Sends and Writes
// then complete when handed to TCP, as on iWARP hardware.)
// The MPA settings every connection starts from (OPENND_SOFT_MPA_CRC), and
// with a connector's read limits as IRD/ORD.
iwarp::MpaConfig BaseMpaConfig();
iwarp::MpaConfig MpaConfigFor(uint32_t inbound_limit, uint32_t outbound_limit);

}  // namespace soft
