// Provider and adapter discovery: the catalog entry (Registration), the
// library's entry points, IND2Provider and IND2Adapter address handling,
// QueryInterface and the Create methods' IIDs (Discovery), the status and
// structure definitions (Types) and the helper library (Helper).
#include <dlfcn.h>
#include <sys/un.h>

#include <atomic>
#include <set>
#include <thread>

#include "ndsupport.h"
#include "opennd/catalog.h"
#include "opennd/providers.h"
#include "suite.h"

namespace ndc {
namespace {

// ---------------------------------------------------------------- Registration
// Only with --provider: the entry the provider was installed with.

opennd::CatalogEntry Entry() {
    opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
    opennd::CatalogEntry e;
    for (auto &p : snap.providers) {
        if (p.provider) p.provider->Release();
        if (p.entry.name == Choice().catalog_name) e = p.entry;
    }
    return e;
}

TEST(Registration, ServiceFlagsR001) {
    opennd::CatalogEntry e = Entry();
    ASSERT_FALSE(e.name.empty()) << "no catalog entry " << Choice().catalog_name;
    EXPECT_EQ(e.service_flags1 & 0x8Eu, 0x8Eu)
        << "dwServiceFlags1 0x" << std::hex << e.service_flags1
        << " lacks XP1_GUARANTEED_DELIVERY|GUARANTEED_ORDER|MESSAGE_ORIENTED|CONNECT_DATA";
}

TEST(Registration, ProviderFlagsR002) {
    opennd::CatalogEntry e = Entry();
    ASSERT_FALSE(e.name.empty());
    EXPECT_EQ(e.provider_flags & 0x14u, 0x14u)
        << "dwProviderFlags 0x" << std::hex << e.provider_flags << " lacks PFL_HIDDEN|PFL_NETWORKDIRECT_PROVIDER";
}

TEST(Registration, VersionR003) {
    opennd::CatalogEntry e = Entry();
    ASSERT_FALSE(e.name.empty());
    // D01: the helper in use (libopennd) takes ND_VERSION_2, and also 2.
    EXPECT_TRUE(e.version == ND_VERSION_2 || e.version == 2) << "iVersion " << e.version;
}

TEST(Registration, AddressFamilyR004) {
    opennd::CatalogEntry e = Entry();
    ASSERT_FALSE(e.name.empty());
    EXPECT_TRUE(e.address_family == AF_INET || e.address_family == AF_INET6) << "family " << e.address_family;
    // A single AF_INET entry cannot cover IPv6: if the provider serves IPv6
    // addresses, an AF_INET6 entry must exist (R004: AF_INET6 may cover both).
    bool serves_v6 = false;
    for (const auto &a : TestAddresses()) serves_v6 |= ParseIp(a).family() == AF_INET6;
    if (serves_v6) {
        bool has_v6 = false;
        opennd::CatalogSnapshot snap = opennd::OpenCatalogProviders();
        for (auto &p : snap.providers) {
            if (p.provider) p.provider->Release();
            if (p.entry.provider_id == e.provider_id && p.entry.address_family == AF_INET6) has_v6 = true;
        }
        EXPECT_TRUE(has_v6) << "the provider serves IPv6 but has no AF_INET6 catalog entry";
    }
}

TEST(Registration, SocketTypeAndProtocolR005) {
    opennd::CatalogEntry e = Entry();
    ASSERT_FALSE(e.name.empty());
    EXPECT_EQ(e.socket_type, -1);
    EXPECT_EQ(e.protocol, 0);
    EXPECT_EQ(e.protocol_max_offset, 0);
    std::string why;
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;
}

// ------------------------------------------------------------------ Discovery

TEST(Discovery, DllGetClassObjectGivesProviderR006) {
    DLLGETCLASSOBJECT get = ProviderGetClassObject();
    ASSERT_NE(get, nullptr);
    void *pv = nullptr;
    ASSERT_ND(ND_SUCCESS, get(ProviderGuid(), IID_IND2Provider, &pv));
    ASSERT_NE(pv, nullptr);
    Ref<IND2Provider> p(static_cast<IND2Provider *>(pv));
    // It is a real IND2Provider: it answers its own IID and lists addresses.
    Ref<IND2Provider> again;
    EXPECT_ND(ND_SUCCESS, p->QueryInterface(IID_IND2Provider, again.pv()));
    ULONG cb = 0;
    EXPECT_ND(ND_BUFFER_OVERFLOW, p->QueryAddressList(nullptr, &cb));
    EXPECT_GT(cb, 0u);
}

TEST(Discovery, ExportsDllCanUnloadNowR007) {
    EXPECT_NE(ProviderCanUnloadNow(), nullptr) << ProviderLibraryPath() << " does not export DllCanUnloadNow";
}

TEST(Discovery, RepeatedAndConcurrentProviderRequestsR008) {
    constexpr int kThreads = 8, kEach = 20;
    std::vector<std::vector<IND2Provider *>> got(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                IND2Provider *p = nullptr;
                if (FAILED(NewProvider(&p)) || !p)
                    ++failures;
                else
                    got[t].push_back(p);
            }
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    // Each is independently usable: release half, the rest still work.
    std::vector<IND2Provider *> all;
    for (auto &v : got) all.insert(all.end(), v.begin(), v.end());
    for (size_t i = 0; i < all.size(); i += 2) all[i]->Release();
    for (size_t i = 1; i < all.size(); i += 2) {
        UINT64 id = 0;
        IpAddress a = PrimaryAddress();
        EXPECT_ND(ND_SUCCESS, all[i]->ResolveAddress(a.sa(), a.length(), &id));
        all[i]->Release();
    }
}

TEST(Discovery, AdapterOutlivesProviderR009) {
    IpAddress a = PrimaryAddress();
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Node node;
    node.local = a;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, node.adapter.pv()));
    p.reset();  // the client may release the provider now
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateOverlappedFile(&node.file));
    node.info = QueryInfo(node.adapter.get());
    Mem m(4096);
    EXPECT_ND(ND_SUCCESS, m.Register(node.adapter.get(), node.file, kAllRights));
    // A whole connection and a message still work.
    Pair pair;
    std::string err = pair.Connect(node, a, Msg("serve").Set("recvs", 1).Set("recvsize", 4096));
    ASSERT_TRUE(err.empty()) << err;
    FillPattern(m.data(), 100, 9);
    ASSERT_ND(ND_SUCCESS, pair.conn.PostSend(m, 0, 100));
    EXPECT_TRUE(NextIs(pair.rcq, ND_SUCCESS, Nd2RequestTypeSend));
    PEER_OK(r, pair.peer.Call(Msg("reap").Set("c", 0).Set("n", 1)));
    EXPECT_ND(ND_SUCCESS, ST(r, "s0"));
    EXPECT_EQ(r.U64("b0"), 100u);
}

