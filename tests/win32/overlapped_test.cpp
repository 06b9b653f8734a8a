// Overlapped files: association, OpenNdCompleteOverlapped delivery rules,
// completion targets outliving the handle, GetOverlappedResult.
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <thread>

#include "ndstatus.h"
#include "win32_test_util.h"

using namespace win32_test;

namespace {

// A port with one overlapped file bound to it under key 0x55.
struct Fixture : testing::Test {
    void SetUp() override {
        port.reset(CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 0));
        file.reset(OpenNdCreateOverlappedFile());
        ASSERT_NE(port.get(), nullptr);
        ASSERT_NE(file.get(), nullptr);
        ASSERT_EQ(CreateIoCompletionPort(file, port, 0x55, 0), port.get());
        target = OpenNdAcquireCompletionTarget(file);
        ASSERT_NE(target, nullptr);
    }
    void TearDown() override { OpenNdReleaseCompletionTarget(target); }

    // One packet within a short bounded wait, or nullptr.
    OVERLAPPED *Dequeue(DWORD ms = 0, BOOL *ok = nullptr, DWORD *bytes = nullptr) {
        DWORD b = 0;
        ULONG_PTR key = 0;
        OVERLAPPED *ov = nullptr;
        BOOL r = GetQueuedCompletionStatus(port, &b, &key, &ov, ms);
        if (ok) *ok = r;
        if (bytes) *bytes = b;
        if (ov) {
            EXPECT_EQ(key, 0x55u);
        }
        return ov;
    }

    Handle port, file;
    OpenNdCompletionTarget *target = nullptr;
};

using Overlapped = Fixture;

}  // namespace

TEST_F(Overlapped, WithoutEventPostsExactlyOnePacket) {
    OVERLAPPED ov = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 4096);
    EXPECT_EQ(static_cast<DWORD>(ov.Internal), 0u);
    EXPECT_EQ(ov.InternalHigh, 4096u);
    BOOL ok = FALSE;
    DWORD bytes = 0;
    EXPECT_EQ(Dequeue(1000, &ok, &bytes), &ov);
    EXPECT_TRUE(ok);
    EXPECT_EQ(bytes, 4096u);
    EXPECT_EQ(Dequeue(0), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(WAIT_TIMEOUT));
}

TEST_F(Overlapped, WithEventSetsEventAndPostsPacket) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    OVERLAPPED ov = PendingOverlapped(ev);
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 1);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(Dequeue(1000), &ov);
    EXPECT_EQ(Dequeue(0), nullptr);
}

TEST_F(Overlapped, WithTaggedEventSetsEventOnly) {
    Handle ev(CreateEventA(nullptr, FALSE, FALSE, nullptr));
    OVERLAPPED ov = PendingOverlapped(Tag(ev));
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 2);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(Dequeue(50), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(WAIT_TIMEOUT));
    EXPECT_EQ(ov.InternalHigh, 2u);
    EXPECT_TRUE(HasOverlappedIoCompleted(&ov));
}

