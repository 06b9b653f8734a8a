// Test support: an opened loopback adapter with an overlapped file bound to
// a completion port, plus helpers to read the port with bounded waits.
#pragma once

#include <gtest/gtest.h>

#include "ndsupport.h"
#include "support/test_catalog.h"

namespace testing_support {

class LoopbackAdapterTest : public ::testing::Test {
protected:
    void SetUp() override {
        catalog.AddLoopback(10, 1);
        ASSERT_EQ(NdStartup(), S_OK);
        auto a = Ip("127.0.0.1");
        ASSERT_EQ(NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), reinterpret_cast<void **>(&adapter)), ND_SUCCESS);
        ASSERT_EQ(adapter->CreateOverlappedFile(&file), ND_SUCCESS);
        port = CreateIoCompletionPort(file, nullptr, kKey, 0);
        ASSERT_NE(port, nullptr);
    }
    void TearDown() override {
        if (adapter) adapter->Release();
        CloseHandle(file);
        CloseHandle(port);
        EXPECT_EQ(NdCleanup(), S_OK);
    }

    // The next packet within `ms`, or nullptr.
    OVERLAPPED *NextPacket(DWORD ms = 5000, DWORD *bytes = nullptr, BOOL *ok = nullptr) {
        DWORD n = 0;
        ULONG_PTR key = 0;
        OVERLAPPED *ov = nullptr;
        BOOL r = GetQueuedCompletionStatus(port, &n, &key, &ov, ms);
        if (ov) {
            EXPECT_EQ(key, kKey);
        }
        if (bytes) *bytes = n;
        if (ok) *ok = r;
        return ov;
    }
    bool PortIsEmpty() { return NextPacket(20) == nullptr; }

    IND2MemoryRegion *NewMr() {
        IND2MemoryRegion *mr = nullptr;
        EXPECT_EQ(adapter->CreateMemoryRegion(IID_IND2MemoryRegion, file, reinterpret_cast<void **>(&mr)), ND_SUCCESS);
        return mr;
    }
    IND2CompletionQueue *NewCq(ULONG depth) {
        IND2CompletionQueue *cq = nullptr;
        EXPECT_EQ(adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, depth, 0, 0,
                                                 reinterpret_cast<void **>(&cq)),
                  ND_SUCCESS);
        return cq;
    }

    static constexpr ULONG_PTR kKey = 0x1234;
    TempCatalog catalog;
    IND2Adapter *adapter = nullptr;
    HANDLE file = nullptr;
    HANDLE port = nullptr;
};

}  // namespace testing_support