TEST(Discovery, DllCanUnloadNowTracksObjectsR010) {
    DLLCANUNLOADNOW can_unload = ProviderCanUnloadNow();
    ASSERT_NE(can_unload, nullptr) << "no DllCanUnloadNow";
    {
        Ref<IND2Adapter> adapter;
        ASSERT_ND(ND_SUCCESS, OpenAdapterFor(PrimaryAddress(), adapter.out()));
        HANDLE file = nullptr;
        ASSERT_ND(ND_SUCCESS, adapter->CreateOverlappedFile(&file));
        Ref<IND2CompletionQueue> cq;
        ASSERT_ND(ND_SUCCESS, adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, 16, 0, 0, cq.pv()));
        adapter.reset();  // the CQ alone must keep the library in use
        EXPECT_ND(S_FALSE, can_unload()) << "DllCanUnloadNow with a live CQ";
        cq.reset();
        CloseHandle(file);
    }
    // Everything released: S_OK (the provider may need a moment to wind down).
    Deadline d(WaitMs());
    HRESULT hr;
    while ((hr = can_unload()) != S_OK && !d.Expired()) SleepMs(5);
    EXPECT_ND(S_OK, hr) << "DllCanUnloadNow after every object was released";
}

std::vector<IpAddress> AddressListOf(const SOCKET_ADDRESS_LIST *list) {
    std::vector<IpAddress> out;
    for (INT i = 0; i < list->iAddressCount; ++i) {
        IpAddress a;
        if (opennd::kit::FromSockaddr(list->Address[i].lpSockaddr, list->Address[i].iSockaddrLength, &a))
            out.push_back(a);
    }
    return out;
}

bool Contains(const std::vector<IpAddress> &list, const IpAddress &a) {
    for (const auto &x : list)
        if (opennd::kit::SameIp(x.sa(), a.sa())) return true;
    return false;
}