TEST_F(Overlapped, ErrorStatusFailsTheDequeueWithTheMappedError) {
    const struct {
        HRESULT status;
        DWORD error;
    } cases[] = {
        {ND_CANCELED, ERROR_OPERATION_ABORTED},
        {ND_IO_TIMEOUT, ERROR_SEM_TIMEOUT},
        {ND_CONNECTION_REFUSED, ERROR_CONNECTION_REFUSED},
        {ND_CONNECTION_ABORTED, ERROR_CONNECTION_ABORTED},
        {ND_BUFFER_OVERFLOW, ERROR_MORE_DATA},
        {ND_UNSUCCESSFUL, ERROR_GEN_FAILURE},
        {ND_INVALID_PARAMETER, ERROR_INVALID_PARAMETER},
        {ND_INVALID_PARAMETER_3, ERROR_INVALID_PARAMETER},
        {ND_ACCESS_VIOLATION, ERROR_NOACCESS},
        {ND_CONNECTION_INVALID, ERROR_CONNECTION_INVALID},
        {ND_INSUFFICIENT_RESOURCES, ERROR_NO_SYSTEM_RESOURCES},
        {ND_DEVICE_BUSY, ERROR_BUSY},
        {ND_SHARING_VIOLATION, ERROR_SHARING_VIOLATION},
        {static_cast<HRESULT>(0xC0000238), ERROR_ADDRESS_ALREADY_ASSOCIATED},
        {static_cast<HRESULT>(0xC000020C), ERROR_NETNAME_DELETED},
        {ND_HOST_UNREACHABLE, ERROR_HOST_UNREACHABLE},
        {static_cast<HRESULT>(0xC0000999), ERROR_MR_MID_NOT_FOUND},  // no mapping
    };
    for (const auto &c : cases) {
        OVERLAPPED ov = PendingOverlapped();
        OpenNdCompleteOverlapped(target, &ov, c.status, 8);
        EXPECT_EQ(ov.Internal, static_cast<ULONG_PTR>(static_cast<uint32_t>(c.status)));
        SetLastError(0);
        BOOL ok = TRUE;
        DWORD bytes = 0;
        EXPECT_EQ(Dequeue(1000, &ok, &bytes), &ov);  // lpOverlapped set: a failed request, not a failed wait
        EXPECT_FALSE(ok);
        EXPECT_EQ(bytes, 8u);
        EXPECT_EQ(GetLastError(), c.error) << std::hex << c.status;
    }
    // A success status other than 0 is still success.
    OVERLAPPED ov = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &ov, ND_TIMEOUT, 0);
    BOOL ok = FALSE;
    EXPECT_EQ(Dequeue(1000, &ok), &ov);
    EXPECT_TRUE(ok);
}

TEST_F(Overlapped, GetExReportsEachStatus) {
    OVERLAPPED a = PendingOverlapped(), b = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &a, ND_CANCELED, 0);
    OpenNdCompleteOverlapped(target, &b, ND_SUCCESS, 5);
    OVERLAPPED_ENTRY e[4];
    ULONG n = 0;
    ASSERT_TRUE(GetQueuedCompletionStatusEx(port, e, 4, &n, 1000, FALSE));
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(e[0].lpOverlapped, &a);
    EXPECT_EQ(e[0].Internal, static_cast<ULONG_PTR>(static_cast<uint32_t>(ND_CANCELED)));
    EXPECT_EQ(e[0].lpCompletionKey, 0x55u);
    EXPECT_EQ(e[1].lpOverlapped, &b);
    EXPECT_EQ(e[1].Internal, 0u);
    EXPECT_EQ(e[1].dwNumberOfBytesTransferred, 5u);
}

TEST_F(Overlapped, TargetOutlivesTheClosedHandle) {
    HANDLE h = file.release();
    ASSERT_TRUE(CloseHandle(h));
    EXPECT_EQ(OpenNdHandleFd(h), -1);
    EXPECT_EQ(OpenNdAcquireCompletionTarget(h), nullptr);
    OVERLAPPED ov = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 3);
    EXPECT_EQ(Dequeue(1000), &ov);
    // Once the port is closed too, completions are dropped quietly.
    port.reset();
    OVERLAPPED ov2 = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &ov2, ND_SUCCESS, 4);
    EXPECT_EQ(ov2.InternalHigh, 4u);
    EXPECT_TRUE(HasOverlappedIoCompleted(&ov2));
}

TEST_F(Overlapped, FileDescriptorBecomesReadableOnCompletion) {
    int fd = OpenNdHandleFd(file);
    ASSERT_GE(fd, 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
    epoll_event out;
    EXPECT_EQ(epoll_wait(ep, &out, 1, 0), 0);
    OVERLAPPED ov = PendingOverlapped();
    std::thread completer([&] { OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 0); });
    EXPECT_EQ(epoll_wait(ep, &out, 1, 10000), 1);
    completer.join();
    uint64_t count = 0;
    EXPECT_EQ(read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));  // the application resets it
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(epoll_wait(ep, &out, 1, 0), 0);
    close(ep);
    EXPECT_EQ(Dequeue(1000), &ov);
}

TEST_F(Overlapped, EventDescriptorBecomesReadableViaEpoll) {
    Handle event(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, OpenNdHandleFd(event), &ev), 0);
    epoll_event out;
    EXPECT_EQ(epoll_wait(ep, &out, 1, 0), 0);
    OVERLAPPED ov = PendingOverlapped(Tag(event));
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 0);
    EXPECT_EQ(epoll_wait(ep, &out, 1, 10000), 1);
    close(ep);
}

