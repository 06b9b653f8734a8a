// ndperf's ND objects: the adapter (shared by every connection of one side),
// the listener, and the endpoint of one connection: CQ bound to a completion
// port (for the blocking mode), QP, connector; registered buffers and
// bounded waits.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/com_ptr.h"
#include "common/connection.h"
#include "common/node.h"
#include "common/region.h"
#include "ndsupport.h"
#include "opennd/ip_address.h"
#include "perf.h"

namespace ndperf {

// Throws std::runtime_error("<what> failed: <status>") if hr failed.
void Check(HRESULT hr, const char *what);
void Check(const opennd::client::Status &s);
// The bound on every setup and teardown step.
constexpr uint64_t kSetupMs = 30000;
inline opennd::client::Deadline SetupBound() { return opennd::client::Deadline::After(kSetupMs); }
// Waits (spinning, at most kSetupMs) for an operation that returned hr:
// for the loops that time Register and Connect themselves (mr,
// connect-rate), where a sleep or an event would be measured too.
HRESULT Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr);

class Adapter {
public:
    ~Adapter();
    // The adapter for `local`: through the catalog entry named `provider`,
    // or, if empty, the one NdOpenAdapter picks.
    void Open(const opennd::net::IpAddress &local, const std::string &provider);
    IND2Adapter *get() { return adapter_.get(); }
    const ND2_ADAPTER_INFO &info() const { return info_; }
    // What the provider says about how it moves data (IOpenNdAdapterNotes),
    // one line; empty if it says nothing.
    std::string DataPath() const;
    // Warns if --transport asked for a path the provider's notes do not
    // mention (tcp: a provider that ignores OPENND_SOFT_TRANSPORT would
    // measure shared memory; the rows carry the notes too).
    void CheckTransport(const std::string &transport) const;

private:
    opennd::client::ComPtr<IND2Adapter> adapter_;
    ND2_ADAPTER_INFO info_{};
    std::string notes_;
};

// Page-aligned, as RDMA buffers usually are and as ndbaseline's mappings
// are: a buffer off a page boundary has every page the kernel copies (cross-
// memory attach, sockets) split in two, and would not measure the same copy.
struct Region {
    struct Unmap {
        size_t mapped;
        void operator()(char *p) const;
    };
    std::unique_ptr<char, Unmap> bytes;
    size_t length = 0;
    opennd::client::Region mr;  // after bytes: deregistered before they are unmapped
    Region() = default;
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;
    void Reset();  // deregisters and frees
    char *data() { return bytes.get(); }
    size_t size() const { return length; }
    void Allocate(size_t n);  // zero-filled, page-aligned
    // Read once after Register, as perftest keeps its lkey in the prepared
    // work request: a virtual call per post is the benchmark's cost, not
    // the transport's.
    UINT32 local_token() const { return local_token_; }
    UINT32 local_token_ = 0;
    UINT32 remote_token() const { return mr->GetRemoteToken(); }
};

// A listener with its own overlapped file and completion port; connectors
// made with NewConnector report there too (the connect-rate server waits on it).
class Listener {
public:
    ~Listener();
    uint16_t Listen(std::shared_ptr<Adapter> adapter, const opennd::net::IpAddress &local, uint16_t port);
    IND2Connector *NewConnector();
    // The next connection request into `c` and its Hello; false after
    // `timeout_ms` without one (0: wait for ever).
    bool Next(IND2Connector *c, Hello *hello, uint32_t timeout_ms);
    HANDLE file() { return file_; }
    HANDLE port() { return port_; }
    IND2Listener *get() { return listener_.get(); }

private:
    std::shared_ptr<Adapter> adapter_;
    HANDLE file_ = nullptr, port_ = nullptr;
    opennd::client::Listener listener_;  // last: released before the file and port close
};