// The sizing contract shared by both QueryAddressList methods (§2.5.5).
template <class Query>
void CheckAddressListContract(Query query, std::vector<IpAddress> *out) {
    ULONG cb = 0;
    ASSERT_ND(ND_BUFFER_OVERFLOW, query(nullptr, &cb));
    ASSERT_GT(cb, sizeof(SOCKET_ADDRESS_LIST) - sizeof(SOCKET_ADDRESS));
    // One byte short: overflow, buffer untouched, size reported again.
    std::vector<uint8_t> small(cb - 1, 0xAB);
    ULONG cb2 = cb - 1;
    ASSERT_ND(ND_BUFFER_OVERFLOW, query(reinterpret_cast<SOCKET_ADDRESS_LIST *>(small.data()), &cb2));
    EXPECT_EQ(cb2, cb);
    for (uint8_t b : small) ASSERT_EQ(b, 0xAB) << "the buffer was modified on ND_BUFFER_OVERFLOW";
    // Enough room (plus slack): success, *pcb = bytes used.
    std::vector<uint8_t> buf(cb + 64, 0);
    ULONG cb3 = static_cast<ULONG>(buf.size());
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    ASSERT_ND(ND_SUCCESS, query(list, &cb3));
    EXPECT_EQ(cb3, cb) << "*pcb on success is not the size used";
    ASSERT_GT(list->iAddressCount, 0);
    size_t need = offsetof(SOCKET_ADDRESS_LIST, Address) + list->iAddressCount * sizeof(SOCKET_ADDRESS);
    for (INT i = 0; i < list->iAddressCount; ++i) {
        const SOCKET_ADDRESS &sa = list->Address[i];
        ASSERT_NE(sa.lpSockaddr, nullptr);
        int fam = sa.lpSockaddr->sa_family;
        EXPECT_TRUE(fam == AF_INET || fam == AF_INET6) << "entry " << i << " family " << fam;
        EXPECT_EQ(static_cast<size_t>(sa.iSockaddrLength), opennd::kit::SockaddrLength(fam)) << "entry " << i;
        auto *p = reinterpret_cast<const uint8_t *>(sa.lpSockaddr);
        EXPECT_TRUE(p >= buf.data() && p + sa.iSockaddrLength <= buf.data() + cb)
            << "entry " << i << " points outside the caller's buffer";
        need += sa.iSockaddrLength;
    }
    EXPECT_EQ(need, cb) << "required size differs from the §2.5.5 formula";
    *out = AddressListOf(list);
}

TEST(Discovery, ProviderQueryAddressListR011) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    std::vector<IpAddress> list;
    CheckAddressListContract([&](SOCKET_ADDRESS_LIST *l, ULONG *cb) { return p->QueryAddressList(l, cb); }, &list);
    for (const auto &a : TestAddresses())
        EXPECT_TRUE(Contains(list, ParseIp(a))) << a << " is served but missing from the provider's address list";
}

TEST(Discovery, AdapterQueryAddressListR039) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, adapter.pv()));
    std::vector<IpAddress> list;
    CheckAddressListContract([&](SOCKET_ADDRESS_LIST *l, ULONG *cb) { return adapter->QueryAddressList(l, cb); },
                             &list);
    EXPECT_TRUE(Contains(list, a)) << "the adapter's list lacks the address it was opened for";
    // Only this adapter's addresses: each resolves to this adapter.
    for (const auto &x : list) {
        UINT64 other = 0;
        EXPECT_ND(ND_SUCCESS, p->ResolveAddress(x.sa(), x.length(), &other)) << IpText(x);
        EXPECT_EQ(other, id) << IpText(x) << " is in the adapter's list but resolves to another adapter";
    }
}

TEST(Discovery, ResolveAddressIgnoresPortOneIdPerAdapterR012) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    IpAddress a = PrimaryAddress();
    UINT64 id0 = 0, id1 = 1;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id0));
    IpAddress with_port = WithPort(a, 7471);
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(with_port.sa(), with_port.length(), &id1));
    EXPECT_EQ(id0, id1) << "ResolveAddress depends on the port";
    // Every address of the adapter resolves to the adapter's ID.
    Ref<IND2Adapter> adapter;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id0, adapter.pv()));
    ULONG cb = 0;
    adapter->QueryAddressList(nullptr, &cb);
    std::vector<uint8_t> buf(cb);
    ASSERT_ND(ND_SUCCESS, adapter->QueryAddressList(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()), &cb));
    for (const auto &x : AddressListOf(reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data()))) {
        UINT64 id = ~0ull;
        EXPECT_ND(ND_SUCCESS, p->ResolveAddress(x.sa(), x.length(), &id)) << IpText(x);
        EXPECT_EQ(id, id0) << IpText(x);
    }
}

