// Fast-register MRs (NdkCreateMr(TRUE), NdkInitializeFastRegisterMr,
// NdkFastRegister, NdkInvalidate of an MR): the peer's Reads and Writes
// through the token at the address the consumer chose, and everything that
// must be refused: the buffer's own address, bytes past the length, rights
// not granted, a token after invalidation, bad page lists.
#include <cstdio>
#include <cstring>

#include "fast_register_util.h"

using namespace ndk_test;

TEST_F(NdkFastRegister, AdapterReportsPagesAndMrsFollowTheirRules) {
    const NDK_ADAPTER_DISPATCH *ad = pair_.adapter->Dispatch;
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    ASSERT_EQ(ad->NdkQueryAdapterInfo(pair_.adapter, &info, &size), STATUS_SUCCESS);
    EXPECT_GE(info.FRMRPageCount, 16u);
    Side &s = pair_.server;
    NDK_MR *mr = nullptr;
    ASSERT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, nullptr, nullptr, &mr), STATUS_SUCCESS);
    mr_ = mr;
    const NDK_MR_DISPATCH *d = mr->Dispatch;
    MDL mdl;
    char buf[64];
    MmInitializeMdl(&mdl, buf, sizeof buf);
    EXPECT_EQ(d->NdkRegisterMr(mr, &mdl, sizeof buf, 0, nullptr, nullptr), STATUS_INVALID_DEVICE_REQUEST);
    EXPECT_EQ(d->NdkDeregisterMr(mr, nullptr, nullptr), STATUS_INVALID_DEVICE_REQUEST);
    Pages mem(2);
    Lam lam(pair_.adapter, mem.p, kPage);
    ASSERT_EQ(lam.Build(kPage), STATUS_SUCCESS);
    EXPECT_EQ(s.qp->Dispatch->NdkFastRegister(s.qp, nullptr, mr, 1, lam.lam->AdapterPageArray, 0, kPage, nullptr, 0),
              STATUS_INVALID_DEVICE_REQUEST)
        << "before NdkInitializeFastRegisterMr";
    EXPECT_EQ(d->NdkInitializeFastRegisterMr(mr, 0, TRUE, nullptr, nullptr), STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkInitializeFastRegisterMr(mr, info.FRMRPageCount + 1, TRUE, nullptr, nullptr),
              STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d->NdkInitializeFastRegisterMr(mr, info.FRMRPageCount, TRUE, nullptr, nullptr), STATUS_SUCCESS);
    EXPECT_EQ(d->NdkInitializeFastRegisterMr(mr, 4, TRUE, nullptr, nullptr), STATUS_INVALID_DEVICE_REQUEST);
    // A registered MR cannot be initialised, nor invalidated like one.
    EXPECT_EQ(s.region.mr->Dispatch->NdkInitializeFastRegisterMr(s.region.mr, 4, TRUE, nullptr, nullptr),
              STATUS_INVALID_DEVICE_REQUEST);
    EXPECT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, nullptr, &s.region.mr->Header, 0), STATUS_INVALID_DEVICE_REQUEST);
}

TEST_F(NdkFastRegister, ThePeerReadsAndWritesAtTheAddressTheConsumerChose) {
    Pages mem(4);
    Lam lam(pair_.adapter, mem.p + 300, 2 * kPage);  // not page aligned: 3 pages, first byte offset 300
    ASSERT_EQ(lam.Build(2 * kPage), STATUS_SUCCESS);
    ASSERT_TRUE(Make(8));
    ASSERT_EQ(Register(lam, 2 * kPage, 0x7000'0000'0000ull + lam.fbo), STATUS_SUCCESS);  // nowhere near the buffer
    if (!relocated_) std::printf("(the provider registered the region at the buffer's own address)\n");
    const UINT64 base = base_;
    const UINT32 token = Token();
    Fill(3000, 1);
    ASSERT_EQ(Write(base + 5000, token, 3000), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(mem.p + 300 + 5000, pair_.client.region.bytes.data(), 3000), 0);
    for (size_t i = 0; i < 300 + 5000; ++i) ASSERT_EQ(mem.p[i], 0) << "written before the range, at " << i;
    for (size_t i = 300 + 8000; i < mem.size; ++i) ASSERT_EQ(mem.p[i], 0) << "written after the range, at " << i;
    for (size_t i = 0; i < 2 * kPage; ++i) mem.p[300 + i] = static_cast<char>(i * 7 + 3);
    ASSERT_EQ(Read(base, token, 2 * kPage), STATUS_SUCCESS);  // all of it
    EXPECT_EQ(std::memcmp(pair_.client.region.bytes.data(), mem.p + 300, 2 * kPage), 0);
    // The last byte, and the local token is the remote one (the peer's only).
    ASSERT_EQ(Read(base + 2 * kPage - 1, token, 1), STATUS_SUCCESS);
    EXPECT_EQ(pair_.client.region.bytes[0], mem.p[300 + 2 * kPage - 1]);
    EXPECT_EQ(mr_->Dispatch->NdkGetLocalTokenFromMr(mr_), token);
}

