#include "support/objects.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "common/connection.h"
#include "ndsupport.h"
#include "opennd/catalog.h"
#include "opennd/providers.h"

namespace ndc {

// ------------------------------------------------------ provider under test

namespace {
ProviderChoice g_choice;
std::string g_path;
GUID g_guid{};
DLLGETCLASSOBJECT g_get = nullptr;
DLLCANUNLOADNOW g_can_unload = nullptr;
std::function<void(const std::string &)> g_reporter;

std::mutex g_pump_mu;
std::set<Cq *> g_pumped;
}  // namespace

std::string LoadProvider(const ProviderChoice &choice) {
    g_choice = choice;
    if (!choice.catalog_name.empty()) {
        opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
        std::string failure = "no catalog entry named '" + choice.catalog_name + "' in " + snap.directory;
        bool found = false;
        for (auto &p : snap.providers) {
            if (p.provider) p.provider->Release();
            if (found || p.entry.name != choice.catalog_name) continue;
            if (!p.failure.empty() || !p.provider) {
                failure = "catalog entry '" + choice.catalog_name + "' is not usable: " + p.failure;
                continue;
            }
            found = true;
            g_path = p.entry.library_path;
            g_guid = p.entry.provider_id;
        }
        if (!found) return failure;
    } else {
        if (!opennd::ParseGuid(choice.guid, &g_guid)) return "not a GUID: " + choice.guid;
        char *real = realpath(choice.library.c_str(), nullptr);
        g_path = real ? real : choice.library;
        free(real);
        IND2Provider *p = nullptr;
        std::string failure;
        HRESULT hr = opennd::OpenProviderLibrary(g_path, g_guid, &p, &failure);
        if (FAILED(hr)) return "cannot load " + g_path + ": " + (failure.empty() ? StatusName(hr) : failure);
        p->Release();
    }
    // The library is loaded; take our own handle on the same instance for
    // the packaging rules (DllCanUnloadNow) and for fresh IND2Providers.
    void *dl = dlopen(g_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) return "dlopen " + g_path + " failed: " + dlerror();
    g_get = reinterpret_cast<DLLGETCLASSOBJECT>(dlsym(dl, "DllGetClassObject"));
    g_can_unload = reinterpret_cast<DLLCANUNLOADNOW>(dlsym(dl, "DllCanUnloadNow"));
    if (!g_get) return g_path + " does not export DllGetClassObject";
    return "";
}

const ProviderChoice &Choice() { return g_choice; }
bool FromCatalog() { return !g_choice.catalog_name.empty(); }
const std::string &ProviderLibraryPath() { return g_path; }
const GUID &ProviderGuid() { return g_guid; }
DLLGETCLASSOBJECT ProviderGetClassObject() { return g_get; }
DLLCANUNLOADNOW ProviderCanUnloadNow() { return g_can_unload; }

HRESULT NewProvider(IND2Provider **out) {
    *out = nullptr;
    return g_get(g_guid, IID_IND2Provider, reinterpret_cast<void **>(out));
}

IpAddress UnservedAddress(int family) {
    Ref<IND2Provider> p;
    NewProvider(p.put());
    ULONG cb = 0;
    p->QueryAddressList(nullptr, &cb);
    std::vector<uint8_t> buf(cb + 1);
    std::vector<IpAddress> served;
    if (SUCCEEDED(p->QueryAddressList(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()), &cb)))
        served = AddressListOf(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()));
    const char *v4[] = {"203.0.113.77", "198.51.100.77", "192.0.2.213", "10.255.254.253"};
    const char *v6[] = {"2001:db8::77", "2001:db8:ffff::1", "fd12:3456:789a::77"};
    if (family == AF_INET6) {
        for (const char *c : v6)
            if (!Contains(served, ParseIp(c))) return ParseIp(c);
    } else {
        for (const char *c : v4)
            if (!Contains(served, ParseIp(c))) return ParseIp(c);
    }
    return ParseIp(family == AF_INET6 ? "2001:db8::77" : "203.0.113.77");
}

HRESULT OpenAdapterFor(const IpAddress &local, IND2Adapter **out) {
    *out = nullptr;
    Ref<IND2Provider> p;
    HRESULT hr = NewProvider(p.put());
    if (FAILED(hr)) return hr;
    UINT64 id = 0;
    hr = p->ResolveAddress(local.sa(), local.length(), &id);
    if (FAILED(hr)) return hr;
    return p->OpenAdapter(IID_IND2Adapter, id, reinterpret_cast<void **>(out));
}

ND2_ADAPTER_INFO QueryInfo(IND2Adapter *adapter) {
    ND2_ADAPTER_INFO info;
    opennd::client::QueryInfo(adapter, &info);  // zeroed on failure
    return info;
}