// An address this provider does not serve.
IpAddress UnservedAddress(int family) {
    Ref<IND2Provider> p;
    NewProvider(p.out());
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

TEST(Discovery, ResolveUnservedAddressR013) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    for (int family : {AF_INET, AF_INET6}) {
        IpAddress x = UnservedAddress(family);
        UINT64 id = 0;
        EXPECT_ND(ND_INVALID_ADDRESS, p->ResolveAddress(x.sa(), x.length(), &id)) << IpText(x);
    }
}

TEST(Discovery, OpenAdapterR014) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, adapter.pv()));
    EXPECT_TRUE(adapter);
    // An adapter ID nobody handed out.
    std::set<UINT64> known{id};
    UINT64 bogus = id ^ 0x5A5A5A5A00000000ull;
    if (known.count(bogus)) bogus = id + 0x1000;
    Ref<IND2Adapter> none;
    EXPECT_ND(ND_INVALID_PARAMETER, p->OpenAdapter(IID_IND2Adapter, bogus, none.pv()));
    EXPECT_FALSE(none);
}

TEST(Discovery, OpenAdapterUnknownIidIsNoInterface) {  // §3.0 (derived: COM)
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(E_NOINTERFACE, p->OpenAdapter(IID_IND2Listener, id, adapter.pv()));
    EXPECT_FALSE(adapter);
}

// QueryInterface: IUnknown, the object's IID and its bases answer; others
// give E_NOINTERFACE and a null pointer (§3.0).
void CheckQi(IUnknown *obj, const std::vector<const IID *> &yes, const char *what) {
    SCOPED_TRACE(what);
    ASSERT_NE(obj, nullptr);
    void *unk1 = nullptr, *unk2 = nullptr;
    ASSERT_ND(ND_SUCCESS, obj->QueryInterface(IID_IUnknown, &unk1));
    ASSERT_ND(ND_SUCCESS, obj->QueryInterface(IID_IUnknown, &unk2));
    EXPECT_EQ(unk1, unk2) << "QueryInterface(IID_IUnknown) is not a stable identity";
    static_cast<IUnknown *>(unk1)->Release();
    static_cast<IUnknown *>(unk2)->Release();
    for (const IID *iid : yes) {
        void *pv = nullptr;
        EXPECT_ND(ND_SUCCESS, obj->QueryInterface(*iid, &pv));
        EXPECT_NE(pv, nullptr);
        if (pv) static_cast<IUnknown *>(pv)->Release();
    }
    const IID *all[] = {&IID_IND2Provider, &IID_IND2Adapter, &IID_IND2Overlapped, &IID_IND2CompletionQueue,
                        &IID_IND2MemoryRegion, &IID_IND2MemoryWindow, &IID_IND2SharedReceiveQueue,
                        &IID_IND2QueuePair, &IID_IND2Connector, &IID_IND2Listener, &IID_IClassFactory};
    for (const IID *iid : all) {
        bool expected = false;
        for (const IID *y : yes) expected |= *y == *iid;
        if (expected) continue;
        void *pv = reinterpret_cast<void *>(1);
        EXPECT_ND(E_NOINTERFACE, obj->QueryInterface(*iid, &pv)) << opennd::FormatGuid(*iid);
        EXPECT_EQ(pv, nullptr) << "QueryInterface failure must null the out pointer";
        if (SUCCEEDED(obj->QueryInterface(*iid, &pv)) && pv) static_cast<IUnknown *>(pv)->Release();
    }
    // AddRef/Release balance (the counts are informational only).
    EXPECT_GE(obj->AddRef(), 1u);
    obj->Release();
}