TEST_F(NdkFastRegister, TheBuffersOwnAddressIsNotReachable) {
    Pages mem(2);
    Lam lam(pair_.adapter, mem.p, kPage);
    ASSERT_EQ(lam.Build(kPage), STATUS_SUCCESS);
    ASSERT_TRUE(Make(1));
    ASSERT_EQ(Register(lam, kPage, 0x10000), STATUS_SUCCESS);
    if (!relocated_) GTEST_SKIP() << "the provider cannot place a region elsewhere than its buffer (STATUS_NOT_SUPPORTED)";
    Fill(64, 9);
    EXPECT_EQ(Write(reinterpret_cast<UINT64>(mem.p), Token(), 64), STATUS_ACCESS_VIOLATION);
    for (size_t i = 0; i < mem.size; ++i) ASSERT_EQ(mem.p[i], 0) << "written at " << i;
}

TEST_F(NdkFastRegister, BytesPastTheLengthAreNotReachable) {
    Pages mem(2);
    Lam lam(pair_.adapter, mem.p, 2 * kPage);
    ASSERT_EQ(lam.Build(2 * kPage), STATUS_SUCCESS);
    ASSERT_TRUE(Make(2));
    ASSERT_EQ(Register(lam, 1000, 0x10000), STATUS_SUCCESS);  // 1000 bytes of the 2 pages
    Fill(16, 4);
    EXPECT_EQ(Write(base_ + 992, Token(), 16), STATUS_ACCESS_VIOLATION);
    for (size_t i = 0; i < mem.size; ++i) ASSERT_EQ(mem.p[i], 0) << "written at " << i;
}

TEST_F(NdkFastRegister, RightsNotGrantedAreRefused) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x20000, NDK_OP_FLAG_ALLOW_REMOTE_READ), STATUS_SUCCESS);
    mem_.p[0] = 42;
    ASSERT_EQ(Read(base_, Token(), 1), STATUS_SUCCESS);
    EXPECT_EQ(pair_.client.region.bytes[0], 42);
    Fill(8, 1);
    EXPECT_EQ(Write(base_, Token(), 8), STATUS_ACCESS_VIOLATION) << "a Write through a read-only registration";
    EXPECT_EQ(mem_.p[1], 0);
}

TEST_F(NdkFastRegister, RemoteFlagsNeedAnMrInitialisedForRemoteAccess) {
    ASSERT_TRUE(OnePage(/*remote=*/false));
    EXPECT_EQ(Register(*lam_, kPage, 0x20000, NDK_OP_FLAG_ALLOW_REMOTE_READ), STATUS_ACCESS_VIOLATION);
    EXPECT_EQ(Register(*lam_, kPage, 0x20000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE), STATUS_ACCESS_VIOLATION);
    EXPECT_EQ(Register(*lam_, kPage, 0x20000, NDK_OP_FLAG_ALLOW_LOCAL_WRITE), STATUS_SUCCESS);
}

TEST_F(NdkFastRegister, AfterInvalidateThePeerIsRefused) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    UINT32 token = Token();
    Fill(32, 2);
    ASSERT_EQ(Write(base_, token, 32), STATUS_SUCCESS);
    std::memset(mem_.p, 0, 32);
    Side &s = pair_.server;
    ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, &token, &mr_->Header, 0), STATUS_SUCCESS);
    NDK_RESULT_EX r = s.Next();
    EXPECT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.Type, NdkOperationTypeInvalidate);
    EXPECT_EQ(Write(base_, token, 32), STATUS_ACCESS_VIOLATION);
    for (size_t i = 0; i < kPage; ++i) ASSERT_EQ(mem_.p[i], 0) << "written after the invalidation, at " << i;
}

TEST_F(NdkFastRegister, RegisteredAgainAfterInvalidateWithANewToken) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    const UINT32 first = Token();
    Side &s = pair_.server;
    ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, nullptr, &mr_->Header, 0), STATUS_SUCCESS);
    ASSERT_EQ(s.Next().Status, STATUS_SUCCESS);
    ASSERT_EQ(Register(*lam_, kPage, 0x50000), STATUS_SUCCESS);
    EXPECT_NE(Token(), first);
    Fill(100, 3);
    ASSERT_EQ(Write(base_ + 10, Token(), 100), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(mem_.p + 10, pair_.client.region.bytes.data(), 100), 0);
}

