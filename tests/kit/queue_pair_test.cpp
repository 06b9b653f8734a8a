// kit::QueuePair and kit::MemoryWindow, on a minimal provider: every request
// is checked in the spec's order and reaches the provider's Post* only when
// it passes (SPI §7, R095-R107, D33); a window is bound once at a time, is
// counted in its region (Deregister ND_DEVICE_BUSY, R075) and reports an
// Invalidate of an unbound window (R107).
#include <gtest/gtest.h>

#include <vector>

#include "opennd/kit/memory_window.h"
#include "opennd/kit/queue_pair.h"
#include "support/loopback_adapter.h"

using namespace testing_support;
namespace kit = opennd::kit;

namespace {

class TestRegion : public kit::MemoryRegion {
public:
    explicit TestRegion(HANDLE file) : kit::MemoryRegion(file, SIZE_T(1) << 30) {}
    UINT32 STDMETHODCALLTYPE GetLocalToken() override { return 1; }
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return 2; }

private:
    HRESULT DoRegister(const kit::Registration &) override { return ND_SUCCESS; }
    void DoDeregister() override {}
    bool CompletesInline(const kit::Registration &) const override { return true; }
};

class TestWindow : public kit::MemoryWindow {
public:
    UINT32 STDMETHODCALLTYPE GetRemoteToken() override { return 3; }
    HRESULT bind_result = ND_SUCCESS;  // what the provider's binding answers
};

class TestQp : public kit::QueuePair<TestQp> {
public:
    explicit TestQp(const kit::QueuePairArgs &a, ULONG read_sge = ~0u) : kit::QueuePair<TestQp>(a, 4, 1 << 20, read_sge) {}
    HRESULT STDMETHODCALLTYPE Flush() override { return ND_SUCCESS; }

    bool connected = true;
    int posts = 0;
    uint64_t last_total = 0;
    TestRegion *region = nullptr;
    TestWindow *window = nullptr;

private:
    friend class kit::QueuePair<TestQp>;
    bool MayPost() const { return connected; }
    HRESULT Posted(uint64_t total) {
        ++posts;
        last_total = total;
        return ND_SUCCESS;
    }
    HRESULT PostSend(void *, const ND2_SGE *, ULONG, ULONG, uint64_t total) { return Posted(total); }
    HRESULT PostReceive(void *, const ND2_SGE *, ULONG) { return Posted(0); }
    HRESULT PostWrite(void *, const ND2_SGE *, ULONG, uint64_t total, UINT64, UINT32, ULONG) { return Posted(total); }
    TestRegion *FindRegion(IUnknown *u) { return u == region ? region : nullptr; }
    TestWindow *FindWindow(IUnknown *u) { return u == window ? window : nullptr; }
    HRESULT PostBind(void *, TestRegion *r, TestWindow *w, const void *buffer, SIZE_T size, ULONG flags) {
        ++posts;
        return w->BindTo(r, reinterpret_cast<uint64_t>(buffer), size, (flags & ND_OP_FLAG_ALLOW_WRITE) != 0,
                         [w] { return w->bind_result; });
    }
    HRESULT PostInvalidate(void *, TestWindow *w, ULONG) {
        ++posts;
        return w->UnbindWith([] {}) ? ND_SUCCESS : ND_INVALID_DEVICE_REQUEST;
    }
};

kit::QueuePairArgs Args(IUnknown *srq = nullptr) {
    kit::QueuePairArgs a;
    a.srq = srq;
    a.receive_depth = a.initiator_depth = 8;
    a.receive_sge = a.initiator_sge = 2;
    a.inline_size = 16;
    return a;
}

class KitQueuePair : public LoopbackAdapterTest {
protected:
    void TearDown() override {
        qp->Release();
        LoopbackAdapterTest::TearDown();
    }
    TestQp *qp = new TestQp(Args());
    char buf[256] = {};
};

TEST_F(KitQueuePair, SendIsCheckedInTheSpecsOrderAndOnlyAValidOneIsPosted) {
    ND2_SGE sge[3] = {{buf, 8, 0}, {buf, 8, 0}, {buf, 8, 0}};
    EXPECT_EQ(qp->Send(nullptr, sge, 1, 0x80000000), ND_INVALID_PARAMETER_4);
    EXPECT_EQ(qp->Send(nullptr, sge, 3, 0), ND_DATA_OVERRUN);  // 3 > 2 SGEs
    qp->connected = false;
    EXPECT_EQ(qp->Send(nullptr, sge, 1, 0), ND_CONNECTION_INVALID);
    qp->connected = true;
    EXPECT_EQ(qp->Send(nullptr, nullptr, 1, 0), ND_INVALID_PARAMETER_2);
    ND2_SGE big{buf, (2u << 20), 0};
    EXPECT_EQ(qp->Send(nullptr, &big, 1, 0), ND_BUFFER_OVERFLOW);  // above MaxTransferLength
    ND2_SGE over_inline{buf, 17, 0};
    EXPECT_EQ(qp->Send(nullptr, &over_inline, 1, ND_OP_FLAG_INLINE), ND_BUFFER_OVERFLOW);
    EXPECT_EQ(qp->posts, 0) << "a refused request reached the provider";
    EXPECT_EQ(qp->Send(nullptr, sge, 2, ND_OP_FLAG_SILENT_SUCCESS), ND_SUCCESS);
    EXPECT_EQ(qp->posts, 1);
    EXPECT_EQ(qp->last_total, 16u);
}

