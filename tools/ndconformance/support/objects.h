// ndconformance support: the provider under test and the ND objects the
// cases build from it (adapter, CQ with a reaping buffer, registered
// memory, connections, listeners). Shared by the test and peer processes.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/node.h"
#include "common/region.h"
#include "support/util.h"

namespace ndc {

// ------------------------------------------------------ provider under test

struct ProviderChoice {
    std::string catalog_name;  // --provider
    std::string library;       // --library
    std::string guid;          // --guid
};

// Loads the provider (through the catalog, or the library directly through
// libopennd's OpenProviderLibrary) and keeps its entry points. Requires
// NdStartup. "" on success, else why not.
std::string LoadProvider(const ProviderChoice &choice);
const ProviderChoice &Choice();
bool FromCatalog();
const std::string &ProviderLibraryPath();
const GUID &ProviderGuid();
// The library's exports, for the packaging rules (nullptr if missing).
DLLGETCLASSOBJECT ProviderGetClassObject();
DLLCANUNLOADNOW ProviderCanUnloadNow();

// A new IND2Provider (DllGetClassObject), as the helper library does.
HRESULT NewProvider(IND2Provider **out);
// ResolveAddress + OpenAdapter(IID_IND2Adapter).
HRESULT OpenAdapterFor(const IpAddress &local, IND2Adapter **out);
// Query with the right size; zeroed on failure.
ND2_ADAPTER_INFO QueryInfo(IND2Adapter *adapter);
// An address of `family` this provider does not serve.
IpAddress UnservedAddress(int family);

// ------------------------------------------------------------- failures

// Where support code reports a broken expectation it noticed on the way
// (e.g. a completion status the matrix forbids): gtest in the test
// process, the peer's failure report in the peer.
void Report(const std::string &what);
void SetReporter(std::function<void(const std::string &)> r);

// ----------------------------------------------------------- CQ + buffer

// A CQ whose completions can be reaped ahead of time into a buffer. While
// `pump` is set, waiting for a peer's reply reaps every pumped CQ, so that
// this process keeps moving data (providers may need the receiver's calls);
// cases that test CQ semantics exactly set pump = false.
class Cq {
public:
    Cq() = default;
    ~Cq();
    Cq(const Cq &) = delete;
    Cq &operator=(const Cq &) = delete;

    HRESULT Create(IND2Adapter *adapter, HANDLE file, ULONG depth, bool pump = true);
    IND2CompletionQueue *get() const { return cq_.get(); }
    IND2CompletionQueue *operator->() const { return cq_.get(); }
    void Release();  // releases the CQ (unregisters the pump)

    // Moves whatever GetResults returns now into the buffer.
    void Pump();
    // The next completion (buffer first), waiting up to ms; false on timeout.
    bool Next(ND2_RESULT *r, uint64_t ms = 0);
    // The next completion if there is one now (no waiting).
    bool TryNext(ND2_RESULT *r);
    // n completions, waiting up to ms for all of them (fewer on timeout).
    std::vector<ND2_RESULT> Take(size_t n, uint64_t ms = 0);
    // The first completion (in order) that matches, waiting up to ms; the
    // others stay buffered in order.
    bool NextWhere(const std::function<bool(const ND2_RESULT &)> &match, ND2_RESULT *r, uint64_t ms = 0);
    // Nothing arrives within ms (default QuietMs()); else the extra one.
    bool Quiet(ND2_RESULT *extra, uint64_t ms = 0);
    size_t buffered() const { return buffer_.size(); }

    bool pump = true;

private:
    void Check(const ND2_RESULT &r);
    Ref<IND2CompletionQueue> cq_;
    std::deque<ND2_RESULT> buffer_;
};

// Pumps every live pumped CQ of this process.
void PumpAll();
std::string Describe(const ND2_RESULT &r);

// ------------------------------------------------------- registered memory

// Page-aligned anonymous memory (mmap), optionally registered.
class Mem {
public:
    Mem() = default;
    explicit Mem(size_t size) { Allocate(size); }
    ~Mem();
    Mem(const Mem &) = delete;
    Mem &operator=(const Mem &) = delete;

