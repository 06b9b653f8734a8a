// The tunables table (opennd/params.h). A new environment variable is added
// here, with its default and help, or it cannot be read.
#include "opennd/params.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "opennd/log.h"

namespace opennd {
namespace {

const Param kParams[] = {
    // libopennd
    {"OPENND_LOG", "2", "libopennd",
     "How much OpenND writes to stderr: 0 nothing, 1 errors, 2 warnings, 3 info, 4 debug."},
    {"OPENND_CATALOG", "", "libopennd",
     "The provider catalog directory. Unset: the catalog next to the libopennd in use, else "
     "/etc/opennd/providers.d."},
    {"OPENND_WAIT_SPIN_US", "0", "libopennd",
     "Microseconds a wait on a completion port spins before it sleeps."},
    // kit
    {"OPENND_NO_MEMBARRIER", "", "kit",
     "1: CQ polls take a lock instead of relying on membarrier(2) (for kernels or sandboxes without it)."},
    // ndsoft
    {"OPENND_SOFT_TRANSPORT", "", "ndsoft",
     "tcp: every connection uses iWARP over TCP, also between processes of one host. Unset: shared memory "
     "on one host, TCP to others."},
    {"OPENND_SOFT_CMA", "1", "ndsoft",
     "0: no cross-memory attach; large transfers and RDMA Read/Write are copied through the rings."},
    {"OPENND_SOFT_PUSH", "1", "ndsoft",
     "0: a receiver pulls every large Send alone instead of asking the polling sender to push half of it."},
    {"OPENND_SOFT_PUSH_DELAY_US", "0", "ndsoft",
     "Testing: a sender that takes a push request waits this long before it copies."},
    {"OPENND_SOFT_SPIN_US", "0", "ndsoft",
     "Microseconds the progress thread spins for a message while a Notify waits, before it sleeps."},
    {"OPENND_SOFT_ARMED_POLL_MS", "200", "ndsoft",
     "Milliseconds between the progress thread's looks at the rings while a Notify waits."},
    {"OPENND_SOFT_PARK_MS", "1", "ndsoft",
     "Longest time a TCP stream is left to the polling application before the progress thread reads it."},
    {"OPENND_SOFT_TCP_TIMEOUT_MS", "15000", "ndsoft",
     "Milliseconds a TCP connection setup (connect and MPA exchange) may take (100 to 3600000)."},
    {"OPENND_SOFT_MPA_HOLD_MS", "", "ndsoft",
     "Milliseconds a TCP initiator holds its first message for the responder's RTR (0 to 10000). Unset: 0 "
     "on one host, 300 to another."},
    {"OPENND_SOFT_MPA_CRC", "0", "ndsoft",
     "1: ask for MPA CRCs as initiator and insist on them as responder (siw and OpenND ask for none)."},
    {"OPENND_SOFT_ACCEPT_TIMEOUT_MS", "30000", "ndsoft",
     "Milliseconds an Accept waits for the initiator to complete before it fails ND_IO_TIMEOUT."},
    {"OPENND_SOFT_SRQ_SEND_TIMEOUT_MS", "60000", "ndsoft",
     "Milliseconds a Send to a peer whose QP uses an SRQ may wait for a receive (3000 for other peers)."},
    {"OPENND_SOFT_READ_ANSWER_TIMEOUT_MS", "15000", "ndsoft",
     "Milliseconds a Read through the rings waits for the peer's first answer before it fails."},
    {"OPENND_VERBS_RNR_RETRY", "6", "ndverbs",
     "How often a peer's Send that finds no receive posted here is retried (InfiniBand and RoCE; 40 ms "
     "apart) before it fails ND_IO_TIMEOUT. 0: at once, as Windows providers do; 7: for ever."},
    {"OPENND_VERBS_WINDOWS", "0", "ndverbs",
     "1: memory windows as the device's type 2 windows where it has them (experimental); 0: a registration "
     "per binding on every device."},
    {"OPENND_VERBS_MAX_TRANSFER", "", "ndverbs",
     "Bytes an adapter declares as MaxTransferLength (one request's data). Unset: the port's max_msg_sz, "
     "but at least 32 MiB on rxe, which carries messages that long (measured)."},
    {"OPENND_VERBS_CONNECT_MS", "5000", "ndverbs",
     "How long a Connect waits for the peer's answer before it completes ND_IO_TIMEOUT (rdma_cm's own "
     "retries to a silent address take minutes)."},
    {"OPENND_VERBS_LINK_DOWN_MS", "3000", "ndverbs",
     "How long a port may stay down (IBV_EVENT_PORT_ERR) before every connection on it is over: its "
     "NotifyDisconnect completes and what is posted completes ND_CANCELED. A link back up sooner keeps them."},
    {"OPENND_SOFT_MAX_QUEUED", "", "ndsoft",
     "Lowers the bound on connection requests a listener holds. Unset: a quarter of the descriptor limit, "
     "256 to 4096."},
    {"OPENND_SOFT_MAX_HANDSHAKES", "256", "ndsoft",
     "Lowers the bound on accepted connections that have not sent their request yet, per listener."},
};

const Param *Find(const char *name) {
    for (const Param &p : kParams)
        if (std::strcmp(p.name, name) == 0) return &p;
    return nullptr;
}

}  // namespace

const Param *Params(size_t *count) {
    if (count) *count = std::size(kParams);
    return kParams;
}

const char *ParamText(const char *name) {
    if (!name || !Find(name)) {
        OPENND_LOG(Error, "%s is not in OpenND's table of tunables (src/core/params.cpp): ignored",
                   name ? name : "(null)");
        return nullptr;
    }
    const char *v = secure_getenv(name);
    return v && *v ? v : nullptr;
}

long ParamLong(const char *name, long otherwise) {
    const char *s = ParamText(name);
    if (!s) return otherwise;
    char *end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' ? v : otherwise;
}

}  // namespace opennd