void Report(const std::string &what) {
    if (g_reporter) g_reporter(what);
}
void SetReporter(std::function<void(const std::string &)> r) { g_reporter = std::move(r); }

// ----------------------------------------------------------------- Cq

Cq::~Cq() { Release(); }

void Cq::Release() {
    {
        std::lock_guard<std::mutex> lock(g_pump_mu);
        g_pumped.erase(this);
    }
    cq_.reset();
}

HRESULT Cq::Create(IND2Adapter *adapter, HANDLE file, ULONG depth, bool pump_it) {
    Release();
    buffer_.clear();
    pump = pump_it;
    HRESULT hr = adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, depth, 0, 0, cq_.put_void());
    if (SUCCEEDED(hr)) {
        std::lock_guard<std::mutex> lock(g_pump_mu);
        g_pumped.insert(this);
    }
    return hr;
}

void Cq::Check(const ND2_RESULT &r) {
    if (!StatusAllowedForType(r.Status, r.RequestType))
        Report("R065: completion status " + StatusName(r.Status) + " is not allowed for a " +
               RequestTypeName(r.RequestType) + " request");
}

void Cq::Pump() {
    if (!cq_) return;
    ND2_RESULT r[16];
    ULONG n;
    while ((n = cq_->GetResults(r, 16)) > 0) {
        for (ULONG i = 0; i < n; ++i) {
            Check(r[i]);
            buffer_.push_back(r[i]);
        }
        if (n < 16) break;
    }
}

bool Cq::Next(ND2_RESULT *r, uint64_t ms) {
    Deadline d(ms ? ms : WaitMs());
    Backoff b;
    for (;;) {
        if (!buffer_.empty()) {
            *r = buffer_.front();
            buffer_.pop_front();
            return true;
        }
        if (cq_ && cq_->GetResults(r, 1) == 1) {
            Check(*r);
            return true;
        }
        if (d.Expired()) return false;
        b.Pause();
    }
}

bool Cq::TryNext(ND2_RESULT *r) {
    if (!buffer_.empty()) {
        *r = buffer_.front();
        buffer_.pop_front();
        return true;
    }
    if (cq_ && cq_->GetResults(r, 1) == 1) {
        Check(*r);
        return true;
    }
    return false;
}

bool Cq::NextWhere(const std::function<bool(const ND2_RESULT &)> &match, ND2_RESULT *r, uint64_t ms) {
    Deadline d(ms ? ms : WaitMs());
    Backoff b;
    for (;;) {
        Pump();
        for (auto it = buffer_.begin(); it != buffer_.end(); ++it)
            if (match(*it)) {
                *r = *it;
                buffer_.erase(it);
                return true;
            }
        if (d.Expired()) return false;
        b.Pause();
    }
}

std::vector<ND2_RESULT> Cq::Take(size_t n, uint64_t ms) {
    std::vector<ND2_RESULT> out;
    Deadline d(ms ? ms : WaitMs());
    while (out.size() < n) {
        ND2_RESULT r;
        uint64_t now = NowMs();
        if (!Next(&r, d.end > now ? d.end - now : 1)) break;
        out.push_back(r);
    }
    return out;
}

bool Cq::Quiet(ND2_RESULT *extra, uint64_t ms) {
    ND2_RESULT r;
    if (Next(&r, ms ? ms : QuietMs())) {
        if (extra) *extra = r;
        return false;
    }
    return true;
}

void PumpAll() {
    std::lock_guard<std::mutex> lock(g_pump_mu);
    for (Cq *c : g_pumped)
        if (c->pump) c->Pump();
}

std::string Describe(const ND2_RESULT &r) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "{%s, bytes %u, qp ctx %p, req ctx %p}", RequestTypeName(r.RequestType),
                  r.BytesTransferred, r.QueuePairContext, r.RequestContext);
    return StatusName(r.Status) + " " + buf;
}

// ----------------------------------------------------------------- Mem

namespace {
// The helper's status as the cases see it: a wait past its bound is a hang.
HRESULT Final(const opennd::client::Status &s) { return s.timed_out() ? kHang : s.hr(); }
opennd::client::Deadline Bound(uint64_t ms = 0) { return opennd::client::Deadline::After(ms ? ms : WaitMs()); }
}  // namespace

Mem::~Mem() {
    if (mr_) Deregister();
    mr_.Take().reset();
    if (data_) munmap(data_, mapped_);
}

void Mem::Allocate(size_t size) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_ = std::max<size_t>(page, (size + page - 1) / page * page);
    void *p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("ndconformance: mmap");
        std::abort();
    }
    data_ = static_cast<char *>(p);
    size_ = size;
}

HRESULT Mem::Register(IND2Adapter *adapter, HANDLE file, ULONG flags, size_t off, size_t len) {
    return Final(mr_.Register(adapter, file, data_ + off, len ? len : size_ - off, flags, Bound()));
}