// The token is a local token too (NdkGetLocalTokenFromMr): SGEs that carry
// it hold addresses in the range the MR was fast-registered at.
TEST_F(NdkFastRegister, ItsTokenServesLocalSgesAtTheRegisteredAddresses) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x6000'0000'0000ull), STATUS_SUCCESS);
    Side &s = pair_.server, &c = pair_.client;
    const UINT32 token = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
    auto sge = [&](size_t offset, size_t length) {
        NDK_SGE g{};
        g.LogicalAddress.QuadPart = static_cast<LONGLONG>(base_ + offset);
        g.Length = static_cast<ULONG>(length);
        g.MemoryRegionToken = token;
        return g;
    };
    // A Send from it.
    for (size_t i = 0; i < 100; ++i) mem_.p[10 + i] = static_cast<char>(i * 5 + 1);
    NDK_SGE rs = c.region.Sge(0, 256);
    ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss = sge(10, 100);
    ASSERT_EQ(s.qp->Dispatch->NdkSend(s.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
    EXPECT_EQ(s.Next().Status, STATUS_SUCCESS);
    NDK_RESULT_EX r = c.Next();
    ASSERT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.BytesTransferred, 100u);
    EXPECT_EQ(std::memcmp(c.region.bytes.data(), mem_.p + 10, 100), 0);
    // A Receive into it.
    NDK_SGE into = sge(200, 64);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, nullptr, &into, 1), STATUS_SUCCESS);
    Fill(64, 7);
    NDK_SGE cs = c.region.Sge(0, 64);
    ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, nullptr, &cs, 1, 0), STATUS_SUCCESS);
    EXPECT_EQ(c.Next().Status, STATUS_SUCCESS);
    r = s.Next();
    ASSERT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.Type, NdkOperationTypeReceive);
    EXPECT_EQ(std::memcmp(mem_.p + 200, c.region.bytes.data(), 64), 0);
    // Addresses outside the registration, and its buffer's own: refused at post.
    NDK_SGE past = sge(kPage - 10, 20);
    EXPECT_EQ(s.qp->Dispatch->NdkSend(s.qp, nullptr, &past, 1, 0), STATUS_ACCESS_VIOLATION);
    NDK_SGE before = sge(0, 8);
    before.LogicalAddress.QuadPart -= 8;
    EXPECT_EQ(s.qp->Dispatch->NdkSend(s.qp, nullptr, &before, 1, 0), STATUS_ACCESS_VIOLATION);
    if (relocated_) {
        NDK_SGE own = sge(0, 8);
        own.LogicalAddress.QuadPart = reinterpret_cast<LONGLONG>(mem_.p);
        EXPECT_NE(s.qp->Dispatch->NdkSend(s.qp, nullptr, &own, 1, 0), STATUS_SUCCESS) << "the buffer's own address";
    }
    s.ExpectQuiet();
}

TEST_F(NdkFastRegister, WithoutLocalWriteItIsNoReceiveOrReadSink) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x6000'0000'0000ull, NDK_OP_FLAG_ALLOW_REMOTE_READ), STATUS_SUCCESS);
    Side &s = pair_.server;
    NDK_SGE g{};
    g.LogicalAddress.QuadPart = static_cast<LONGLONG>(base_);
    g.Length = 64;
    g.MemoryRegionToken = Token();
    EXPECT_EQ(s.qp->Dispatch->NdkReceive(s.qp, nullptr, &g, 1), STATUS_ACCESS_VIOLATION);
    const UINT32 theirs = pair_.client.region.mr->Dispatch->NdkGetRemoteTokenFromMr(pair_.client.region.mr);
    EXPECT_EQ(s.qp->Dispatch->NdkRead(s.qp, nullptr, &g, 1, pair_.client.region.Address(), theirs, 0),
              STATUS_ACCESS_VIOLATION);
    s.ExpectQuiet();
}

// NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE: the Read fills the fast-register
// MR its first SGE names and completes once, and from then on the MR is
// invalid: no local SGE may name it, and it can be fast-registered again.
class NdkReadInvalidate : public NdkFastRegister {
protected:
    // Registers one page at kAt (remote access, a Read sink) and Reads 300
    // bytes of the client's region into it at +100, invalidating it.
    void ReadIntoAndInvalidate() {
        NDK_ADAPTER_INFO info{};
        ULONG size = sizeof info;
        ASSERT_EQ(pair_.adapter->Dispatch->NdkQueryAdapterInfo(pair_.adapter, &info, &size), STATUS_SUCCESS);
        ASSERT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED);
        ASSERT_TRUE(OnePage());
        ASSERT_EQ(Register(*lam_, kPage, kAt, kRemote | NDK_OP_FLAG_RDMA_READ_SINK), STATUS_SUCCESS);
        token_ = Token();
        at_ = base_;
        Side &s = pair_.server, &c = pair_.client;
        Fill(300, 11);
        sink_.LogicalAddress.QuadPart = static_cast<LONGLONG>(base_ + 100);
        sink_.Length = 300;
        sink_.MemoryRegionToken = token_;
        int ctx = 0;
        ASSERT_EQ(s.qp->Dispatch->NdkRead(s.qp, &ctx, &sink_, 1, c.region.Address(), Theirs(),
                                          NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
                  STATUS_SUCCESS);
        NDK_RESULT_EX r = s.Next();
        ASSERT_EQ(r.Status, STATUS_SUCCESS);
        EXPECT_EQ(r.Type, NdkOperationTypeRead);
        EXPECT_EQ(r.RequestContext, &ctx);
        EXPECT_EQ(std::memcmp(mem_.p + 100, c.region.bytes.data(), 300), 0);
        s.ExpectQuiet();  // the invalidation is the Read's own: no completion of its own
    }
    UINT32 Theirs() { return pair_.client.region.mr->Dispatch->NdkGetRemoteTokenFromMr(pair_.client.region.mr); }

    static constexpr UINT64 kAt = 0x6000'0000'0000ull;
    UINT32 token_ = 0;
    UINT64 at_ = 0;
    NDK_SGE sink_{};
};

