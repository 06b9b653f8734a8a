// The memory-region table: every registered region and bound window of one
// adapter, in a shared-memory file that the adapter's connected peers map
// read-only. A peer validates a remote token, range and rights against it
// before it moves a byte with cross-memory attach; the owner validates local
// SGEs against the same table.
//
// Tokens: the low 16 bits index the table, the high 16 bits are random. Free
// slots are handed out in a random order, oldest freed first, and a reused
// slot always gets a random half other than its last: a stale token (after
// Deregister or Invalidate) never names the next registration in its slot,
// and one from further back only by a 1 in 65535 chance. Guessing a live
// token blind takes about 2^31 tries when few regions are registered.
//
// Writers (the owner) serialise on a mutex; each entry is published under a
// seqlock so readers in any process see a consistent entry without locking.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

#include "ndspi.h"
#include "shm_wire.h"

namespace soft {

// True in the shipped provider (checks_on.cpp); false only in the broken
// build the conformance suite tests itself with (tests/soft/checks_off.cpp).
extern const bool kCheckRemoteRights;

struct MrView {
    uint32_t rights = 0;
    uint64_t address = 0;
    uint64_t length = 0;
    uint64_t qp_id = 0;
    // A window addressed by its peer elsewhere than where it lies (a
    // fast-registered one): the bytes of remote address A are at A + delta.
    uint64_t delta = 0;

    bool Covers(uint64_t addr, uint64_t len) const {
        return addr >= address && len <= length && addr - address <= length - len;
    }
};

// The last region a caller's local SGEs were found in, remembered so the
// next check of the same token skips the table's seqlock read: it stays
// good while the table's generation (raised by every Remove) is unchanged.
// One per caller and lock (a queue pair's send side, its receive side).
struct MrMemo {
    uint32_t token = 0;  // 0: nothing remembered
    uint64_t generation = 0;
    MrView view;
};

// Why a remote access is refused (the TCP path names it in its Terminate).
enum class RemoteCheck : uint8_t { Ok, InvalidToken, NotAssociated, Bounds, Rights };

// Read access to a table, local or a peer's.
class MrTableView {
public:
    MrTableView() = default;
    MrTableView(const void *base, size_t size) : base_(base), size_(size) {}
    bool valid() const { return base_ != nullptr; }
    // The entry for `token`, if the token is current.
    bool Lookup(uint32_t token, MrView *out) const;
    // May queue pair `qp_id` reach [address, +length) under `token` with
    // one of the rights `need`? A window only through the QP it is bound to.
    // The one check every remote access goes through (initiator over shared
    // memory, target on the copy path and over TCP). *where (if given, on
    // Ok): the owner's address of the range's first byte, which is `address`
    // except through a window addressed elsewhere (MrView::delta).
    RemoteCheck CheckRemote(uint32_t token, uint64_t address, uint64_t length, uint32_t need, uint64_t qp_id,
                            uint64_t *where = nullptr) const;

private:
    const void *base_ = nullptr;
    size_t size_ = 0;
};

// The owner's table.
class MrTable {
public:
    MrTable();
    ~MrTable();
    MrTable(const MrTable &) = delete;
    MrTable &operator=(const MrTable &) = delete;
    bool ok() const { return base_ != nullptr; }

    // A new token for this entry; 0 if the table is full.
    uint32_t Add(const MrView &entry);
    // Changes a live entry (window rebinding keeps its slot but not its token).
    void Remove(uint32_t token);
    bool Lookup(uint32_t token, MrView *out) const { return view_.Lookup(token, out); }
    RemoteCheck CheckRemote(uint32_t token, uint64_t address, uint64_t length, uint32_t need, uint64_t qp_id,
                            uint64_t *where = nullptr) const {
        return view_.CheckRemote(token, address, length, need, qp_id, where);
    }
    // Local SGEs: each non-empty one inside a current region (not a window)
    // that grants one of `need_rights` (0: any). *total: their byte count.
    // `memo` (optional): where the region last found is remembered; a
    // single SGE in it is then checked here, inline, without the table.
    bool LocalSgesValid(const ND2_SGE *sge, ULONG nsge, uint32_t need_rights, uint64_t *total = nullptr,
                        MrMemo *memo = nullptr) const {
        // The data path's common case, inline: one SGE in the remembered region.
        if (nsge == 1 && memo && memo->token == sge->MemoryRegionToken && memo->token != 0 &&
            memo->generation == generation_.load(std::memory_order_acquire) && sge->BufferLength != 0) {
            const MrView &v = memo->view;
            if (!v.Covers(reinterpret_cast<uint64_t>(sge->Buffer), sge->BufferLength) ||
                (need_rights && !(v.rights & need_rights)))
                return false;
            if (total) *total = sge->BufferLength;
            return true;  // (a window is never remembered)
        }
        return LocalSgesValidSlow(sge, nsge, need_rights, total, memo);
    }
    // The table file's descriptor: a peer with ptrace access to us takes a
    // copy of it (pidfd_getfd); sealed, it can only map it read-only.
    int fd() const { return fd_; }
    // A read-only descriptor of the table file (caller closes it).
    int ReadOnlyFd() const;

private:
    bool LocalSgesValidSlow(const ND2_SGE *sge, ULONG nsge, uint32_t need_rights, uint64_t *total,
                            MrMemo *memo) const;
    void Write(uint32_t slot, uint32_t token, const MrView &e);

    int fd_ = -1;
    void *base_ = nullptr;
    MrTableView view_;
    std::mutex mu_;
    std::deque<uint32_t> free_;    // free slots, oldest first; requires mu_
    std::vector<uint16_t> tags_;   // each slot's last random half; requires mu_
    // Raised after every Remove: an MrMemo from before it is not used again.
    std::atomic<uint64_t> generation_{1};
};

}  // namespace soft
