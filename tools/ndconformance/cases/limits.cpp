// Adapter limits: Query itself, the advertised values, CQ, QP and SRQ
// creation parameters and notification affinity. Queue depths, SGE counts,
// transfer length, inline size, private data and read limits, each at the
// limit (works) and one past it (the documented error): limits_one_past.cpp.
#include <pthread.h>
#include <sched.h>

#include "suite.h"

namespace ndc {
namespace {


TEST_F(Limits, QueryBufferSizingR033R034R035) {
    ULONG cb = 0;
    ASSERT_ND(ND_BUFFER_OVERFLOW, node.adapter->Query(nullptr, &cb));
    EXPECT_GE(cb, sizeof(ND2_ADAPTER_INFO));
    // Exactly sizeof(ND2_ADAPTER_INFO) always works, with either
    // InfoVersion the SDK uses (D02).
    for (ULONG version : {ULONG(ND_VERSION_2), ULONG(1)}) {
        ND2_ADAPTER_INFO info{};
        info.InfoVersion = version;
        ULONG len = sizeof info;
        EXPECT_ND(ND_SUCCESS, node.adapter->Query(&info, &len)) << "InfoVersion " << version;
        EXPECT_EQ(len, sizeof info);
        EXPECT_NE(info.MaxCompletionQueueDepth, 0u);
    }
    // Too small: overflow, buffer untouched, size reported.
    std::vector<uint8_t> small(sizeof(ND2_ADAPTER_INFO) - 1, 0xEE);
    reinterpret_cast<ND2_ADAPTER_INFO *>(small.data())->InfoVersion = ND_VERSION_2;
    std::vector<uint8_t> before = small;
    ULONG len = static_cast<ULONG>(small.size());
    EXPECT_ND(ND_BUFFER_OVERFLOW, node.adapter->Query(reinterpret_cast<ND2_ADAPTER_INFO *>(small.data()), &len));
    EXPECT_GE(len, sizeof(ND2_ADAPTER_INFO));
    EXPECT_TRUE(small == before) << "Query modified a buffer that was too small";
}

TEST_F(Limits, AdvertisedValuesAreUsableR036) {
    const ND2_ADAPTER_INFO &i = node.info;
    EXPECT_LE(i.MaxReadSge, i.MaxInitiatorSge) << "R036";
    EXPECT_GE(i.MaxTransferLength, (32u << 20) - 1024) << "COMPAT: MaxTransferLength of at least 32 MiB - 1 KiB";
    EXPECT_GT(i.MaxInitiatorSge, 0u);
    EXPECT_GT(i.MaxReceiveSge, 0u);
    EXPECT_GT(i.MaxReceiveQueueDepth, 0u);
    EXPECT_GT(i.MaxInitiatorQueueDepth, 0u);
    EXPECT_GT(i.MaxCompletionQueueDepth, 0u);
    EXPECT_GT(i.MaxRegistrationSize, 0u);
    EXPECT_LE(i.MaxInlineDataSize, i.MaxTransferLength);
}

TEST_F(Limits, CompletionQueueDepthR041) {
    Ref<IND2CompletionQueue> cq;
    ULONG max = node.info.MaxCompletionQueueDepth;
    EXPECT_ND(ND_INVALID_PARAMETER_3,
              node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 0, 0, 0, cq.put_void()));
    EXPECT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 1, 0, 0, cq.put_void()));
    EXPECT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, max, 0, 0, cq.put_void()))
        << "at MaxCompletionQueueDepth (D06: inclusive)";
    if (max < 0xFFFFFFFFu) {
        EXPECT_ND(ND_INVALID_PARAMETER_3,
                  node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, max + 1, 0, 0, cq.put_void()));
    }
}

// COMPAT: a QP may be deeper than its CQ.
TEST_F(Limits, QueuePairDeeperThanItsCqIsLegal) {
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 2, 0, 0, cq.put_void()));
    Ref<IND2QueuePair> qp;
    EXPECT_ND(ND_SUCCESS,
              node.adapter->CreateQueuePair(IID_IND2QueuePair, cq.get(), cq.get(), nullptr, 64, 64, 1, 1, 0, qp.put_void()));
}