void Mem::Revoke() {
    if (mmap(data_, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
        std::perror("ndconformance: mmap");
        std::abort();
    }
}

HRESULT Mem::Deregister() { return Final(mr_.Deregister(Bound())); }

ND2_SGE Mem::Sge(size_t off, size_t len) const {
    if (len == SIZE_MAX) len = size_ - off;
    return ND2_SGE{data_ + off, static_cast<ULONG>(len), mr_ ? mr_->GetLocalToken() : 0};
}

// ----------------------------------------------------------------- Node

std::string Node::Open(const IpAddress &address) {
    local = WithPort(address, 0);
    Ref<IND2Adapter> opened;
    HRESULT hr = OpenAdapterFor(local, opened.put());
    if (FAILED(hr)) return "opening the adapter for " + IpText(local) + ": " + StatusName(hr);
    opennd::client::Status s = Adopt(std::move(opened));
    // A Query that fails leaves the info zeroed: the cases that need it say so.
    if (!s && s.call() != "IND2Adapter::Query") return s.call() + ": " + StatusName(s.hr());
    return "";
}

// ----------------------------------------------------------------- Conn

HRESULT Conn::Create(Node &n, Cq &receive_cq, Cq &initiator_cq, const QpShape &s, void *ctx) {
    node = &n;
    rcq = &receive_cq;
    icq = &initiator_cq;
    context = ctx ? ctx : this;
    ULONG inline_size = s.inline_size == ~0u ? std::min<ULONG>(n.info.MaxInlineDataSize, 256) : s.inline_size;
    HRESULT hr;
    if (s.srq)
        hr = n.adapter->CreateQueuePairWithSrq(IID_IND2QueuePair, rcq->get(), icq->get(), s.srq, context,
                                               s.initiator_depth, s.initiator_sge, inline_size, qp.put_void());
    else
        hr = n.adapter->CreateQueuePair(IID_IND2QueuePair, rcq->get(), icq->get(), context, s.receive_depth,
                                        s.initiator_depth, s.receive_sge, s.initiator_sge, inline_size, qp.put_void());
    if (FAILED(hr)) return hr;
    return NewConnector();
}

HRESULT Conn::NewConnector() {
    return node->adapter->CreateConnector(IID_IND2Connector, node->file, connector.put_void());
}

HRESULT Conn::Connect(const IpAddress &dest, const void *pd, ULONG pd_len, ULONG in_rl, ULONG out_rl,
                      bool complete) {
    IpAddress local = WithPort(node->local, 0);
    HRESULT hr = connector->Bind(local.sa(), local.length());
    if (FAILED(hr)) return hr;
    hr = Final(opennd::client::Connect(connector, qp, dest, {pd, pd_len, in_rl, out_rl}, Bound()));
    if (FAILED(hr) || !complete) return hr;
    return CompleteConnect();
}

HRESULT Conn::CompleteConnect() { return Final(opennd::client::CompleteConnect(connector, Bound())); }

HRESULT Conn::Accept(const void *pd, ULONG pd_len, ULONG in_rl, ULONG out_rl) {
    return Final(opennd::client::Accept(connector, qp, {pd, pd_len, in_rl, out_rl}, Bound()));
}

HRESULT Conn::Disconnect() { return Final(opennd::client::Disconnect(connector, Bound())); }

HRESULT Conn::PostReceive(const Mem &m, size_t off, size_t len, void *ctx) {
    ND2_SGE sge = m.Sge(off, len);
    return qp->Receive(ctx, &sge, 1);
}

HRESULT Conn::PostSend(const Mem &m, size_t off, size_t len, ULONG flags, void *ctx) {
    ND2_SGE sge = m.Sge(off, len);
    return qp->Send(ctx, len ? &sge : nullptr, len ? 1 : 0, flags);
}

// ------------------------------------------------------------- Listener

std::string Listener::Start(Node &n, const IpAddress &address, ULONG backlog) {
    opennd::client::Listener started;
    opennd::client::Status s = started.Listen(n.adapter, n.file, address, backlog);
    listener = started.Share();  // kept whatever failed, as the cases may look at it
    if (s.call() == "IND2Listener::Bind")
        return s.call() + "(" + IpText(address, true) + "): " + StatusName(s.hr());
    if (!s) return s.call() + ": " + StatusName(s.hr());
    port = started.port();
    if (port == 0) return "IND2Listener::GetLocalAddress reported port 0";
    return "";
}

HRESULT Listener::Get(Conn &c, uint64_t ms) {
    Ov ov;
    return Finish(listener.get(), &ov, listener->GetConnectionRequest(c.connector.get(), &ov), ms);
}

}  // namespace ndc