TEST(Discovery, QueryInterfaceOnEveryObject) {  // §3.0
    Node node;
    ASSERT_EQ(node.Open(PrimaryAddress()), "");
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.out()));
    CheckQi(p.get(), {&IID_IND2Provider}, "provider");
    CheckQi(node.adapter.get(), {&IID_IND2Adapter}, "adapter");
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.pv()));
    CheckQi(cq.get(), {&IID_IND2CompletionQueue, &IID_IND2Overlapped}, "CQ");
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.pv()));
    CheckQi(mr.get(), {&IID_IND2MemoryRegion, &IID_IND2Overlapped}, "MR");
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.pv()));
    CheckQi(mw.get(), {&IID_IND2MemoryWindow}, "MW");
    Ref<IND2QueuePair> qp;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateQueuePair(IID_IND2QueuePair, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0,
                                                        qp.pv()));
    CheckQi(qp.get(), {&IID_IND2QueuePair}, "QP");
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.pv()));
    CheckQi(c.get(), {&IID_IND2Connector, &IID_IND2Overlapped}, "connector");
    Ref<IND2Listener> l;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, l.pv()));
    CheckQi(l.get(), {&IID_IND2Listener, &IID_IND2Overlapped}, "listener");
    if (node.info.MaxSharedReceiveQueueDepth > 0) {
        Ref<IND2SharedReceiveQueue> srq;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 4, 1, 0,
                                                                     0, 0, srq.pv()));
        CheckQi(srq.get(), {&IID_IND2SharedReceiveQueue, &IID_IND2Overlapped}, "SRQ");
    }
}

// Each Create method takes its base IID (R040) and refuses another one
// with E_NOINTERFACE (§3.0, derived).
TEST(Discovery, CreateMethodsTakeTheirIidR040) {
    Node node;
    ASSERT_EQ(node.Open(PrimaryAddress()), "");
    IND2Adapter *a = node.adapter.get();
    Ref<IND2CompletionQueue> cq;
    EXPECT_ND(ND_SUCCESS, a->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.pv()));
    Ref<IUnknown> bad;
    EXPECT_ND(E_NOINTERFACE, a->CreateCompletionQueue(IID_IND2Listener, node.file, 16, 0, 0, bad.pv()));
    Ref<IND2MemoryRegion> mr;
    EXPECT_ND(ND_SUCCESS, a->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.pv()));
    EXPECT_ND(E_NOINTERFACE, a->CreateMemoryRegion(IID_IND2Listener, node.file, bad.pv()));
    Ref<IND2MemoryWindow> mw;
    EXPECT_ND(ND_SUCCESS, a->CreateMemoryWindow(IID_IND2MemoryWindow, mw.pv()));
    EXPECT_ND(E_NOINTERFACE, a->CreateMemoryWindow(IID_IND2Listener, bad.pv()));
    Ref<IND2QueuePair> qp;
    EXPECT_ND(ND_SUCCESS, a->CreateQueuePair(IID_IND2QueuePair, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0, qp.pv()));
    EXPECT_ND(E_NOINTERFACE,
              a->CreateQueuePair(IID_IND2Listener, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0, bad.pv()));
    Ref<IND2Connector> c;
    EXPECT_ND(ND_SUCCESS, a->CreateConnector(IID_IND2Connector, node.file, c.pv()));
    EXPECT_ND(E_NOINTERFACE, a->CreateConnector(IID_IND2Listener, node.file, bad.pv()));
    Ref<IND2Listener> l;
    EXPECT_ND(ND_SUCCESS, a->CreateListener(IID_IND2Listener, node.file, l.pv()));
    EXPECT_ND(E_NOINTERFACE, a->CreateListener(IID_IND2Connector, node.file, bad.pv()));
    if (node.info.MaxSharedReceiveQueueDepth > 0) {
        Ref<IND2SharedReceiveQueue> srq;
        EXPECT_ND(ND_SUCCESS,
                  a->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 4, 1, 0, 0, 0, srq.pv()));
        EXPECT_ND(E_NOINTERFACE, a->CreateSharedReceiveQueue(IID_IND2Listener, node.file, 4, 1, 0, 0, 0, bad.pv()));
        Ref<IND2QueuePair> sqp;
        EXPECT_ND(ND_SUCCESS, a->CreateQueuePairWithSrq(IID_IND2QueuePair, cq.get(), cq.get(), srq.get(), nullptr, 4,
                                                        1, 0, sqp.pv()));
        EXPECT_ND(E_NOINTERFACE, a->CreateQueuePairWithSrq(IID_IND2Listener, cq.get(), cq.get(), srq.get(), nullptr,
                                                           4, 1, 0, bad.pv()));
    }
}

// ---------------------------------------------------------------------- Types

