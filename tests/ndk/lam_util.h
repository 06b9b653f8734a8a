// Page-aligned test memory and logical address mappings of it (NdkBuildLAM),
// for the LAM and fast-register tests.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>

#include "ndk_test_util.h"

namespace ndk_test {

constexpr size_t kPage = PAGE_SIZE;

// Page-aligned memory of `pages` pages.
struct Pages {
    explicit Pages(size_t pages) : size(pages * kPage), p(static_cast<char *>(std::aligned_alloc(kPage, size))) {
        std::memset(p, 0, size);
    }
    ~Pages() { std::free(p); }
    size_t size;
    char *p;
};

// A mapping built on `adapter` over [at, at + length).
struct Lam {
    NDK_ADAPTER *adapter;
    MDL mdl{};
    std::unique_ptr<char[]> storage;
    NDK_LOGICAL_ADDRESS_MAPPING *lam = nullptr;
    ULONG size = 0, fbo = 0;

    Lam(NDK_ADAPTER *a, void *at, size_t length) : adapter(a) { MmInitializeMdl(&mdl, at, length); }
    ~Lam() {
        if (lam) adapter->Dispatch->NdkReleaseLAM(adapter, lam);
    }
    NTSTATUS Build(size_t length) {
        const NDK_ADAPTER_DISPATCH *d = adapter->Dispatch;
        NTSTATUS s = d->NdkBuildLAM(adapter, &mdl, length, nullptr, nullptr, nullptr, &size, &fbo);
        if (s != STATUS_BUFFER_TOO_SMALL) return s;
        storage.reset(new char[size]);
        auto *out = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(storage.get());
        s = d->NdkBuildLAM(adapter, &mdl, length, nullptr, nullptr, out, &size, &fbo);
        if (s == STATUS_SUCCESS) lam = out;
        return s;
    }
    void Release() {
        adapter->Dispatch->NdkReleaseLAM(adapter, lam);
        lam = nullptr;
    }
    // An SGE over the mapping's bytes [offset, offset + length) of the MDL.
    NDK_SGE Sge(UINT32 token, size_t offset, size_t length) const {
        NDK_SGE s{};
        s.LogicalAddress.QuadPart = lam->AdapterPageArray[0].QuadPart + fbo + static_cast<LONGLONG>(offset);
        s.Length = static_cast<ULONG>(length);
        s.MemoryRegionToken = token;
        return s;
    }
};

}  // namespace ndk_test