class Endpoint {
public:
    ~Endpoint();
    // `connector`: one to adopt (a server's, holding a request), else a new one.
    void Open(std::shared_ptr<Adapter> adapter, uint32_t depth, IND2Connector *connector = nullptr);
    void Accept();
    void Connect(const opennd::net::IpAddress &dest, const Hello &hello);
    void Register(Region &r, size_t size);
    void Disconnect();

    // One completion; throws after `timeout_ms` without one.
    ND2_RESULT Next(bool blocking, uint64_t timeout_ms = 10000);
    // Completions until one of `type` arrives (others must be successes).
    ND2_RESULT NextOf(ND2_REQUEST_TYPE type, bool blocking);
    // One completion if there is one (never waits); throws on a failed one.
    bool Poll(ND2_RESULT *r);

    IND2QueuePair *qp() { return conn_.qp.get(); }
    const ND2_ADAPTER_INFO &info() const { return adapter_->info(); }

private:
    std::shared_ptr<Adapter> adapter_;
    HANDLE file_ = nullptr, port_ = nullptr;
    opennd::client::Connection conn_;  // released before the file and port close
    std::deque<ND2_RESULT> stash_;
};

// "My buffer is here", in both directions.
struct BufferAd {
    uint64_t address;
    uint32_t token;
    uint32_t reserved;
};

// Bandwidth and message rate over every connection (stream.cpp). Both sides
// register one region of `slots` slots and share it among the connections.
struct StreamPlan {
    Test test;
    uint32_t size = 0;
    uint32_t warmup = 0, iters = 0;  // per connection
    uint32_t window = 1;
    size_t slot = 1, slots = 1;
    Region *local = nullptr;
    BufferAd peer{};
    uint32_t cq_mod = 1;  // client: a completion for every cq_mod-th request
    // Server of send_bw: called right after the last data receive of
    // connection `first` is posted, on the thread that posted it (the next
    // control message's receive goes in behind it: ServePerf).
    const Endpoint *first = nullptr;
    std::function<void()> after_last_receive{};
};
size_t StreamSlots(Test t, uint32_t size, uint32_t window, uint32_t working_set);
// Client: warm-up, then `iters` operations per connection, `threads` threads.
void RunStreamClient(const std::vector<Endpoint *> &eps, uint32_t threads, const StreamPlan &p, Result *res);
// Server of send_bw: Prime posts the first receives (before the answer), Run
// consumes warmup + iters messages per connection.
void PrimeStreamServer(const std::vector<Endpoint *> &eps, const StreamPlan &p, std::vector<uint32_t> *posted);
void RunStreamServer(const std::vector<Endpoint *> &eps, uint32_t threads, const StreamPlan &p,
                     std::vector<uint32_t> *posted);
// Posting helpers (stream.cpp); throw on failure.
void PostRecv(Endpoint &ep, Region &r, size_t offset, size_t len);
void PostSend(Endpoint &ep, Region &r, size_t offset, size_t len, ULONG flags = 0);
void PostRdma(Endpoint &ep, bool write, Region &r, size_t offset, size_t len, const BufferAd &peer, size_t peer_off,
              ULONG flags = 0);

// The connect-rate server, from the first request on (connect_rate.cpp).
// The Hello of a connection request. An InfiniBand or RoCE CM message
// pads its private data to a fixed size (56 bytes in a REQ), so a longer
// buffer than the Hello is normal: GetPrivateData then says
// ND_BUFFER_OVERFLOW after copying the Hello, which is all we need.
void ReadHello(IND2Connector *c, Hello *hello);
int ServeConnectRate(std::shared_ptr<Adapter> adapter, Listener &listener, IND2Connector *first, const Hello &hello);

// Fills the row's transport and data path from the options and the adapter.
void Label(const Options &o, const Adapter &a, Result *r);

uint64_t NowNs();
std::string StatusName(HRESULT hr);
opennd::net::IpAddress ParseAddressOrThrow(const std::string &text);
// The local address an ND client uses to reach `dest` (NdResolveAddress).
opennd::net::IpAddress LocalAddressFor(const opennd::net::IpAddress &dest);

}  // namespace ndperf
