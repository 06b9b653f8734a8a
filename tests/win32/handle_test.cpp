// Bad handles never crash: every call fails with ERROR_INVALID_HANDLE.
#include <thread>
#include <vector>

#include "win32_test_util.h"

using namespace win32_test;

namespace {

// Valid objects the checks need, created before any handle under test is
// closed so that none of them can reuse the closed handle's value.
struct Helpers {
    Handle file{OpenNdCreateOverlappedFile()};
    Handle good{CreateEventA(nullptr, TRUE, TRUE, nullptr)};
};

// Runs every handle-taking call on h and checks each fails cleanly.
void ExpectRejectedEverywhere(HANDLE h, const Helpers &helpers) {
    SCOPED_TRACE(testing::Message() << "handle " << h);
    auto expect_invalid = [](const char *call) {
        EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE)) << call;
        SetLastError(0);
    };
    SetLastError(0);
    EXPECT_FALSE(SetEvent(h));
    expect_invalid("SetEvent");
    EXPECT_FALSE(ResetEvent(h));
    expect_invalid("ResetEvent");
    EXPECT_EQ(WaitForSingleObject(h, 0), WAIT_FAILED);
    expect_invalid("WaitForSingleObject");
    EXPECT_EQ(WaitForSingleObjectEx(h, 10, FALSE), WAIT_FAILED);
    expect_invalid("WaitForSingleObjectEx");
    EXPECT_FALSE(CloseHandle(h));
    expect_invalid("CloseHandle");
    EXPECT_EQ(OpenNdHandleFd(h), -1);
    expect_invalid("OpenNdHandleFd");
    DWORD bytes;
    ULONG_PTR key;
    OVERLAPPED *ov = reinterpret_cast<OVERLAPPED *>(1);
    EXPECT_FALSE(GetQueuedCompletionStatus(h, &bytes, &key, &ov, 0));
    EXPECT_EQ(ov, nullptr);
    expect_invalid("GetQueuedCompletionStatus");
    OVERLAPPED_ENTRY entries[2];
    ULONG n = 7;
    EXPECT_FALSE(GetQueuedCompletionStatusEx(h, entries, 2, &n, 0, FALSE));
    EXPECT_EQ(n, 0u);
    expect_invalid("GetQueuedCompletionStatusEx");
    EXPECT_FALSE(PostQueuedCompletionStatus(h, 0, 0, nullptr));
    expect_invalid("PostQueuedCompletionStatus");
    EXPECT_EQ(OpenNdAcquireCompletionTarget(h), nullptr);
    expect_invalid("OpenNdAcquireCompletionTarget");
    EXPECT_FALSE(SetFileCompletionNotificationModes(h, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS));
    expect_invalid("SetFileCompletionNotificationModes");
    if (h != INVALID_HANDLE_VALUE) {  // INVALID_HANDLE_VALUE as FileHandle means "new port"
        EXPECT_EQ(CreateIoCompletionPort(h, nullptr, 0, 0), nullptr);
        expect_invalid("CreateIoCompletionPort(file)");
    }
    if (h != nullptr) {  // NULL as ExistingCompletionPort means "new port"
        EXPECT_EQ(CreateIoCompletionPort(helpers.file, h, 0, 0), nullptr);
        expect_invalid("CreateIoCompletionPort(port)");
    }
    HANDLE hs[] = {helpers.good, h};
    EXPECT_EQ(WaitForMultipleObjects(2, hs, FALSE, 0), WAIT_FAILED);
    expect_invalid("WaitForMultipleObjects");
}

}  // namespace

TEST(Handles, NullInvalidAndGarbageAreRejected) {
    Helpers helpers;
    ExpectRejectedEverywhere(nullptr, helpers);
    ExpectRejectedEverywhere(INVALID_HANDLE_VALUE, helpers);
    ExpectRejectedEverywhere(reinterpret_cast<HANDLE>(0x12345678), helpers);
    ExpectRejectedEverywhere(reinterpret_cast<HANDLE>(0x2), helpers);
    ExpectRejectedEverywhere(reinterpret_cast<HANDLE>(0x7), helpers);
    ExpectRejectedEverywhere(reinterpret_cast<HANDLE>(static_cast<uintptr_t>(0xDEADBEEFCAFEBAB0ull)), helpers);
    ExpectRejectedEverywhere(reinterpret_cast<HANDLE>(static_cast<uintptr_t>(1) << 2), helpers);  // fd 0 (stdin), not ours
}

TEST(Handles, ClosedHandleIsRejected) {
    Helpers helpers;
    HANDLE ev = CreateEventA(nullptr, TRUE, FALSE, nullptr);
    ASSERT_NE(ev, nullptr);
    ASSERT_TRUE(CloseHandle(ev));
    ExpectRejectedEverywhere(ev, helpers);
    HANDLE port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0);
    ASSERT_TRUE(CloseHandle(port));
    ExpectRejectedEverywhere(port, helpers);
    HANDLE file = OpenNdCreateOverlappedFile();
    ASSERT_TRUE(CloseHandle(file));
    ExpectRejectedEverywhere(file, helpers);
}

TEST(Handles, ValuesHaveLowBitsClear) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    Handle file(OpenNdCreateOverlappedFile());
    for (HANDLE h : {ev.get(), port.get(), file.get()}) {
        ASSERT_NE(h, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(h) & 3, 0u);
        EXPECT_GE(OpenNdHandleFd(h), 0);
    }
}

TEST(Handles, TaggedHandleIsAcceptedEverywhere) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    EXPECT_TRUE(SetEvent(Tag(ev)));
    EXPECT_EQ(WaitForSingleObject(Tag(ev), 0), WAIT_OBJECT_0);
    EXPECT_TRUE(ResetEvent(Tag(ev)));
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_TIMEOUT);
    // Applications close the tagged hEvent of their OVERLAPPED.
    EXPECT_TRUE(CloseHandle(Tag(ev.release())));
}

TEST(Handles, WrongKindOfObjectIsRejected) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    Handle port(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
    SetLastError(0);
    EXPECT_FALSE(SetEvent(port));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    SetLastError(0);
    EXPECT_FALSE(PostQueuedCompletionStatus(ev, 0, 0, nullptr));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    SetLastError(0);
    EXPECT_EQ(CreateIoCompletionPort(ev, nullptr, 0, 0), nullptr);  // not an overlapped file
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    SetLastError(0);
    EXPECT_EQ(OpenNdAcquireCompletionTarget(port), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
}

// Handles are created and closed from several threads while others use them.
TEST(Handles, ConcurrentCreateUseClose) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([] {
            for (int i = 0; i < 2000; ++i) {
                HANDLE ev = CreateEventA(nullptr, FALSE, FALSE, nullptr);
                ASSERT_NE(ev, nullptr);
                ASSERT_TRUE(SetEvent(ev));
                ASSERT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
                ASSERT_TRUE(CloseHandle(ev));
            }
        });
    for (auto &t : threads) t.join();
}