TEST(Types, StatusValuesR032) {
    struct Row {
        HRESULT value;
        uint32_t expected;
        const char *name;
    } rows[] = {
        {ND_SUCCESS, 0x00000000, "ND_SUCCESS"},
        {ND_TIMEOUT, 0x00000102, "ND_TIMEOUT"},
        {ND_PENDING, 0x00000103, "ND_PENDING"},
        {ND_BUFFER_OVERFLOW, 0x80000005, "ND_BUFFER_OVERFLOW"},
        {ND_DEVICE_BUSY, 0x80000011, "ND_DEVICE_BUSY"},
        {ND_NO_MORE_ENTRIES, 0x8000001A, "ND_NO_MORE_ENTRIES"},
        {ND_UNSUCCESSFUL, 0xC0000001, "ND_UNSUCCESSFUL"},
        {ND_ACCESS_VIOLATION, 0xC0000005, "ND_ACCESS_VIOLATION"},
        {ND_INVALID_HANDLE, 0xC0000008, "ND_INVALID_HANDLE"},
        {ND_INVALID_DEVICE_REQUEST, 0xC0000010, "ND_INVALID_DEVICE_REQUEST"},
        {ND_INVALID_PARAMETER, 0xC000000D, "ND_INVALID_PARAMETER"},
        {ND_NO_MEMORY, 0xC0000017, "ND_NO_MEMORY"},
        {ND_INVALID_PARAMETER_MIX, 0xC0000030, "ND_INVALID_PARAMETER_MIX"},
        {ND_DATA_OVERRUN, 0xC000003C, "ND_DATA_OVERRUN"},
        {ND_SHARING_VIOLATION, 0xC0000043, "ND_SHARING_VIOLATION"},
        {ND_INSUFFICIENT_RESOURCES, 0xC000009A, "ND_INSUFFICIENT_RESOURCES"},
        {ND_DEVICE_NOT_READY, 0xC00000A3, "ND_DEVICE_NOT_READY"},
        {ND_IO_TIMEOUT, 0xC00000B5, "ND_IO_TIMEOUT"},
        {ND_NOT_SUPPORTED, 0xC00000BB, "ND_NOT_SUPPORTED"},
        {ND_INTERNAL_ERROR, 0xC00000E5, "ND_INTERNAL_ERROR"},
        {ND_INVALID_PARAMETER_1, 0xC00000EF, "ND_INVALID_PARAMETER_1"},
        {ND_INVALID_PARAMETER_2, 0xC00000F0, "ND_INVALID_PARAMETER_2"},
        {ND_INVALID_PARAMETER_3, 0xC00000F1, "ND_INVALID_PARAMETER_3"},
        {ND_INVALID_PARAMETER_4, 0xC00000F2, "ND_INVALID_PARAMETER_4"},
        {ND_INVALID_PARAMETER_5, 0xC00000F3, "ND_INVALID_PARAMETER_5"},
        {ND_INVALID_PARAMETER_6, 0xC00000F4, "ND_INVALID_PARAMETER_6"},
        {ND_INVALID_PARAMETER_7, 0xC00000F5, "ND_INVALID_PARAMETER_7"},
        {ND_INVALID_PARAMETER_8, 0xC00000F6, "ND_INVALID_PARAMETER_8"},
        {ND_INVALID_PARAMETER_9, 0xC00000F7, "ND_INVALID_PARAMETER_9"},
        {ND_INVALID_PARAMETER_10, 0xC00000F8, "ND_INVALID_PARAMETER_10"},
        {ND_CANCELED, 0xC0000120, "ND_CANCELED"},
        {ND_REMOTE_ERROR, 0xC000013D, "ND_REMOTE_ERROR"},
        {ND_INVALID_ADDRESS, 0xC0000141, "ND_INVALID_ADDRESS"},
        {ND_INVALID_DEVICE_STATE, 0xC0000184, "ND_INVALID_DEVICE_STATE"},
        {ND_INVALID_BUFFER_SIZE, 0xC0000206, "ND_INVALID_BUFFER_SIZE"},
        {ND_TOO_MANY_ADDRESSES, 0xC0000209, "ND_TOO_MANY_ADDRESSES"},
        {ND_ADDRESS_ALREADY_EXISTS, 0xC000020A, "ND_ADDRESS_ALREADY_EXISTS"},
        {ND_CONNECTION_REFUSED, 0xC0000236, "ND_CONNECTION_REFUSED"},
        {ND_CONNECTION_INVALID, 0xC000023A, "ND_CONNECTION_INVALID"},
        {ND_CONNECTION_ACTIVE, 0xC000023B, "ND_CONNECTION_ACTIVE"},
        {ND_NETWORK_UNREACHABLE, 0xC000023C, "ND_NETWORK_UNREACHABLE"},
        {ND_HOST_UNREACHABLE, 0xC000023D, "ND_HOST_UNREACHABLE"},
        {ND_CONNECTION_ABORTED, 0xC0000241, "ND_CONNECTION_ABORTED"},
        {ND_DEVICE_REMOVED, 0xC00002B6, "ND_DEVICE_REMOVED"},
    };
    for (const Row &r : rows) EXPECT_EQ(static_cast<uint32_t>(r.value), r.expected) << r.name;
    EXPECT_EQ(ND_LOCAL_LENGTH, ND_DATA_OVERRUN);
    EXPECT_EQ(ND_INVALIDATION_ERROR, ND_INVALID_DEVICE_REQUEST);
    // Severity: success codes are SUCCEEDED, warnings and errors FAILED.
    EXPECT_TRUE(SUCCEEDED(ND_PENDING) && SUCCEEDED(ND_TIMEOUT));
    EXPECT_TRUE(FAILED(ND_BUFFER_OVERFLOW) && FAILED(ND_DEVICE_BUSY) && FAILED(ND_NO_MORE_ENTRIES));
}