TEST_F(NdkReadInvalidate, TheReadCompletesOnceAndTheMrIsRegisteredAgain) {
    ASSERT_NO_FATAL_FAILURE(ReadIntoAndInvalidate());
    Side &s = pair_.server;
    // No local use either: the token is the provider's again, which this layer does not translate.
    EXPECT_EQ(s.qp->Dispatch->NdkRead(s.qp, nullptr, &sink_, 1, pair_.client.region.Address(), Theirs(),
                                      NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_INVALID_PARAMETER);
    // Fast-registered again (it is invalid, so this succeeds), with a new token.
    ASSERT_EQ(Register(*lam_, kPage, kAt + 0x100'0000'0000ull), STATUS_SUCCESS);
    EXPECT_NE(Token(), token_);
    Fill(32, 5);
    ASSERT_EQ(Write(base_, Token(), 32), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(mem_.p, pair_.client.region.bytes.data(), 32), 0);
}

// (Not on siw, which completes a Write once it is sent: vm_interop.sh.)
TEST_F(NdkReadInvalidate, AfterTheReadThePeerIsRefused) {
    ASSERT_NO_FATAL_FAILURE(ReadIntoAndInvalidate());
    std::memset(mem_.p, 0, kPage);
    Fill(32, 5);
    EXPECT_EQ(Write(at_ + 100, token_, 32), STATUS_ACCESS_VIOLATION);
    for (size_t i = 0; i < kPage; ++i) ASSERT_EQ(mem_.p[i], 0) << "written through the invalidated token, at " << i;
}

TEST_F(NdkFastRegister, AReadCanOnlyInvalidateAFastRegisteredSink) {
    ASSERT_TRUE(OnePage());
    Side &s = pair_.server, &c = pair_.client;
    const UINT32 theirs = c.region.mr->Dispatch->NdkGetRemoteTokenFromMr(c.region.mr);
    const NDK_QP_DISPATCH *d = s.qp->Dispatch;
    NDK_SGE own = s.region.Sge(0, 64);
    EXPECT_EQ(d->NdkRead(s.qp, nullptr, &own, 1, c.region.Address(), theirs, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_INVALID_PARAMETER)
        << "a registered MR";
    UINT32 privileged = 0;
    s.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(s.pd, &privileged);
    NDK_SGE lam{};
    lam.LogicalAddress = lam_->lam->AdapterPageArray[0];
    lam.Length = 64;
    lam.MemoryRegionToken = privileged;
    EXPECT_EQ(d->NdkRead(s.qp, nullptr, &lam, 1, c.region.Address(), theirs, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_INVALID_PARAMETER)
        << "the privileged token";
    EXPECT_EQ(d->NdkRead(s.qp, nullptr, nullptr, 0, c.region.Address(), theirs, NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
              STATUS_INVALID_PARAMETER)
        << "no SGE";
    s.ExpectQuiet();
    // The registered MR is still there: a plain Read into it works.
    ASSERT_EQ(d->NdkRead(s.qp, nullptr, &own, 1, c.region.Address(), theirs, 0), STATUS_SUCCESS);
    EXPECT_EQ(s.Next().Status, STATUS_SUCCESS);
}

// As on an RNIC, the failed request's completion ends the connection.
TEST_F(NdkFastRegister, RegisteringAValidMrFails) {
    ASSERT_TRUE(OnePage());
    ASSERT_EQ(Register(*lam_, kPage, 0x40000), STATUS_SUCCESS);
    const UINT32 token = Token();
    EXPECT_NE(Register(*lam_, kPage, 0x50000), STATUS_SUCCESS) << "registered while still valid";
    EXPECT_EQ(Token(), token);
}

TEST_F(NdkFastRegister, InvalidatingAnMrNotRegisteredFails) {
    ASSERT_TRUE(Make(1));
    Side &s = pair_.server;
    ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, nullptr, &mr_->Header, 0), STATUS_SUCCESS);  // (R107: completes)
    EXPECT_NE(s.Next().Status, STATUS_SUCCESS) << "invalidating an MR never registered";
}

TEST_F(NdkFastRegister, BadPageListsAreRefusedWithoutCompletion) {
    Pages mem(4);
    Lam lam(pair_.adapter, mem.p, 4 * kPage);
    ASSERT_EQ(lam.Build(4 * kPage), STATUS_SUCCESS);
    ASSERT_TRUE(Make(2));
    Side &s = pair_.server;
    const NDK_QP_DISPATCH *d = s.qp->Dispatch;
    NDK_LOGICAL_ADDRESS pages[3] = {lam.lam->AdapterPageArray[0], lam.lam->AdapterPageArray[1],
                                    lam.lam->AdapterPageArray[2]};
    auto post = [&](ULONG n, const NDK_LOGICAL_ADDRESS *p, ULONG fbo, SIZE_T length, ULONG flags = kRemote) {
        return d->NdkFastRegister(s.qp, nullptr, mr_, n, p, fbo, length, reinterpret_cast<PVOID>(0x1000), flags);
    };
    EXPECT_EQ(post(3, pages, 0, kPage), STATUS_INVALID_PARAMETER_4) << "more pages than initialised";
    EXPECT_EQ(post(0, pages, 0, kPage), STATUS_INVALID_PARAMETER_4);
    EXPECT_EQ(post(1, nullptr, 0, kPage), STATUS_INVALID_PARAMETER_5);
    EXPECT_EQ(post(1, pages, static_cast<ULONG>(kPage), 1), STATUS_INVALID_PARAMETER_6);
    EXPECT_EQ(post(1, pages, 0, 0), STATUS_INVALID_PARAMETER_7);
    EXPECT_EQ(post(1, pages, 100, kPage), STATUS_INVALID_PARAMETER_7) << "past the last page";
    EXPECT_EQ(post(1, pages, 0, kPage, NDK_OP_FLAG_INLINE), STATUS_INVALID_PARAMETER);
    NDK_LOGICAL_ADDRESS odd[1] = {pages[0]};
    odd[0].QuadPart += 8;
    EXPECT_EQ(post(1, odd, 0, 8), STATUS_INVALID_PARAMETER_5) << "a page address not page aligned";
    NDK_LOGICAL_ADDRESS apart[2] = {pages[0], pages[2]};
    EXPECT_EQ(post(2, apart, 0, 2 * kPage), STATUS_NOT_SUPPORTED) << "pages not consecutive";
    Pages other(1);  // never mapped
    NDK_LOGICAL_ADDRESS unmapped[1];
    unmapped[0].QuadPart = reinterpret_cast<LONGLONG>(other.p);
    EXPECT_EQ(post(1, unmapped, 0, kPage), STATUS_ACCESS_VIOLATION) << "a page no mapping holds";
    EXPECT_EQ(d->NdkFastRegister(s.qp, nullptr, mr_, 1, pages, 0, kPage, reinterpret_cast<PVOID>(~uintptr_t(0) - 100),
                                 kRemote),
              STATUS_INVALID_PARAMETER_6)
        << "a region past the end of the address space";
    EXPECT_EQ(d->NdkFastRegister(s.qp, nullptr, s.region.mr, 1, pages, 0, kPage, nullptr, 0),
              STATUS_INVALID_PARAMETER_3)
        << "a registered MR";
    s.ExpectQuiet();
}
