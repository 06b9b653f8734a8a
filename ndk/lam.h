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
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <shared_mutex>

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

    // Does a post's SGE array carry the privileged token? (The data path's
    // one test; nothing is locked.)
    bool Privileged(const NDK_SGE *sge, ULONG n) const {
        for (ULONG i = 0; i < n; ++i)
            if (sge[i].MemoryRegionToken == token_) return true;
        return false;
    }
    // out[i] = sge[i], except that a privileged SGE gets the token of the
    // mapping holding all its bytes. False if one lies outside every mapping.
    bool Translate(const NDK_SGE *sge, ULONG n, ND2_SGE *out) const;
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
    uint64_t next_id_ = 1;
    uintptr_t widest_ = 0;  // the longest mapping's bytes: how far back Translate looks
};

// Calls `post` with the SGE array as ND2 takes it: passed through, unless
// an SGE carries the privileged token (then translated; one outside every
// mapping fails the post, STATUS_ACCESS_VIOLATION, with no completion).
template <class Post>
NTSTATUS PostSges(const Lams &lams, const NDK_SGE *sge, ULONG n, Post &&post) {
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
    if (!lams.Translate(sge, n, out)) return STATUS_ACCESS_VIOLATION;
    return StatusFromNd(post(out));
}

}  // namespace opennd::ndk