TEST(OverlappedAssociation, CreateIoCompletionPortRules) {
    Handle file(OpenNdCreateOverlappedFile());
    Handle port(CreateIoCompletionPort(file, nullptr, 9, 0));  // new port with the file bound
    ASSERT_NE(port.get(), nullptr);
    SetLastError(0);
    EXPECT_EQ(CreateIoCompletionPort(file, port, 9, 0), nullptr);  // already associated
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    SetLastError(0);
    EXPECT_EQ(CreateIoCompletionPort(file, nullptr, 9, 0), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    SetLastError(0);
    EXPECT_EQ(CreateIoCompletionPort(INVALID_HANDLE_VALUE, port, 0, 0), nullptr);
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_PARAMETER));

    OpenNdCompletionTarget *target = OpenNdAcquireCompletionTarget(file);
    ASSERT_NE(target, nullptr);
    OVERLAPPED ov = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 0);
    OpenNdReleaseCompletionTarget(target);
    DWORD bytes;
    ULONG_PTR key = 0;
    OVERLAPPED *got;
    ASSERT_TRUE(GetQueuedCompletionStatus(port, &bytes, &key, &got, 1000));
    EXPECT_EQ(got, &ov);
    EXPECT_EQ(key, 9u);
}

TEST(OverlappedAssociation, UnboundFileOnlySignals) {
    Handle file(OpenNdCreateOverlappedFile());
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    OpenNdCompletionTarget *target = OpenNdAcquireCompletionTarget(Tag(file));
    ASSERT_NE(target, nullptr);
    OVERLAPPED ov = PendingOverlapped(ev);
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 6);
    OpenNdReleaseCompletionTarget(target);
    EXPECT_EQ(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
    EXPECT_EQ(WaitForSingleObject(file, 0), WAIT_OBJECT_0);
}

TEST(OverlappedAssociation, NotificationModes) {
    Handle file(OpenNdCreateOverlappedFile());
    EXPECT_TRUE(SetFileCompletionNotificationModes(file, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS));
    EXPECT_TRUE(SetFileCompletionNotificationModes(
        file, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS | FILE_SKIP_SET_EVENT_ON_HANDLE));
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    SetLastError(0);
    EXPECT_FALSE(SetFileCompletionNotificationModes(ev, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_INVALID_HANDLE));
}

TEST_F(Overlapped, GetOverlappedResultPendingAndComplete) {
    OVERLAPPED ov = PendingOverlapped();
    DWORD bytes = 77;
    SetLastError(0);
    EXPECT_FALSE(GetOverlappedResult(file, &ov, &bytes, FALSE));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_IO_INCOMPLETE));
    OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 12);
    EXPECT_TRUE(GetOverlappedResult(file, &ov, &bytes, FALSE));
    EXPECT_EQ(bytes, 12u);
    EXPECT_TRUE(GetOverlappedResult(file, &ov, &bytes, TRUE));

    OVERLAPPED failed = PendingOverlapped();
    OpenNdCompleteOverlapped(target, &failed, ND_CANCELED, 0);
    SetLastError(0);
    EXPECT_FALSE(GetOverlappedResult(file, &failed, &bytes, TRUE));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_OPERATION_ABORTED));
}

TEST_F(Overlapped, GetOverlappedResultWaitsOnTheEvent) {
    Handle ev(CreateEventA(nullptr, TRUE, FALSE, nullptr));
    OVERLAPPED ov = PendingOverlapped(Tag(ev));
    std::thread completer([&] { OpenNdCompleteOverlapped(target, &ov, ND_SUCCESS, 21); });
    DWORD bytes = 0;
    EXPECT_TRUE(GetOverlappedResult(file, &ov, &bytes, TRUE));
    EXPECT_EQ(bytes, 21u);
    completer.join();
}

TEST_F(Overlapped, GetOverlappedResultWaitsWithoutAnEvent) {
    OVERLAPPED ov = PendingOverlapped();
    std::thread completer([&] { OpenNdCompleteOverlapped(target, &ov, ND_IO_TIMEOUT, 0); });
    DWORD bytes = 1;
    SetLastError(0);
    EXPECT_FALSE(GetOverlappedResult(nullptr, &ov, &bytes, TRUE));
    EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_SEM_TIMEOUT));
    EXPECT_EQ(bytes, 0u);
    completer.join();
    EXPECT_EQ(Dequeue(1000), &ov);
}
