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
