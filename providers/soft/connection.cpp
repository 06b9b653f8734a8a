#include "connection.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace soft {

Connection::~Connection() {
    if (cm_fd >= 0) close(cm_fd);
    if (peer_mr_map) munmap(peer_mr_map, kMrTableBytes);
    if (peer_mr_fd >= 0) close(peer_mr_fd);
    if (peer_wake_fd >= 0) close(peer_wake_fd);
}

bool Connection::SetPeer(pid_t pid, uint64_t qp_id, int wake_fd, int mr_fd, std::string *error) {
    peer_pid = pid;
    peer_qp_id = qp_id;
    peer_wake_fd = wake_fd;
    peer_mr_fd = mr_fd;
    struct stat st;
    if (mr_fd < 0 || fstat(mr_fd, &st) != 0 || static_cast<size_t>(st.st_size) != kMrTableBytes) {
        *error = "the peer's memory-region table is missing or has the wrong size";
        return false;
    }
    void *p = mmap(nullptr, kMrTableBytes, PROT_READ, MAP_SHARED, mr_fd, 0);
    if (p == MAP_FAILED) {
        *error = "cannot map the peer's memory-region table";
        return false;
    }
    auto *h = static_cast<const MrTableHeader *>(p);
    if (h->magic != kMrTableMagic || h->version != kWireVersion || h->entry_size != sizeof(MrEntry) ||
        h->entries != kMrTableEntries) {
        munmap(p, kMrTableBytes);
        *error = "the peer's memory-region table has an unknown layout";
        return false;
    }
    peer_mr_map = p;
    peer_mrs = MrTableView(p, kMrTableBytes);
    return true;
}

void Connection::WakePeer() const {
    if (peer_wake_fd < 0 || !channel) return;
    if (channel->header()->wake_wanted[1 - side].load(std::memory_order_seq_cst)) {
        uint64_t one = 1;
        ssize_t n = write(peer_wake_fd, &one, sizeof one);
        (void)n;
    }
}

}  // namespace soft
