// NDK test support: callback recorders with bounded waits, and a connected
// pair of endpoints on one adapter (the software provider on 127.0.0.1).
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "ndkpi.h"

namespace ndk_test {

using Clock = std::chrono::steady_clock;
constexpr auto kWait = std::chrono::seconds(10);

// Counts calls of one callback; remembers the last status and thread.
struct Completion {
    std::mutex mu;
    std::condition_variable cv;
    int count = 0;
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER *object = nullptr;
    std::thread::id thread;
    int sleep_ms = 0;  // the callback takes this long (after counting itself)
    int returned = 0;  // callbacks that have returned

    // A waiter may destroy the Completion as soon as it sees the count: with
    // sleep_ms == 0 nothing touches it after the notification.
    void Hit(NTSTATUS s) {
        const int sleep = sleep_ms;
        {
            std::lock_guard<std::mutex> lock(mu);
            ++count;
            if (!sleep) ++returned;
            status = s;
            thread = std::this_thread::get_id();
            cv.notify_all();
            if (!sleep) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(sleep));
        std::lock_guard<std::mutex> lock(mu);
        ++returned;
    }
    int Returned() {
        std::lock_guard<std::mutex> lock(mu);
        return returned;
    }
    static VOID Request(PVOID context, NTSTATUS s) { static_cast<Completion *>(context)->Hit(s); }
    static VOID Close(PVOID context) { static_cast<Completion *>(context)->Hit(STATUS_SUCCESS); }
    static VOID Event(PVOID context) { static_cast<Completion *>(context)->Hit(STATUS_SUCCESS); }
    static VOID Notify(PVOID context, NTSTATUS s) { static_cast<Completion *>(context)->Hit(s); }
    static VOID Create(PVOID context, NTSTATUS s, NDK_OBJECT_HEADER *o) {
        static_cast<Completion *>(context)->object = o;
        static_cast<Completion *>(context)->Hit(s);
    }
    // Waits (bounded) until the callback ran at least n times.
    bool Wait(int n = 1, std::chrono::milliseconds timeout = kWait) {
        std::unique_lock<std::mutex> lock(mu);
        return cv.wait_for(lock, timeout, [&] { return count >= n; });
    }
    int Count() {
        std::lock_guard<std::mutex> lock(mu);
        return count;
    }
};

// A request's final status: the inline one, or the callback's if pending.
inline NTSTATUS Finish(NTSTATUS inline_status, Completion &c) {
    if (inline_status != STATUS_PENDING) return inline_status;
    if (!c.Wait()) return STATUS_IO_TIMEOUT;
    return c.status;
}

// 127.0.0.1, or the IPv4 address in OPENND_NDK_TEST_ADDRESS (an RDMA
// device's, to run these tests over another provider: tests/verbs/vm_interop.sh).
inline sockaddr_in Loopback(uint16_t port = 0) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (const char *at = std::getenv("OPENND_NDK_TEST_ADDRESS")) inet_pton(AF_INET, at, &a.sin_addr);
    return a;
}
inline PSOCKADDR Sa(sockaddr_in *a) { return reinterpret_cast<PSOCKADDR>(a); }

inline NTSTATUS OpenLoopback(NDK_ADAPTER **adapter, NDK_VERSION v = {1, 2}) {
    sockaddr_in a = Loopback();
    return NdkOpenAdapterByAddress(v, Sa(&a), sizeof a, adapter);
}

// Closes an object; with c == nullptr also waits for a pending close.
// Returns the inline status (STATUS_SUCCESS or STATUS_PENDING).
// A close that may legitimately be pending (a request's callback may still be
// returning on the adapter thread); Close waited for it.
inline bool Closes(NTSTATUS s) { return s == STATUS_SUCCESS || s == STATUS_PENDING; }

NTSTATUS Close(NDK_CQ *o, Completion *c = nullptr);
NTSTATUS Close(NDK_PD *o, Completion *c = nullptr);
NTSTATUS Close(NDK_MR *o, Completion *c = nullptr);
NTSTATUS Close(NDK_MW *o, Completion *c = nullptr);
NTSTATUS Close(NDK_SRQ *o, Completion *c = nullptr);
NTSTATUS Close(NDK_QP *o, Completion *c = nullptr);
NTSTATUS Close(NDK_CONNECTOR *o, Completion *c = nullptr);
NTSTATUS Close(NDK_LISTENER *o, Completion *c = nullptr);
NTSTATUS Close(NDK_SHARED_ENDPOINT *o, Completion *c = nullptr);
NTSTATUS Close(NDK_ADAPTER *o, Completion *c = nullptr);

// A buffer registered with an MR (remote read/write allowed).
struct Region {
    std::vector<char> bytes;
    NDK_MR *mr = nullptr;
    MDL mdl{};
    bool Register(NDK_PD *pd, size_t size, ULONG flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                                          NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                                          NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE Sge(size_t offset = 0, size_t length = SIZE_MAX);
    UINT64 Address(size_t offset = 0) { return reinterpret_cast<UINT64>(bytes.data() + offset); }
    void Release();
};

// One side of a connection: CQ (with a notification recorder), PD, QP, region.
struct Side {
    NDK_CQ *cq = nullptr;
    NDK_PD *pd = nullptr;
    NDK_QP *qp = nullptr;
    NDK_CONNECTOR *connector = nullptr;
    Completion notified;
    Completion disconnected;
    Region region;
    bool Create(NDK_ADAPTER *adapter, size_t buffer = 1 << 20, ULONG depth = 64);
    void Release();
    // The next completion (bounded polling); Status STATUS_IO_TIMEOUT if none.
    NDK_RESULT_EX Next(std::chrono::milliseconds timeout = kWait);
    // Nothing reaches the CQ for a while (after posts that were refused, and
    // so must not complete): a failed expectation if something does.
    void ExpectQuiet(std::chrono::milliseconds settle = std::chrono::milliseconds(100));
    // A new window bound over the region's first `length` bytes, remote
    // write (the Bind's completion taken); nullptr after a test failure.
    NDK_MW *BindWindow(size_t length);
};

// Listener + two connected sides on one adapter.
struct Pair {
    NDK_ADAPTER *adapter = nullptr;
    NDK_LISTENER *listener = nullptr;
    Side server, client;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<NDK_CONNECTOR *> incoming;  // connectors from connect events
    uint16_t port = 0;

    static VOID OnConnect(PVOID context, NDK_CONNECTOR *connector);
    NDK_CONNECTOR *NextIncoming(std::chrono::milliseconds timeout = kWait);
    bool Open();     // adapter, listener, both sides
    bool Connect();  // client Connect/CompleteConnect, server Accept
    // The same for two other sides of this adapter, to the listener on
    // `port` (whose connect events come here), from `endpoint` if given.
    bool Connect(Side &client, Side &server, uint16_t port, NDK_SHARED_ENDPOINT *endpoint = nullptr);
    void Release();  // closes everything, adapter last
};

// A fixture with a connected Pair.
class ConnectedPair : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(pair_.Open());
        ASSERT_TRUE(pair_.Connect());
    }
    void TearDown() override { pair_.Release(); }
    Pair pair_;
};

}  // namespace ndk_test