TEST(Types, StructuresAndFlags) {  // §2.1, §2.4, §2.5 (binary layout applications rely on)
    EXPECT_EQ(sizeof(ND2_ADAPTER_INFO), 96u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, MaxRegistrationSize), 16u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, MaxInitiatorSge), 32u);
    EXPECT_EQ(offsetof(ND2_ADAPTER_INFO, AdapterFlags), 92u);
    EXPECT_EQ(sizeof(ND2_SGE), 16u);
    EXPECT_EQ(offsetof(ND2_SGE, MemoryRegionToken), 12u);
    EXPECT_EQ(sizeof(ND2_RESULT), 32u);
    EXPECT_EQ(offsetof(ND2_RESULT, RequestType), 24u);
    EXPECT_EQ(sizeof(OVERLAPPED), 32u);
    EXPECT_EQ(sizeof(SOCKET_ADDRESS), 16u);
    EXPECT_EQ(offsetof(SOCKET_ADDRESS_LIST, Address), 8u);
    EXPECT_EQ(sizeof(ULONG), 4u);
    EXPECT_EQ(sizeof(HRESULT), 4u);
    EXPECT_EQ(ND_MR_FLAG_ALLOW_REMOTE_WRITE, 0x5u);
    EXPECT_EQ(ND_OP_FLAG_INLINE, 0x20u);
    EXPECT_EQ(ND_CQ_NOTIFY_SOLICITED, 2u);
    EXPECT_EQ(ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, 0x10000u);
    EXPECT_EQ(static_cast<int>(Nd2RequestTypeWrite), 5);
}

// --------------------------------------------------------------------- Helper
// The helper library (libopennd's Nd* functions) over the catalog; only
// with --provider (the provider must be in the catalog).

TEST(Helper, StartupCleanupCountedR154R155) {
    // Balanced pairs on top of the suite's own startup keep it started.
    ASSERT_ND(S_OK, NdStartup());
    ASSERT_ND(S_OK, NdStartup());
    EXPECT_ND(S_OK, NdCleanup());
    EXPECT_ND(S_OK, NdCleanup());
    IpAddress a = PrimaryAddress();
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
    // Drop the suite's own reference: now every call reports not started.
    ASSERT_ND(S_OK, NdCleanup());
    EXPECT_ND(ND_DEVICE_NOT_READY, NdCleanup()) << "NdCleanup without NdStartup";
    SIZE_T cb = 0;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdQueryAddressList(0, nullptr, &cb));
    sockaddr_storage local{};
    SIZE_T lcb = sizeof local;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdResolveAddress(a.sa(), a.length(), reinterpret_cast<sockaddr *>(&local), &lcb));
    EXPECT_ND(ND_DEVICE_NOT_READY, NdCheckAddress(a.sa(), a.length()));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_DEVICE_NOT_READY, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.pv()));
    ASSERT_ND(S_OK, NdStartup());  // restore the suite's reference
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
}