TEST_F(KitQueuePair, ReceiveOnAQueuePairWithASharedReceiveQueueIsRefusedD33) {
    int any = 0;
    TestQp *with_srq = new TestQp(Args(reinterpret_cast<IUnknown *>(&any)));
    ND2_SGE sge{buf, 8, 0};
    EXPECT_EQ(with_srq->Receive(nullptr, &sge, 1), ND_INVALID_DEVICE_STATE);
    EXPECT_EQ(with_srq->posts, 0);
    with_srq->Release();
    ND2_SGE three[3] = {sge, sge, sge};
    EXPECT_EQ(qp->Receive(nullptr, three, 3), ND_DATA_OVERRUN);
    EXPECT_EQ(qp->Receive(nullptr, &sge, 1), ND_SUCCESS);
    EXPECT_EQ(qp->posts, 1);
}

TEST_F(KitQueuePair, OneSidedChecksAndWhatAProviderLeavesOutIsNotSupported) {
    ND2_SGE sge{buf, 8, 0};
    EXPECT_EQ(qp->Read(nullptr, &sge, 1, 0, 0, ND_OP_FLAG_INLINE), ND_INVALID_PARAMETER_6);  // a Read is never inline
    EXPECT_EQ(qp->Read(nullptr, &sge, 1, 0, 0, 0), ND_NOT_SUPPORTED);  // no PostRead: the kit's default
    ND2_SGE over_inline{buf, 17, 0};
    EXPECT_EQ(qp->Write(nullptr, &over_inline, 1, 0, 0, ND_OP_FLAG_INLINE), ND_BUFFER_OVERFLOW);
    EXPECT_EQ(qp->posts, 0);
    EXPECT_EQ(qp->Write(nullptr, &sge, 1, 0, 0, ND_OP_FLAG_INLINE), ND_SUCCESS);
    EXPECT_EQ(qp->posts, 1);
}

// An adapter whose MaxReadSge is below its initiator SGEs (siw: one): a
// Read with more is ND_DATA_OVERRUN (R096); a Write may still use them all.
TEST_F(KitQueuePair, ReadSgesAreLimitedByTheAdaptersMaxReadSge) {
    TestQp *one = new TestQp(Args(), 1);
    ND2_SGE two[2] = {{buf, 8, 0}, {buf + 8, 8, 0}};
    EXPECT_EQ(one->Read(nullptr, two, 2, 0, 0, 0), ND_DATA_OVERRUN);
    EXPECT_EQ(one->Read(nullptr, two, 1, 0, 0, 0), ND_NOT_SUPPORTED);  // past the checks: the provider's default
    EXPECT_EQ(one->Write(nullptr, two, 2, 0, 0, 0), ND_SUCCESS);
    one->Release();
}

TEST_F(KitQueuePair, BindAndInvalidateFollowR104ToR107AndCountTheWindowR075) {
    auto *region = new TestRegion(file);
    auto *window = new TestWindow;
    auto *read_only = new TestRegion(file);
    OVERLAPPED reg{};
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, 0), ND_INVALID_PARAMETER_2) << "FindRegion: none yet";
    qp->region = region;
    qp->window = window;
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, 0), ND_ACCESS_VIOLATION) << "not registered";
    ASSERT_EQ(region->Register(buf, sizeof buf, ND_MR_FLAG_ALLOW_LOCAL_WRITE, &reg), ND_SUCCESS);
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, 0x80000000), ND_INVALID_PARAMETER_6);
    EXPECT_EQ(qp->Bind(nullptr, read_only, window, buf, 64, 0), ND_INVALID_PARAMETER_2);  // not this QP's
    EXPECT_EQ(qp->Bind(nullptr, region, region, buf, 64, 0), ND_INVALID_PARAMETER_3);
    qp->connected = false;
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, 0), ND_CONNECTION_INVALID);
    EXPECT_EQ(qp->Invalidate(nullptr, window, 0), ND_CONNECTION_INVALID);
    qp->connected = true;
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf + 200, 64, 0), ND_ACCESS_VIOLATION);  // past the region, R104
    qp->region = read_only;
    ASSERT_EQ(read_only->Register(buf, sizeof buf, 0, &reg), ND_SUCCESS);
    EXPECT_EQ(qp->Bind(nullptr, read_only, window, buf, 64, ND_OP_FLAG_ALLOW_WRITE), ND_ACCESS_VIOLATION);  // R105
    EXPECT_EQ(qp->posts, 0) << "a refused request reached the provider";
    qp->region = region;

    window->bind_result = ND_INSUFFICIENT_RESOURCES;  // the provider's binding fails: nothing stays counted
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, ND_OP_FLAG_ALLOW_WRITE), ND_INSUFFICIENT_RESOURCES);
    window->bind_result = ND_SUCCESS;
    EXPECT_EQ(qp->Invalidate(nullptr, window, 0), ND_INVALID_DEVICE_REQUEST) << "not bound (R107)";
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, ND_OP_FLAG_ALLOW_WRITE), ND_SUCCESS);
    EXPECT_EQ(qp->Bind(nullptr, region, window, buf, 64, 0), ND_INVALID_DEVICE_REQUEST) << "bound twice";
    OVERLAPPED ov{};
    EXPECT_EQ(region->Deregister(&ov), ND_DEVICE_BUSY) << "a window is bound (R075)";
    EXPECT_EQ(qp->Invalidate(nullptr, window, 0), ND_SUCCESS);
    EXPECT_EQ(qp->Invalidate(nullptr, window, 0), ND_INVALID_DEVICE_REQUEST);
    HRESULT hr = region->Deregister(&ov);
    if (hr == ND_PENDING) hr = region->GetOverlappedResult(&ov, TRUE);
    EXPECT_EQ(hr, ND_SUCCESS);
    window->Release();
    read_only->Release();
    region->Release();
}

}  // namespace
