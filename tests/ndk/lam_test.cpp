// Logical address mappings and the privileged token (ndk/lam.h): what
// NdkBuildLAM reports for buffers that are and are not page aligned, posts
// whose SGEs carry logical addresses, and what the token never allows.
#include <cstring>

#include "lam_util.h"

using namespace ndk_test;

namespace {

class NdkLam : public ConnectedPair {
protected:
    UINT32 Privileged(Side &side) {
        UINT32 token = 0;
        side.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(side.pd, &token);
        return token;
    }
};

}  // namespace

TEST_F(NdkLam, PagesAndFirstByteOffsetOfAlignedAndUnalignedBuffers) {
    Pages mem(4);
    const auto base = reinterpret_cast<LONGLONG>(mem.p);
    constexpr ULONG kHeader = offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray);
    struct Case {
        size_t offset, length;
        ULONG pages;
    } cases[] = {{0, 3 * kPage, 3}, {100, 2 * kPage, 3}, {10, 20, 1}, {kPage - 1, 2, 2}, {kPage, kPage, 1}};
    for (const Case &c : cases) {
        Lam lam(pair_.adapter, mem.p + c.offset, c.length);
        ASSERT_EQ(lam.Build(c.length), STATUS_SUCCESS) << c.offset << "+" << c.length;
        EXPECT_EQ(lam.size, kHeader + c.pages * sizeof(NDK_LOGICAL_ADDRESS));
        EXPECT_EQ(lam.fbo, c.offset % kPage);
        ASSERT_EQ(lam.lam->AdapterPageCount, c.pages);
        for (ULONG i = 0; i < c.pages; ++i)
            EXPECT_EQ(lam.lam->AdapterPageArray[i].QuadPart,
                      base + static_cast<LONGLONG>((c.offset / kPage + i) * kPage));
    }
}

TEST_F(NdkLam, BadRequestsAreRefused) {
    Pages mem(2);
    const NDK_ADAPTER_DISPATCH *d = pair_.adapter->Dispatch;
    MDL mdl;
    MmInitializeMdl(&mdl, mem.p, kPage);
    alignas(NDK_LOGICAL_ADDRESS_MAPPING) char out[64];
    auto *lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING *>(out);
    ULONG size = sizeof out, fbo = 0;
    EXPECT_EQ(d->NdkBuildLAM(pair_.adapter, nullptr, kPage, nullptr, nullptr, lam, &size, &fbo),
              STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkBuildLAM(pair_.adapter, &mdl, 0, nullptr, nullptr, lam, &size, &fbo), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkBuildLAM(pair_.adapter, &mdl, kPage + 1, nullptr, nullptr, lam, &size, &fbo),
              STATUS_INVALID_PARAMETER);  // more than the MDL describes
    size = 8;
    EXPECT_EQ(d->NdkBuildLAM(pair_.adapter, &mdl, kPage, nullptr, nullptr, lam, &size, &fbo), STATUS_BUFFER_TOO_SMALL);
    EXPECT_EQ(size, offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + sizeof(NDK_LOGICAL_ADDRESS));
    d->NdkReleaseLAM(pair_.adapter, lam);  // never built: nothing happens
}

TEST_F(NdkLam, SendReceiveReadAndWriteThroughLogicalAddresses) {
    Side &c = pair_.client, &s = pair_.server;
    Pages cmem(2), smem(2);
    Lam clam(pair_.adapter, cmem.p + 100, kPage + 500), slam(pair_.adapter, smem.p + 300, kPage);
    ASSERT_EQ(clam.Build(kPage + 500), STATUS_SUCCESS);
    ASSERT_EQ(slam.Build(kPage), STATUS_SUCCESS);
    const UINT32 ctok = Privileged(c), stok = Privileged(s);
    for (size_t i = 0; i < kPage + 500; ++i) cmem.p[100 + i] = static_cast<char>(i * 7 + 1);
    // A Send across the client's page boundary into a receive across the server's.
    NDK_SGE rs = slam.Sge(stok, 0, kPage);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &rs, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss[2] = {clam.Sge(ctok, 0, 3000), clam.Sge(ctok, 3000, 1000)};
    ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, ss, ss, 2, 0), STATUS_SUCCESS);
    NDK_RESULT_EX got = s.Next();
    ASSERT_EQ(got.Status, STATUS_SUCCESS);
    EXPECT_EQ(got.BytesTransferred, 4000u);
    EXPECT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(smem.p + 300, cmem.p + 100, 4000), 0);
    // One-sided: the local side's SGEs are logical addresses, the remote one a registered region.
    const UINT32 token = s.region.mr->Dispatch->NdkGetRemoteTokenFromMr(s.region.mr);
    NDK_SGE ws = clam.Sge(ctok, 500, 2048);
    ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, &ws, &ws, 1, s.region.Address(), token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(s.region.bytes.data(), cmem.p + 600, 2048), 0);
    std::memset(cmem.p + 100, 0, 2048);
    NDK_SGE rd = clam.Sge(ctok, 0, 2048);
    ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, &rd, &rd, 1, s.region.Address(), token, 0), STATUS_SUCCESS);
    ASSERT_EQ(c.Next().Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(s.region.bytes.data(), cmem.p + 100, 2048), 0);
}

TEST_F(NdkLam, ALogicalAddressOutsideEveryMappingIsRefusedWithoutCompletion) {
    Side &c = pair_.client;
    Pages mem(3);
    Lam lam(pair_.adapter, mem.p, kPage);
    ASSERT_EQ(lam.Build(kPage), STATUS_SUCCESS);
    const UINT32 tok = Privileged(c);
    const NDK_QP_DISPATCH *d = c.qp->Dispatch;
    NDK_SGE past = lam.Sge(tok, kPage - 8, 16);  // runs off the mapping's end
    EXPECT_EQ(d->NdkSend(c.qp, nullptr, &past, 1, 0), STATUS_ACCESS_VIOLATION);
    NDK_SGE elsewhere = lam.Sge(tok, 2 * kPage, 16);
    EXPECT_EQ(d->NdkReceive(c.qp, nullptr, &elsewhere, 1), STATUS_ACCESS_VIOLATION);
    NDK_SGE inside = lam.Sge(tok, 0, 16);
    lam.Release();  // no longer mapped
    EXPECT_EQ(d->NdkSend(c.qp, nullptr, &inside, 1, 0), STATUS_ACCESS_VIOLATION);
    c.ExpectQuiet();
}

TEST_F(NdkLam, ThePrivilegedTokenGrantsNoRemoteAccess) {
    Side &c = pair_.client, &s = pair_.server;
    Pages smem(1);
    Lam lam(pair_.adapter, smem.p, kPage);
    ASSERT_EQ(lam.Build(kPage), STATUS_SUCCESS);
    std::memset(c.region.bytes.data(), 0x5A, 64);
    NDK_SGE ws = c.region.Sge(0, 64);
    const NTSTATUS posted = c.qp->Dispatch->NdkWrite(c.qp, &ws, &ws, 1, reinterpret_cast<UINT64>(smem.p),
                                                     Privileged(s), 0);
    if (posted == STATUS_SUCCESS) {
        EXPECT_NE(c.Next().Status, STATUS_SUCCESS) << "a Write through the privileged token";
    }
    for (size_t i = 0; i < kPage; ++i) ASSERT_EQ(smem.p[i], 0) << "written at " << i;
}