TEST_F(Limits, CreateQueuePairParametersR044) {
    const ND2_ADAPTER_INFO &i = node.info;
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 64, 0, 0, cq.put_void()));
    Ref<IND2Listener> not_a_cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, not_a_cq.put_void()));
    Ref<IND2QueuePair> qp;
    auto create = [&](IUnknown *rcq, IUnknown *icq, ULONG rd, ULONG id, ULONG rs, ULONG is, ULONG in) {
        return node.adapter->CreateQueuePair(IID_IND2QueuePair, rcq, icq, nullptr, rd, id, rs, is, in, qp.put_void());
    };
    // Everything at the limit at once.
    EXPECT_ND(ND_SUCCESS, create(cq.get(), cq.get(), i.MaxReceiveQueueDepth, i.MaxInitiatorQueueDepth,
                                 i.MaxReceiveSge, i.MaxInitiatorSge, i.MaxInlineDataSize));
    EXPECT_ND(ND_INVALID_PARAMETER_2, create(not_a_cq.get(), cq.get(), 4, 4, 1, 1, 0)) << "receive CQ not a CQ";
    EXPECT_ND(ND_INVALID_PARAMETER_3, create(cq.get(), not_a_cq.get(), 4, 4, 1, 1, 0)) << "initiator CQ not a CQ";
    EXPECT_ND(ND_INVALID_PARAMETER_5, create(cq.get(), cq.get(), i.MaxReceiveQueueDepth + 1, 4, 1, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_6, create(cq.get(), cq.get(), 4, i.MaxInitiatorQueueDepth + 1, 1, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_7, create(cq.get(), cq.get(), 4, 4, i.MaxReceiveSge + 1, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_8, create(cq.get(), cq.get(), 4, 4, 1, i.MaxInitiatorSge + 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_9, create(cq.get(), cq.get(), 4, 4, 1, 1, i.MaxInlineDataSize + 1));
}

TEST_F(Limits, SharedReceiveQueueSupportR037) {
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 64, 0, 0, cq.put_void()));
    Ref<IND2SharedReceiveQueue> srq;
    HRESULT hr = node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 16, 1, 0, 0, 0,
                                                        srq.put_void());
    if (node.info.MaxSharedReceiveQueueDepth == 0) {
        EXPECT_ND(ND_NOT_SUPPORTED, hr) << "MaxSharedReceiveQueueDepth is 0";
        Ref<IND2QueuePair> qp;
        EXPECT_ND(ND_NOT_SUPPORTED, node.adapter->CreateQueuePairWithSrq(IID_IND2QueuePair, cq.get(), cq.get(),
                                                                         srq.get(), nullptr, 4, 1, 0, qp.put_void()));
        return;
    }
    // Advertised: it must work.
    ASSERT_ND(ND_SUCCESS, hr);
    Ref<IND2QueuePair> qp;
    EXPECT_ND(ND_SUCCESS, node.adapter->CreateQueuePairWithSrq(IID_IND2QueuePair, cq.get(), cq.get(), srq.get(),
                                                               nullptr, 4, 1, 0, qp.put_void()));
}

TEST_F(Limits, CreateQueuePairWithSrqParametersR045) {
    const ND2_ADAPTER_INFO &i = node.info;
    if (i.MaxSharedReceiveQueueDepth == 0) GTEST_SKIP() << "skipped: MaxSharedReceiveQueueDepth is 0 (no SRQ support)";
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 64, 0, 0, cq.put_void()));
    Ref<IND2SharedReceiveQueue> srq;
    ASSERT_ND(ND_SUCCESS,
              node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 16, 1, 0, 0, 0, srq.put_void()));
    Ref<IND2Listener> wrong;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, wrong.put_void()));
    Ref<IND2QueuePair> qp;
    auto create = [&](IUnknown *rcq, IUnknown *icq, IUnknown *s, ULONG id, ULONG is, ULONG in) {
        return node.adapter->CreateQueuePairWithSrq(IID_IND2QueuePair, rcq, icq, s, nullptr, id, is, in, qp.put_void());
    };
    EXPECT_ND(ND_SUCCESS, create(cq.get(), cq.get(), srq.get(), i.MaxInitiatorQueueDepth, i.MaxInitiatorSge,
                                 i.MaxInlineDataSize));
    EXPECT_ND(ND_INVALID_PARAMETER_2, create(wrong.get(), cq.get(), srq.get(), 4, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_3, create(cq.get(), wrong.get(), srq.get(), 4, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_4, create(cq.get(), cq.get(), wrong.get(), 4, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_6, create(cq.get(), cq.get(), srq.get(), i.MaxInitiatorQueueDepth + 1, 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_7, create(cq.get(), cq.get(), srq.get(), 4, i.MaxInitiatorSge + 1, 0));
    EXPECT_ND(ND_INVALID_PARAMETER_8, create(cq.get(), cq.get(), srq.get(), 4, 1, i.MaxInlineDataSize + 1));
}

TEST_F(Limits, CreateSharedReceiveQueueParametersR049) {
    const ND2_ADAPTER_INFO &i = node.info;
    if (i.MaxSharedReceiveQueueDepth == 0) GTEST_SKIP() << "skipped: MaxSharedReceiveQueueDepth is 0 (no SRQ support)";
    Ref<IND2SharedReceiveQueue> srq;
    auto create = [&](ULONG depth, ULONG sge) {
        return node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, depth, sge, 0, 0, 0,
                                                      srq.put_void());
    };
    EXPECT_ND(ND_SUCCESS, create(i.MaxSharedReceiveQueueDepth, i.MaxReceiveSge));
    EXPECT_ND(ND_INVALID_PARAMETER_3, create(i.MaxSharedReceiveQueueDepth + 1, 1));
    EXPECT_ND(ND_INVALID_PARAMETER_4, create(16, i.MaxReceiveSge + 1));
}

uint64_t ProcessCpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    uint64_t mask = 0;
    for (int c = 0; c < 64; ++c)
        if (CPU_ISSET(c, &set)) mask |= uint64_t(1) << c;
    return mask;
}

TEST_F(Limits, AffinityThatCannotBeHonouredIsIgnoredR042) {
    Ref<IND2CompletionQueue> cq;
    EXPECT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0,
                                                              KAFFINITY(1) << 63, cq.put_void()))
        << "affinity naming a processor that does not exist";
    EXPECT_ND(ND_SUCCESS,
              node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 7, 1, cq.put_void()))
        << "processor group 7 on a system without groups";
    if (node.info.MaxSharedReceiveQueueDepth) {
        Ref<IND2SharedReceiveQueue> srq;
        EXPECT_ND(ND_SUCCESS, node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 16, 1, 0,
                                                                     0, KAFFINITY(1) << 63, srq.put_void()));
    }
}