TEST(Helper, QueryAddressListFlagsR156) {
    SIZE_T cb = 0;
    ASSERT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(0, nullptr, &cb));
    std::vector<uint8_t> buf(cb);
    auto *list = reinterpret_cast<SOCKET_ADDRESS_LIST *>(buf.data());
    ASSERT_ND(ND_SUCCESS, NdQueryAddressList(0, list, &cb));
    std::vector<IpAddress> all = AddressListOf(list);
    for (const auto &a : TestAddresses()) EXPECT_TRUE(Contains(all, ParseIp(a))) << a;
    // The emulator flag is ignored; excluding v1 changes nothing (OpenND
    // loads no v1 providers); excluding v2 leaves nothing: ND_SUCCESS, size 0,
    // buffer untouched.
    SIZE_T cb_e = 0, cb_v1 = 0;
    EXPECT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(ND_QUERY_EXCLUDE_EMULATOR_ADDRESSES, nullptr, &cb_e));
    EXPECT_EQ(cb_e, cb);
    EXPECT_ND(ND_BUFFER_OVERFLOW, NdQueryAddressList(ND_QUERY_EXCLUDE_NDv1_ADDRESSES, nullptr, &cb_v1));
    EXPECT_EQ(cb_v1, cb);
    std::vector<uint8_t> untouched(64, 0xCD);
    SIZE_T cb_v2 = untouched.size();
    EXPECT_ND(ND_SUCCESS, NdQueryAddressList(ND_QUERY_EXCLUDE_NDv2_ADDRESSES,
                                             reinterpret_cast<SOCKET_ADDRESS_LIST *>(untouched.data()), &cb_v2));
    EXPECT_EQ(cb_v2, 0u);
    for (uint8_t b : untouched) ASSERT_EQ(b, 0xCD);
}

TEST(Helper, CheckAddressAndOpenAdapterValidationR157) {
    IpAddress a = PrimaryAddress();
    EXPECT_ND(ND_SUCCESS, NdCheckAddress(a.sa(), a.length()));
    EXPECT_ND(ND_INVALID_PARAMETER_2, NdCheckAddress(a.sa(), sizeof(sockaddr) - 1));
    if (a.family() == AF_INET6) {
        EXPECT_ND(ND_INVALID_PARAMETER_2, NdCheckAddress(a.sa(), sizeof(sockaddr_in6) - 1));
    }
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    EXPECT_ND(ND_INVALID_ADDRESS, NdCheckAddress(reinterpret_cast<sockaddr *>(&un), sizeof un));
    IpAddress unknown = UnservedAddress(a.family());
    EXPECT_ND(ND_INVALID_ADDRESS, NdCheckAddress(unknown.sa(), unknown.length()));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_INVALID_PARAMETER_2, NdOpenAdapter(IID_IND2Adapter, a.sa(), sizeof(sockaddr) - 1, adapter.pv()));
    EXPECT_ND(ND_INVALID_ADDRESS,
              NdOpenAdapter(IID_IND2Adapter, reinterpret_cast<sockaddr *>(&un), sizeof un, adapter.pv()));
    EXPECT_ND(ND_INVALID_ADDRESS, NdOpenAdapter(IID_IND2Adapter, unknown.sa(), unknown.length(), adapter.pv()));
    EXPECT_ND(ND_SUCCESS, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.pv()));
}

TEST(Helper, ResolveAddressGivesLocalAddressWithPortZero) {  // COMPAT
    for (const auto &text : TestAddresses()) {
        IpAddress remote = WithPort(ParseIp(text), 4567);
        sockaddr_storage local{};
        SIZE_T cb = sizeof local;
        ASSERT_ND(ND_SUCCESS, NdResolveAddress(remote.sa(), remote.length(), reinterpret_cast<sockaddr *>(&local), &cb))
            << text;
        IpAddress l;
        ASSERT_TRUE(opennd::kit::FromSockaddr(reinterpret_cast<sockaddr *>(&local), cb, &l));
        EXPECT_TRUE(opennd::kit::SameIp(l.sa(), remote.sa())) << IpText(l);
        EXPECT_EQ(PortOf(l), 0) << "NdResolveAddress must return port 0";
    }
}

// A v1 adapter IID (Appendix B).
constexpr GUID kIID_INDAdapter = {0xA023C5A0, 0x5B73, 0x43BC, {0x8D, 0x20, 0x33, 0xAA, 0x07, 0xE9, 0x51, 0x0F}};

TEST(Helper, OpenAdapterRoutesByVersionR158) {
    IpAddress a = PrimaryAddress();
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_SUCCESS, NdOpenAdapter(IID_IND2Adapter, a.sa(), a.length(), adapter.pv()));
    // IID_INDAdapter goes to v1 providers only; none serves this address.
    Ref<IUnknown> v1;
    EXPECT_ND(ND_INVALID_ADDRESS, NdOpenAdapter(kIID_INDAdapter, a.sa(), a.length(), v1.pv()));
}

}  // namespace
}  // namespace ndc
