#include "mr_table.h"

#include "opennd/log.h"
#include "sealed_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <ctime>
#include <algorithm>

namespace soft {
namespace {

MrEntry *Entries(const void *base) {
    return reinterpret_cast<MrEntry *>(static_cast<char *>(const_cast<void *>(base)) + sizeof(MrTableHeader));
}

// Field loads are acquire so the closing version check cannot move above
// them (a seqlock without a separate fence, which ThreadSanitizer also follows).
template <class T>
T Load(const T &v) {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}
template <class T>
void Store(T &v, T x) {
    __atomic_store_n(&v, x, __ATOMIC_RELAXED);
}

uint16_t RandomBits() {
    uint16_t r = 0;
    while (r == 0)
        if (getrandom(&r, sizeof r, 0) != sizeof r) r = 0;
    return r;
}

}  // namespace

bool MrTableView::Lookup(uint32_t token, MrView *out) const {
    if (!base_ || token == 0) return false;
    uint32_t slot = token & (kMrTableEntries - 1);
    if (sizeof(MrTableHeader) + (size_t(slot) + 1) * sizeof(MrEntry) > size_) return false;  // (never, at kMrTableBytes)
    const MrEntry &e = Entries(base_)[slot];
    for (int attempt = 0; attempt < 1000; ++attempt) {
        uint32_t v1 = e.version.load(std::memory_order_acquire);
        if (v1 & 1) continue;
        uint32_t t = Load(e.token);
        MrView view{Load(e.rights), Load(e.address), Load(e.length), Load(e.qp_id), Load(e.delta)};
        if (e.version.load(std::memory_order_acquire) != v1) continue;
        if (t != token) return false;
        *out = view;
        return true;
    }
    return false;  // an owner stuck mid-update: treat as invalid
}

MrTable::MrTable() {
    std::string error;
    fd_ = CreateSealedMemfd("opennd-mr-table", kMrTableBytes, &error, /*final=*/false);
    if (fd_ < 0) return;
    void *p = mmap(nullptr, kMrTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return;
    // From now on this mapping is the table's only writer: peers get a
    // read-only descriptor and must not be able to make it writable (they
    // would forge entries for our memory).
    if (!SealForReaders(fd_, &error)) {
        OPENND_LOG(Warn, "ndsoft: memory-region table: %s", error.c_str());
        munmap(p, kMrTableBytes);
        return;
    }
    base_ = p;
    auto *h = static_cast<MrTableHeader *>(base_);
    h->magic = kMrTableMagic;
    h->version = kWireVersion;
    h->entry_size = sizeof(MrEntry);
    h->entries = kMrTableEntries;
    h->pid = static_cast<uint32_t>(getpid());
    view_ = MrTableView(base_, kMrTableBytes);
    // Slots in a random order (slot 0 unused): a token's slot half is no
    // easier to guess than its random half while few regions are live.
    std::vector<uint32_t> slots;
    slots.reserve(kMrTableEntries - 1);
    for (uint32_t s = 1; s < kMrTableEntries; ++s) slots.push_back(s);
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = static_cast<uint64_t>(getpid()) ^ uint64_t(time(nullptr));
    std::shuffle(slots.begin(), slots.end(), std::mt19937_64(seed));
    free_.assign(slots.begin(), slots.end());
    tags_.assign(kMrTableEntries, 0);
}

MrTable::~MrTable() {
    if (base_) munmap(base_, kMrTableBytes);
    if (fd_ >= 0) close(fd_);
}

void MrTable::Write(uint32_t slot, uint32_t token, const MrView &e) {
    MrEntry &m = Entries(base_)[slot];
    m.version.fetch_add(1, std::memory_order_acq_rel);  // odd: changing (later stores stay after it)
    Store(m.token, token);
    Store(m.rights, e.rights);
    Store(m.address, e.address);
    Store(m.length, e.length);
    Store(m.qp_id, e.qp_id);
    Store(m.delta, e.delta);
    m.version.fetch_add(1, std::memory_order_release);  // even: published
}

uint32_t MrTable::Add(const MrView &entry) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!base_ || free_.empty()) return 0;
    // FIFO: a freed slot comes back as late as possible, and with a tag
    // other than its last one, so a stale token never names the next
    // registration in its slot.
    uint32_t slot = free_.front();
    free_.pop_front();
    uint16_t tag;
    do tag = RandomBits();
    while (tag == tags_[slot]);
    tags_[slot] = tag;
    uint32_t token = (uint32_t(tag) << 16) | slot;
    Write(slot, token, entry);
    return token;
}

void MrTable::Remove(uint32_t token) {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t slot = token & (kMrTableEntries - 1);
    if (!base_ || slot == 0 || Entries(base_)[slot].token != token) return;
    Write(slot, 0, MrView{});
    generation_.fetch_add(1, std::memory_order_acq_rel);  // memos of it are stale from here on
    free_.push_back(slot);
}

int MrTable::ReadOnlyFd() const {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd_);
    return open(path, O_RDONLY | O_CLOEXEC);
}

RemoteCheck MrTableView::CheckRemote(uint32_t token, uint64_t address, uint64_t length, uint32_t need,
                                     uint64_t qp_id, uint64_t *where) const {
    if (!kCheckRemoteRights) need = 0;  // the deliberately broken build (tests/soft/checks_off.cpp)
    MrView v;
    if (!Lookup(token, &v)) return RemoteCheck::InvalidToken;
    if ((v.rights & kIsWindow) && v.qp_id != qp_id) return RemoteCheck::NotAssociated;
    if (!v.Covers(address, length)) return RemoteCheck::Bounds;
    if (need && !(v.rights & need)) return RemoteCheck::Rights;
    if (where) *where = address + v.delta;  // (in the region the window was bound in: checked at Bind)
    return RemoteCheck::Ok;
}

bool MrTable::LocalSgesValidSlow(const ND2_SGE *sge, ULONG nsge, uint32_t need_rights, uint64_t *total,
                                 MrMemo *memo) const {
    uint64_t sum = 0;
    for (ULONG i = 0; i < nsge; ++i) {
        sum += sge[i].BufferLength;
        if (sge[i].BufferLength == 0) continue;
        const uint32_t token = sge[i].MemoryRegionToken;
        // Read before the entry: a Remove that the lookup may miss raises
        // it after, and the memo taken from that lookup is then never used.
        const uint64_t generation = generation_.load(std::memory_order_acquire);
        MrView v;
        if (!Lookup(token, &v) || (v.rights & kIsWindow)) return false;
        if (memo) *memo = MrMemo{token, generation, v};  // (used only by the inline one-SGE case)
        if (!v.Covers(reinterpret_cast<uint64_t>(sge[i].Buffer), sge[i].BufferLength)) return false;
        if (need_rights && !(v.rights & need_rights)) return false;
    }
    if (total) *total = sum;
    return true;
}

}  // namespace soft