// R069: the effective affinity is reported (group 0 without groups), and
// R043: a requested set is honoured.
TEST_F(Limits, NotifyAffinityReportedR069R043) {
    uint64_t cpus = ProcessCpus();
    ASSERT_NE(cpus, 0u);
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.put_void()));
    USHORT group = 9;
    KAFFINITY mask = 0;
    HRESULT hr = cq->GetNotifyAffinity(&group, &mask);
    NDC_SKIP_UNSUPPORTED(hr, "IND2CompletionQueue::GetNotifyAffinity");
    ASSERT_ND(ND_SUCCESS, hr);
    EXPECT_EQ(group, 0) << "no processor groups on Linux";
    EXPECT_NE(mask, 0u);
    EXPECT_EQ(mask & ~cpus, 0u) << "reported processors outside the process's set";
    // A requested processor is honoured.
    uint64_t last = uint64_t(1) << (63 - __builtin_clzll(cpus));
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, last, cq.put_void()));
    ASSERT_ND(ND_SUCCESS, cq->GetNotifyAffinity(&group, &mask));
    EXPECT_EQ(mask, last) << "the requested affinity was not used";
    if (node.info.MaxSharedReceiveQueueDepth) {
        Ref<IND2SharedReceiveQueue> srq;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 16, 1, 0,
                                                                     0, last, srq.put_void()));
        hr = srq->GetNotifyAffinity(&group, &mask);
        NDC_SKIP_UNSUPPORTED(hr, "IND2SharedReceiveQueue::GetNotifyAffinity");
        EXPECT_ND(ND_SUCCESS, hr);
        EXPECT_EQ(group, 0);
        EXPECT_EQ(mask, last);
    }
}

// R043 (SHOULD): with no requested affinity, Notify processing follows the
// calling thread's affinity before the process's.
TEST_F(Limits, NotifyAffinityFollowsCallingThreadR043) {
    uint64_t cpus = ProcessCpus();
    Ref<IND2CompletionQueue> cq;
    USHORT group = 0;
    KAFFINITY mask = 0;
    uint64_t first = cpus & (~cpus + 1);
    cpu_set_t one, saved;
    CPU_ZERO(&one);
    CPU_SET(__builtin_ctzll(first), &one);
    pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    HRESULT hr2 = node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.put_void());
    pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    ASSERT_ND(ND_SUCCESS, hr2);
    ASSERT_ND(ND_SUCCESS, cq->GetNotifyAffinity(&group, &mask));
    EXPECT_EQ(mask & ~first, 0u) << "with no requested affinity, the calling thread's (CPU "
                                 << __builtin_ctzll(first) << ") should be used; got mask 0x" << std::hex << mask;
}

}  // namespace
}  // namespace ndc
