#include "endpoint.h"

#include <sys/mman.h>
#include <time.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "opennd/adapter_notes.h"
#include "opennd/providers.h"

namespace ndperf {

uint64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string StatusName(HRESULT hr) { return opennd::client::StatusDescription(hr); }

opennd::net::IpAddress ParseAddressOrThrow(const std::string &text) {
    opennd::net::IpAddress a;
    if (!opennd::net::ParseAddress(text, &a)) throw std::runtime_error("bad address: " + text);
    return a;
}

opennd::net::IpAddress LocalAddressFor(const opennd::net::IpAddress &dest) {
    opennd::net::IpAddress local;
    SIZE_T len = sizeof local.storage;
    HRESULT hr = NdResolveAddress(dest.sa(), dest.length(), local.sa(), &len);
    if (FAILED(hr))
        throw std::runtime_error("no local ND address reaches " + opennd::net::ToString(dest.sa()) + ": " +
                                 StatusName(hr));
    return local;
}

void Check(HRESULT hr, const char *what) {
    if (FAILED(hr)) throw std::runtime_error(std::string(what) + " failed: " + StatusName(hr));
}

// A step past its deadline fails ND_IO_TIMEOUT, as ndperf always said.
void Check(const opennd::client::Status &s) { Check(s.hr(), s.call().c_str()); }

HRESULT Wait(IND2Overlapped *obj, OVERLAPPED *ov, HRESULT hr) {
    if (hr != ND_PENDING) return hr;
    uint64_t deadline = NowNs() + 30'000'000'000ull;
    while ((hr = obj->GetOverlappedResult(ov, FALSE)) == ND_PENDING)
        if (NowNs() > deadline) return ND_IO_TIMEOUT;
    return hr;
}

void Label(const Options &o, const Adapter &a, Result *r) {
    r->transport = o.transport.empty() ? "default" : o.transport;
    r->spin_us = o.spin_us;
    r->data_path = a.DataPath();
}

Adapter::~Adapter() = default;

void Adapter::Open(const opennd::net::IpAddress &local, const std::string &provider) {
    if (provider.empty()) {
        Check(NdOpenAdapter(IID_IND2Adapter, local.sa(), local.length(), adapter_.put_void()), "NdOpenAdapter");
    } else {
        opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
        std::string why = "no catalog entry named " + provider;
        for (auto &cp : snap.providers) {
            if (cp.entry.name == provider && !adapter_) {
                UINT64 id = 0;
                HRESULT hr = cp.provider ? cp.provider->ResolveAddress(local.sa(), local.length(), &id) : E_FAIL;
                if (SUCCEEDED(hr))
                    hr = cp.provider->OpenAdapter(IID_IND2Adapter, id, adapter_.put_void());
                if (FAILED(hr))
                    why = cp.provider ? "provider " + provider + ": " + StatusName(hr)
                                      : "provider " + provider + " does not load: " + cp.failure;
            }
            if (cp.provider) cp.provider->Release();
        }
        if (!adapter_) throw std::runtime_error(why);
    }
    Check(opennd::client::QueryInfo(adapter_.get(), &info_));
    IOpenNdAdapterNotes *notes = nullptr;
    if (SUCCEEDED(adapter_->QueryInterface(IID_IOpenNdAdapterNotes, reinterpret_cast<void **>(&notes)))) {
        ULONG size = 0;
        if (notes->GetNotes(nullptr, &size) == ND_BUFFER_OVERFLOW) {
            std::string text(size, '\0');
            if (SUCCEEDED(notes->GetNotes(text.data(), &size))) notes_ = text.c_str();
        }
        notes->Release();
    }
}

std::string Adapter::DataPath() const {
    std::string out;
    for (size_t at = 0; at < notes_.size();) {
        size_t end = notes_.find('\n', at);
        std::string line = notes_.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? notes_.size() : end + 1;
        if (line.rfind("other hosts", 0) == 0) continue;  // not about this path
        out += (out.empty() ? "" : "; ") + line;
    }
    return out;
}

void Adapter::CheckTransport(const std::string &transport) const {
    if (transport != "tcp" || notes_.empty()) return;
    std::string path = DataPath();
    for (char &ch : path) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (path.find("tcp") == std::string::npos)
        std::fprintf(stderr, "ndperf: warning: --transport tcp, but the provider does not say it moves data over "
                             "TCP; it says: %s\n", DataPath().c_str());
}

void Region::Reset() {
    mr.Reset();
    local_token_ = 0;
    bytes.reset();
    length = 0;
}

void Region::Unmap::operator()(char *p) const {
    if (p) munmap(p, mapped);
}

void Region::Allocate(size_t n) {
    constexpr size_t kPage = 4096;
    const size_t rounded = (n + kPage - 1) / kPage * kPage;
    void *p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("out of memory for a " + std::to_string(n) + "-byte buffer");
    bytes = std::unique_ptr<char, Unmap>(static_cast<char *>(p), Unmap{rounded});
    std::memset(bytes.get(), 0, rounded);
    length = n;
}

Listener::~Listener() {
    listener_ = opennd::client::Listener();
    if (file_) CloseHandle(file_);
    if (port_) CloseHandle(port_);
}

uint16_t Listener::Listen(std::shared_ptr<Adapter> adapter, const opennd::net::IpAddress &local, uint16_t port) {
    adapter_ = std::move(adapter);
    Check(adapter_->get()->CreateOverlappedFile(&file_), "CreateOverlappedFile");
    port_ = CreateIoCompletionPort(file_, nullptr, 0, 0);
    if (!port_) throw std::runtime_error("CreateIoCompletionPort failed");
    opennd::net::IpAddress a = local;
    opennd::net::SetPort(a.sa(), port);
    Check(listener_.Listen(adapter_->get(), file_, a, 0));
    return listener_.port();
}

IND2Connector *Listener::NewConnector() {
    IND2Connector *c = nullptr;
    Check(adapter_->get()->CreateConnector(IID_IND2Connector, file_, reinterpret_cast<void **>(&c)),
          "CreateConnector");
    return c;
}

bool Listener::Next(IND2Connector *c, Hello *hello, uint32_t timeout_ms) {
    OVERLAPPED ov{};
    IND2Listener *listener = listener_.get();
    HRESULT hr = listener->GetConnectionRequest(c, &ov);
    if (hr == ND_PENDING) {
        // Packets of earlier accepts on this port are skipped: only ov counts.
        uint64_t deadline = NowNs() + uint64_t(timeout_ms) * 1000000ull;
        for (;;) {
            DWORD n;
            ULONG_PTR key;
            OVERLAPPED *got = nullptr;
            uint64_t now = NowNs();
            DWORD wait = timeout_ms ? static_cast<DWORD>(now < deadline ? (deadline - now) / 1000000 + 1 : 0) : INFINITE;
            GetQueuedCompletionStatus(port_, &n, &key, &got, wait);
            if (got == &ov) break;
            if (!got && timeout_ms && NowNs() >= deadline) {
                listener->CancelOverlappedRequests();
                listener->GetOverlappedResult(&ov, TRUE);
                return false;
            }
        }
        hr = listener->GetOverlappedResult(&ov, FALSE);
    }
    Check(hr, "GetConnectionRequest");
    ReadHello(c, hello);
    return true;
}

void ReadHello(IND2Connector *c, Hello *hello) {
    *hello = Hello{};
    ULONG len = sizeof *hello;
    const HRESULT hr = c->GetPrivateData(hello, &len);
    if (hr != ND_BUFFER_OVERFLOW) Check(hr, "GetPrivateData");
    if (len < sizeof *hello || hello->magic != kHelloMagic)
        throw std::runtime_error("a connection request that is not from ndperf (or another version)");
}

Endpoint::~Endpoint() {
    conn_.Reset();
    if (file_) CloseHandle(file_);
    if (port_) CloseHandle(port_);
}

void Endpoint::Open(std::shared_ptr<Adapter> adapter, uint32_t depth, IND2Connector *connector) {
    adapter_ = std::move(adapter);
    // Adopted: it holds the request the server accepts.
    conn_.connector = opennd::client::ComPtr<IND2Connector>(connector);
    IND2Adapter *a = adapter_->get();
    Check(a->CreateOverlappedFile(&file_), "CreateOverlappedFile");
    port_ = CreateIoCompletionPort(file_, nullptr, 0, 0);
    if (!port_) throw std::runtime_error("CreateIoCompletionPort failed");
    Check(conn_.Open(a, file_, {depth * 2 + 8, depth + 4, depth + 4, 1, 1, 0, nullptr}));
}

void Endpoint::Accept() { Check(conn_.Accept({nullptr, 0, 8, 8}, SetupBound())); }

void Endpoint::Connect(const opennd::net::IpAddress &dest, const Hello &hello) {
    Check(conn_.Connect(dest, {&hello, sizeof hello, 8, 8}, SetupBound()));
}

void Endpoint::Register(Region &r, size_t size) {
    r.Reset();
    r.Allocate(size ? size : 1);
    Check(r.mr.Register(adapter_->get(), file_, r.data(), r.size(), opennd::client::kAllAccess, SetupBound()));
    r.local_token_ = r.mr->GetLocalToken();
}

void Endpoint::Disconnect() { conn_.Disconnect(SetupBound()); }
ND2_RESULT Endpoint::Next(bool blocking, uint64_t timeout_ms) {
    ND2_RESULT r;
    uint64_t deadline = 0;
    for (uint64_t spins = 0;; ++spins) {
        if (conn_.cq->GetResults(&r, 1) == 1) return r;
        if (blocking) {
            // Arm, look once more (no lost wake-up), then sleep on the port.
            OVERLAPPED ov{};
            HRESULT hr = conn_.cq->Notify(ND_CQ_NOTIFY_ANY, &ov);
            if (conn_.cq->GetResults(&r, 1) == 1) {
                if (hr == ND_PENDING) {
                    conn_.cq->CancelOverlappedRequests();
                    DWORD n;
                    ULONG_PTR key;
                    OVERLAPPED *got;
                    while (GetQueuedCompletionStatus(port_, &n, &key, &got, 0) || got) {
                    }
                }
                return r;
            }
            if (hr != ND_PENDING) throw std::runtime_error("CQ Notify failed: " + StatusName(hr));
            // Other packets on the port are completions of requests already
            // waited for with GetOverlappedResult (Register, Connect...):
            // skipped. Taking one of them for ours left ours armed, and every
            // later Notify with the same OVERLAPPED was refused: the wait
            // turned into a spin.
            for (;;) {
                DWORD n;
                ULONG_PTR key;
                OVERLAPPED *got = nullptr;
                GetQueuedCompletionStatus(port_, &n, &key, &got, static_cast<DWORD>(timeout_ms));
                if (!got) throw std::runtime_error("no completion within the timeout");
                if (got == &ov) break;
            }
            conn_.cq->GetOverlappedResult(&ov, FALSE);
            continue;
        }
        // The clock only once the wait is long (after 4095 empty polls), not
        // on the first empty poll: read there, on every message of a
        // ping-pong, it delayed seeing a message that arrived meanwhile.
        if ((spins & 4095) == 4095) {
            uint64_t now = NowNs();
            if (!deadline) deadline = now + timeout_ms * 1000000ull;
            if (now > deadline) throw std::runtime_error("no completion within the timeout");
        }
    }
}

ND2_RESULT Endpoint::NextOf(ND2_REQUEST_TYPE type, bool blocking) {
    for (auto it = stash_.begin(); it != stash_.end(); ++it)
        if (it->RequestType == type) {
            ND2_RESULT r = *it;
            stash_.erase(it);
            return r;
        }
    for (;;) {
        ND2_RESULT r = Next(blocking);
        if (FAILED(r.Status))
            throw std::runtime_error("completion failed: " + StatusName(r.Status) + " (request type " +
                                     std::to_string(r.RequestType) + ")");
        if (r.RequestType == type) return r;
        stash_.push_back(r);  // another kind: kept for whoever waits for it
    }
}

bool Endpoint::Poll(ND2_RESULT *r) {
    if (stash_.empty()) {
        // Up to 16 at a time, as perftest polls (one call per completion
        // would measure the poll call as much as the data path).
        ND2_RESULT batch[16];
        ULONG n = conn_.cq->GetResults(batch, 16);
        if (n == 0) return false;
        stash_.insert(stash_.end(), batch, batch + n);
    }
    *r = stash_.front();
    stash_.pop_front();
    if (FAILED(r->Status))
        throw std::runtime_error("completion failed: " + StatusName(r->Status) + " (request type " +
                                 std::to_string(r->RequestType) + ")");
    return true;
}

}  // namespace ndperf
