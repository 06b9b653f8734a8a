#include "connection.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "opennd/log.h"
#include "progress_engine.h"
#include "sealed_memfd.h"
#include "soft_limits.h"
#include "opennd/params.h"

namespace soft {
namespace {
const volatile uint64_t g_probe_word = kProbeMagic;
}

uint64_t ProbeAddress() { return reinterpret_cast<uint64_t>(&g_probe_word); }

bool CmaGrantsNothing(uid_t peer_uid) {
    const uid_t me = geteuid();
    if (peer_uid != me) return false;
    if (me == 0) return true;
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3]{};
    if (syscall(SYS_capget, &header, caps) != 0) return false;  // not known: assume we hold it
    return (caps[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32))) == 0;
}

bool ProbeCma(pid_t pid, uid_t uid, uint64_t address) {
    const char *off = opennd::ParamText("OPENND_SOFT_CMA");  // read per connection: tests switch it
    if ((off && off[0] == '0') || address == 0) return false;
    if (!CmaGrantsNothing(uid)) {
        OPENND_LOG(Debug, "ndsoft: no cross-memory attach to process %d (uid %u; we run as uid %u%s): its data goes "
                          "through the rings", static_cast<int>(pid), static_cast<unsigned>(uid),
                          static_cast<unsigned>(geteuid()), geteuid() == uid ? " with CAP_SYS_PTRACE" : "");
        return false;
    }
    uint64_t word = 0;
    iovec local{&word, sizeof word}, remote{reinterpret_cast<void *>(address), sizeof word};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof word && word == kProbeMagic;
}

void Connection::SetTimeouts(bool peer_srq) {
    peer_uses_srq = peer_srq;
    send_timeout_ms = peer_srq ? EnvMs("OPENND_SOFT_SRQ_SEND_TIMEOUT_MS", kSrqSendTimeoutMs) : kSendTimeoutMs;
    read_answer_timeout_ms = EnvMs("OPENND_SOFT_READ_ANSWER_TIMEOUT_MS", kReadAnswerTimeoutMs);
}

int FetchPeerFd(pid_t pid, int fd) {
    if (fd < 0) return -1;
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) return -1;
    const int got = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    close(pidfd);
    return got;  // close-on-exec, as pidfd_getfd sets it
}

PeerEngine::~PeerEngine() {
    if (mr_map) munmap(mr_map, kMrTableBytes);
}

std::shared_ptr<PeerEngine> PeerEngines::Get(int mr_fd, std::string *error) {
    if (mr_fd < 0) return std::make_shared<PeerEngine>();
    struct stat st;
    if (!SealedAtSize(mr_fd, kMrTableBytes, "memory-region table", error) || fstat(mr_fd, &st) != 0) {
        close(mr_fd);
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(st.st_dev, st.st_ino);
    if (auto known = known_[key].lock()) {
        close(mr_fd);
        return known;
    }
    auto peer = std::make_shared<PeerEngine>();
    void *p = mmap(nullptr, kMrTableBytes, PROT_READ, MAP_SHARED, mr_fd, 0);
    close(mr_fd);  // the mapping stays
    if (p == MAP_FAILED) {
        *error = "cannot map the peer's memory-region table";
        return nullptr;
    }
    auto *h = static_cast<const MrTableHeader *>(p);
    if (h->magic != kMrTableMagic || h->version != kWireVersion || h->entry_size != sizeof(MrEntry) ||
        h->entries != kMrTableEntries) {
        munmap(p, kMrTableBytes);
        *error = "the peer's memory-region table has an unknown layout";
        return nullptr;
    }
    peer->mr_map = p;
    peer->mrs = MrTableView(p, kMrTableBytes);
    for (auto it = known_.begin(); it != known_.end();)  // forget peers that are gone
        it = it->second.expired() ? known_.erase(it) : std::next(it);
    known_[key] = peer;
    return peer;
}

Connection::~Connection() {
    if (cm_fd >= 0) close(cm_fd);
    if (wake_out >= 0) close(wake_out);
    if (wake_in >= 0) {
        if (wake_engine) wake_engine->UnwatchPeerWake(wake_in);  // the peer may hold the file open
        close(wake_in);
    }
}

bool Connection::SetPeer(PeerEngines &engines, pid_t pid, uint64_t qp_id, int mr_fd, std::string *error) {
    peer_pid = pid;
    peer_qp_id = qp_id;
    peer = engines.Get(mr_fd, error);
    return peer != nullptr;
}

int Connection::MakeWake() {
    const int event = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;  // every write is an edge; nobody ever reads the count
    if (event < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, event, &ev) != 0) {
        if (event >= 0) close(event);
        if (ep >= 0) close(ep);
        return -1;
    }
    if (wake_out >= 0) close(wake_out);  // an Accept tried again
    wake_out = event;
    return ep;
}

bool Connection::AdoptPeerWake(std::shared_ptr<Engine> engine, int fd, std::string *error) {
    wake_in = fd;
    char path[64], target[64] = {};
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0 || std::strcmp(target, "anon_inode:[eventpoll]") != 0) {
        *error = "the peer's wake-up descriptor is not an epoll instance";
        return false;
    }
    if (!engine->WatchPeerWake(fd)) {
        *error = std::string("cannot watch the peer's wake-up descriptor: ") + std::strerror(errno);
        return false;
    }
    wake_engine = std::move(engine);
    return true;
}

void Connection::WakePeerNow() const {
    // Our eventfd, non-blocking, its count only ever raised by us by one: the
    // write cannot block. The peer's edge-triggered watch of the epoll
    // instance around it sees every write.
    const uint64_t one = 1;
    ssize_t n = write(wake_out, &one, sizeof one);
    (void)n;
}

}  // namespace soft