    void Allocate(size_t size);
    // Creates an MR on (adapter, file) and registers [data+off, +len) (len 0
    // = the rest); returns the final status.
    HRESULT Register(IND2Adapter *adapter, HANDLE file, ULONG flags, size_t off = 0, size_t len = 0);
    HRESULT Deregister();
    char *data() const { return data_; }
    size_t size() const { return size_; }
    IND2MemoryRegion *mr() const { return mr_.get(); }
    UINT32 local_token() const { return mr_->GetLocalToken(); }
    UINT32 remote_token() const { return mr_->GetRemoteToken(); }
    uint64_t addr(size_t off = 0) const { return reinterpret_cast<uint64_t>(data_ + off); }
    ND2_SGE Sge(size_t off = 0, size_t len = SIZE_MAX) const;
    void ReleaseMr() { mr_.Take().reset(); }  // without Deregister
    // As if the memory were freed: no access is possible any more, but the
    // range stays reserved, so a stray write faults instead of landing in
    // memory mapped there later.
    void Revoke();

private:
    char *data_ = nullptr;
    size_t size_ = 0;
    size_t mapped_ = 0;
    opennd::client::Region mr_;
};

constexpr ULONG kAllRights = ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ |
                             ND_MR_FLAG_ALLOW_REMOTE_WRITE | ND_MR_FLAG_RDMA_READ_SINK;

// --------------------------------------------------------------- a node

// One process's adapter, overlapped file and adapter info (the helper's
// Node, opened through the provider under test rather than the catalog).
struct Node : opennd::client::Node {
    IpAddress local;
    // Opens the adapter serving `address` and an overlapped file. "" or why not.
    std::string Open(const IpAddress &address);
};

struct QpShape {
    ULONG receive_depth = 64;
    ULONG initiator_depth = 64;
    ULONG receive_sge = 4;
    ULONG initiator_sge = 4;
    ULONG inline_size = ~0u;  // ~0: min(MaxInlineDataSize, 256)
    IND2SharedReceiveQueue *srq = nullptr;
};

// One queue pair and its connector.
struct Conn {
    Node *node = nullptr;
    Cq *rcq = nullptr;
    Cq *icq = nullptr;
    Ref<IND2QueuePair> qp;
    Ref<IND2Connector> connector;
    void *context = nullptr;

    // Creates the QP (context = this unless given) and a connector.
    HRESULT Create(Node &n, Cq &receive_cq, Cq &initiator_cq, const QpShape &shape = QpShape(), void *ctx = nullptr);
    HRESULT NewConnector();

    // Active side: Bind(port 0 on node->local's IP), Connect, CompleteConnect
    // (unless complete = false); final status of the first step that fails.
    HRESULT Connect(const IpAddress &dest, const void *pd = nullptr, ULONG pd_len = 0, ULONG in_rl = 8,
                    ULONG out_rl = 8, bool complete = true);
    HRESULT CompleteConnect();
    // Passive side, after a connection request reached this connector.
    HRESULT Accept(const void *pd = nullptr, ULONG pd_len = 0, ULONG in_rl = 8, ULONG out_rl = 8);
    HRESULT Disconnect();

    HRESULT PostReceive(const Mem &m, size_t off, size_t len, void *ctx = nullptr);
    HRESULT PostSend(const Mem &m, size_t off, size_t len, ULONG flags = 0, void *ctx = nullptr);
};

struct Listener {
    Ref<IND2Listener> listener;
    uint16_t port = 0;
    // Create, Bind(address) and Listen(backlog); "" or why not.
    std::string Start(Node &n, const IpAddress &address, ULONG backlog = 0);
    // GetConnectionRequest into c.connector; final status.
    HRESULT Get(Conn &c, uint64_t ms = 0);
};

}  // namespace ndc
