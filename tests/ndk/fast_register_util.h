// The fast-register fixture: a connected pair whose server registers
// memory by NdkFastRegister and whose client reaches it through the token
// (fast_register_test.cpp, send_invalidate_test.cpp).
#pragma once

#include <memory>

#include "lam_util.h"

namespace ndk_test {

constexpr ULONG kRemote = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE;

class NdkFastRegister : public ConnectedPair {
protected:
    void TearDown() override {
        Close(mr_);
        lam_.reset();  // its release needs the adapter
        ConnectedPair::TearDown();
    }
    // A fast-register MR on the server, initialised for `pages` pages.
    NDK_MR *Make(ULONG pages, bool remote = true) {
        Side &s = pair_.server;
        NDK_MR *mr = nullptr;
        EXPECT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, nullptr, nullptr, &mr), STATUS_SUCCESS);
        if (!mr) return nullptr;
        mr_ = mr;
        EXPECT_EQ(mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, nullptr, nullptr), STATUS_SUCCESS);
        return mr;
    }
    // Registers `lam`'s bytes [0, length) of its MDL at `base`; the posted
    // status (the completion taken when it is STATUS_SUCCESS). A provider
    // that cannot place a region elsewhere than the buffer (STATUS_NOT_SUPPORTED:
    // siw, docs/verbs.md) gets the buffer's own address instead, and
    // relocated_ says so; base_ is the address the peer uses.
    NTSTATUS Register(Lam &lam, size_t length, UINT64 base, ULONG flags = kRemote) {
        Side &s = pair_.server;
        auto post = [&](UINT64 at) {
            return s.qp->Dispatch->NdkFastRegister(s.qp, &lam, mr_, lam.lam->AdapterPageCount,
                                                   lam.lam->AdapterPageArray, lam.fbo, length,
                                                   reinterpret_cast<PVOID>(at), flags);
        };
        const UINT64 own = static_cast<UINT64>(lam.lam->AdapterPageArray[0].QuadPart) + lam.fbo;
        base_ = base;
        NTSTATUS st = post(base);
        if (st == STATUS_NOT_SUPPORTED && base != own) {
            relocated_ = false;
            base_ = own;
            st = post(own);
        }
        if (st == STATUS_SUCCESS) {
            NDK_RESULT_EX r = s.Next();
            EXPECT_EQ(r.Type, NdkOperationTypeFastRegister);
            EXPECT_EQ(r.RequestContext, &lam);
            return r.Status;
        }
        return st;
    }
    UINT32 Token() { return mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_); }
    // The client's Write of `n` bytes of its region (offset 0) to `at`; its completion status.
    NTSTATUS Write(UINT64 at, UINT32 token, size_t n) {
        Side &c = pair_.client;
        NDK_SGE sge = c.region.Sge(0, n);
        NTSTATUS st = c.qp->Dispatch->NdkWrite(c.qp, nullptr, &sge, 1, at, token, 0);
        return st == STATUS_SUCCESS ? c.Next().Status : st;
    }
    NTSTATUS Read(UINT64 at, UINT32 token, size_t n) {
        Side &c = pair_.client;
        NDK_SGE sge = c.region.Sge(0, n);
        NTSTATUS st = c.qp->Dispatch->NdkRead(c.qp, nullptr, &sge, 1, at, token, 0);
        return st == STATUS_SUCCESS ? c.Next().Status : st;
    }
    void Fill(size_t n, char seed) {
        for (size_t i = 0; i < n; ++i) pair_.client.region.bytes[i] = static_cast<char>(seed + i * 13);
    }
    // A one-page buffer (mem_) and its mapping (lam_), and a fast-register
    // MR for it (remote access unless `remote` is false).
    bool OnePage(bool remote = true) {
        lam_ = std::make_unique<Lam>(pair_.adapter, mem_.p, kPage);
        return lam_->Build(kPage) == STATUS_SUCCESS && Make(1, remote);
    }

    NDK_MR *mr_ = nullptr;
    UINT64 base_ = 0;
    bool relocated_ = true;
    Pages mem_{1};
    std::unique_ptr<Lam> lam_;
};


}  // namespace ndk_test
