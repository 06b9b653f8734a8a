// Logical address mappings (NdkBuildLAM, NdkReleaseLAM) and the privileged
// token (NdkGetPrivilegedMemoryRegionToken), in user space.
//
// In the kernel a logical address is a bus address of a locked page. Here
// it is the page's virtual address in this process (an MDL describes this
// process's memory: opennd/ndktypes.h). NdkBuildLAM registers the MDL's
// whole pages with the provider (one ND2 memory region, local access only,
// registered and pinned before the call returns) and lists their addresses;
// an SGE that carries the adapter's privileged token holds such an
// address, and this layer gives the provider the region's own local token
// in its place. The privileged token names no region of the provider (it
// is a random value the provider never sees), so it grants no remote access.
//
// A fast-register MR's token (a window the peer addresses, qp.cpp) is a
// local token too, as NDKPI's are: an SGE that carries one holds an address
// in the range the consumer fast-registered it at, and gets the mapping's
// token and the buffer's own address. Its entry lives from the fast
// registration to its invalidation here (NdkInvalidate, a Read with
// RDMA_READ_LOCAL_INVALIDATE, the MR's close); a peer's Send with
// Invalidate is seen by the provider, which refuses the token from then on
// only for the peer.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include "ndkpi.h"
#include "ndspi.h"
#include "translate.h"

namespace opennd::ndk {

class Lams {
public:
    Lams(IND2Adapter *nd, HANDLE file);
    Lams(const Lams &) = delete;
    Lams &operator=(const Lams &) = delete;
    ~Lams() { ReleaseAll(); }
    // Deregisters every mapping still built (the adapter's close).
    void ReleaseAll();

    UINT32 privileged_token() const { return token_; }
    // NdkBuildLAM, synchronous: STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL with
    // *size the bytes the mapping needs, or the registration's failure.
    NTSTATUS Build(MDL *mdl, SIZE_T length, NDK_LOGICAL_ADDRESS_MAPPING *lam, ULONG *size, ULONG *fbo);
    void Release(NDK_LOGICAL_ADDRESS_MAPPING *lam);

    // Must a post's SGE array be translated: does it carry the privileged
    // token, or is a fast-register MR live? (The data path's one test;
    // nothing is locked.)
    bool Privileged(const NDK_SGE *sge, ULONG n) const {
        if (fast_live_.load(std::memory_order_relaxed) != 0) return true;
        for (ULONG i = 0; i < n; ++i)
            if (sge[i].MemoryRegionToken == token_) return true;
        return false;
    }
    // out[i] = sge[i], except that a privileged SGE gets the token of the
    // mapping holding all its bytes, and one with a fast-register MR's token
    // that mapping's token and the buffer's address. False if one lies
    // outside every mapping or its fast registration, or the request writes
    // into (`writes`) a fast registration without local write.
    bool Translate(const NDK_SGE *sge, ULONG n, ND2_SGE *out, bool writes = false) const;

    // A fast registration of `window`: `token` names [at, +length) of the
    // consumer's addresses, whose bytes are at `buffer` in the mapping's
    // region (its token `region_token`). `owner`: the MR, whose earlier
    // entry this replaces. The entry holds a reference on the window.
    void AddFast(const void *owner, IND2MemoryWindow *window, UINT32 token, uint64_t at, uint64_t length,
                 uintptr_t buffer, UINT32 region_token, bool local_write);
    // Drops `owner`'s entry, if it has one.
    void RemoveFast(const void *owner);
    // Drops the entry of `token` and hands over its window reference; null
    // if `token` is no fast registration's.
    IND2MemoryWindow *TakeFast(UINT32 token);
    // The region of a mapping holding all of [at, to), with a reference the
    // caller releases; null if none does.
    IND2MemoryRegion *Holding(uintptr_t at, uintptr_t to) const;

private:
    struct Lam {
        uint64_t id;  // the mapping's AdapterContext
        uintptr_t end;
        IND2MemoryRegion *mr;
        UINT32 token;
    };
    IND2Adapter *const nd_;
    const HANDLE file_;
    const UINT32 token_;
    mutable std::shared_mutex mu_;
    // By first page's address; mappings may overlap (two buffers in one
    // page, or one buffer mapped twice).
    std::multimap<uintptr_t, Lam> lams_;
    std::map<uint64_t, uintptr_t> starts_;  // id -> first page
    // The mapping holding all of [at, to), or null (mu_ held, either way).
    const Lam *FindLocked(uintptr_t at, uintptr_t to) const;
    // Removes `token`'s fast entry (present) and returns its window reference.
    IND2MemoryWindow *EraseFastLocked(UINT32 token);
    uint64_t next_id_ = 1;
    uintptr_t widest_ = 0;  // the longest mapping's bytes: how far back Translate looks
    struct Fast {
        const void *owner;
        IND2MemoryWindow *window;
        uint64_t at, length;
        uintptr_t buffer;
        UINT32 region_token;
        bool local_write;
    };
    std::unordered_map<UINT32, Fast> fast_;           // by token (mu_)
    std::unordered_map<const void *, UINT32> fast_of_;  // owner -> its token (mu_)
    std::atomic<size_t> fast_live_{0};                 // fast_.size()
};

// Calls `post` with the SGE array as ND2 takes it: passed through, unless
// an SGE carries the privileged token or a fast-register MR's (then
// translated; one outside every mapping or its registration fails the post,
// STATUS_ACCESS_VIOLATION, with no completion). `writes`: the request
// writes into its local buffers (Receive, Read).
template <class Post>
NTSTATUS PostSges(const Lams &lams, const NDK_SGE *sge, ULONG n, Post &&post, bool writes = false) {
    if (__builtin_expect(!sge || !lams.Privileged(sge, n), 1)) return StatusFromNd(post(SgesToNd(sge)));
    constexpr ULONG kOnStack = 16;
    ND2_SGE stack[kOnStack];
    std::unique_ptr<ND2_SGE[]> heap;
    ND2_SGE *out = stack;
    if (n > kOnStack) {
        heap.reset(new (std::nothrow) ND2_SGE[n]);
        if (!heap) return STATUS_INSUFFICIENT_RESOURCES;
        out = heap.get();
    }
    if (!lams.Translate(sge, n, out, writes)) return STATUS_ACCESS_VIOLATION;
    return StatusFromNd(post(out));
}

}  // namespace opennd::ndk
