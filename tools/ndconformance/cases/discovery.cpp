// Provider and adapter discovery: the catalog entry (Registration), the
// library's entry points, IND2Provider and IND2Adapter address handling,
// QueryInterface and the Create methods' IIDs (Discovery). The status and
// structure definitions and the helper library: types_and_helper.cpp.
#include <dlfcn.h>

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
    EXPECT_ND(ND_SUCCESS, p->QueryInterface(IID_IND2Provider, again.put_void()));
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
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Node node;
    node.local = a;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, node.adapter.put_void()));
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
        ASSERT_ND(ND_SUCCESS, OpenAdapterFor(PrimaryAddress(), adapter.put()));
        HANDLE file = nullptr;
        ASSERT_ND(ND_SUCCESS, adapter->CreateOverlappedFile(&file));
        Ref<IND2CompletionQueue> cq;
        ASSERT_ND(ND_SUCCESS, adapter->CreateCompletionQueue(IID_IND2CompletionQueue, file, 16, 0, 0, cq.put_void()));
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
        EXPECT_EQ(static_cast<size_t>(sa.iSockaddrLength), opennd::net::SockaddrLength(fam)) << "entry " << i;
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
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    std::vector<IpAddress> list;
    CheckAddressListContract([&](SOCKET_ADDRESS_LIST *l, ULONG *cb) { return p->QueryAddressList(l, cb); }, &list);
    for (const auto &a : TestAddresses())
        EXPECT_TRUE(Contains(list, ParseIp(a))) << a << " is served but missing from the provider's address list";
}

TEST(Discovery, AdapterQueryAddressListR039) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, adapter.put_void()));
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
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    IpAddress a = PrimaryAddress();
    UINT64 id0 = 0, id1 = 1;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id0));
    IpAddress with_port = WithPort(a, 7471);
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(with_port.sa(), with_port.length(), &id1));
    EXPECT_EQ(id0, id1) << "ResolveAddress depends on the port";
    // Every address of the adapter resolves to the adapter's ID.
    Ref<IND2Adapter> adapter;
    ASSERT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id0, adapter.put_void()));
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

TEST(Discovery, ResolveUnservedAddressR013) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    for (int family : {AF_INET, AF_INET6}) {
        IpAddress x = UnservedAddress(family);
        UINT64 id = 0;
        EXPECT_ND(ND_INVALID_ADDRESS, p->ResolveAddress(x.sa(), x.length(), &id)) << IpText(x);
    }
}

TEST(Discovery, OpenAdapterR014) {
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(ND_SUCCESS, p->OpenAdapter(IID_IND2Adapter, id, adapter.put_void()));
    EXPECT_TRUE(adapter);
    // An adapter ID nobody handed out.
    std::set<UINT64> known{id};
    UINT64 bogus = id ^ 0x5A5A5A5A00000000ull;
    if (known.count(bogus)) bogus = id + 0x1000;
    Ref<IND2Adapter> none;
    EXPECT_ND(ND_INVALID_PARAMETER, p->OpenAdapter(IID_IND2Adapter, bogus, none.put_void()));
    EXPECT_FALSE(none);
}

TEST(Discovery, OpenAdapterUnknownIidIsNoInterface) {  // §3.0 (derived: COM)
    Ref<IND2Provider> p;
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    IpAddress a = PrimaryAddress();
    UINT64 id = 0;
    ASSERT_ND(ND_SUCCESS, p->ResolveAddress(a.sa(), a.length(), &id));
    Ref<IND2Adapter> adapter;
    EXPECT_ND(E_NOINTERFACE, p->OpenAdapter(IID_IND2Listener, id, adapter.put_void()));
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
    ASSERT_ND(ND_SUCCESS, NewProvider(p.put()));
    CheckQi(p.get(), {&IID_IND2Provider}, "provider");
    CheckQi(node.adapter.get(), {&IID_IND2Adapter}, "adapter");
    Ref<IND2CompletionQueue> cq;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.put_void()));
    CheckQi(cq.get(), {&IID_IND2CompletionQueue, &IID_IND2Overlapped}, "CQ");
    Ref<IND2MemoryRegion> mr;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    CheckQi(mr.get(), {&IID_IND2MemoryRegion, &IID_IND2Overlapped}, "MR");
    Ref<IND2MemoryWindow> mw;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    CheckQi(mw.get(), {&IID_IND2MemoryWindow}, "MW");
    Ref<IND2QueuePair> qp;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateQueuePair(IID_IND2QueuePair, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0,
                                                        qp.put_void()));
    CheckQi(qp.get(), {&IID_IND2QueuePair}, "QP");
    Ref<IND2Connector> c;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    CheckQi(c.get(), {&IID_IND2Connector, &IID_IND2Overlapped}, "connector");
    Ref<IND2Listener> l;
    ASSERT_ND(ND_SUCCESS, node.adapter->CreateListener(IID_IND2Listener, node.file, l.put_void()));
    CheckQi(l.get(), {&IID_IND2Listener, &IID_IND2Overlapped}, "listener");
    if (node.info.MaxSharedReceiveQueueDepth > 0) {
        Ref<IND2SharedReceiveQueue> srq;
        ASSERT_ND(ND_SUCCESS, node.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 4, 1, 0,
                                                                     0, 0, srq.put_void()));
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
    EXPECT_ND(ND_SUCCESS, a->CreateCompletionQueue(IID_IND2CompletionQueue, node.file, 16, 0, 0, cq.put_void()));
    Ref<IUnknown> bad;
    EXPECT_ND(E_NOINTERFACE, a->CreateCompletionQueue(IID_IND2Listener, node.file, 16, 0, 0, bad.put_void()));
    Ref<IND2MemoryRegion> mr;
    EXPECT_ND(ND_SUCCESS, a->CreateMemoryRegion(IID_IND2MemoryRegion, node.file, mr.put_void()));
    EXPECT_ND(E_NOINTERFACE, a->CreateMemoryRegion(IID_IND2Listener, node.file, bad.put_void()));
    Ref<IND2MemoryWindow> mw;
    EXPECT_ND(ND_SUCCESS, a->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()));
    EXPECT_ND(E_NOINTERFACE, a->CreateMemoryWindow(IID_IND2Listener, bad.put_void()));
    Ref<IND2QueuePair> qp;
    EXPECT_ND(ND_SUCCESS, a->CreateQueuePair(IID_IND2QueuePair, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0, qp.put_void()));
    EXPECT_ND(E_NOINTERFACE,
              a->CreateQueuePair(IID_IND2Listener, cq.get(), cq.get(), nullptr, 4, 4, 1, 1, 0, bad.put_void()));
    Ref<IND2Connector> c;
    EXPECT_ND(ND_SUCCESS, a->CreateConnector(IID_IND2Connector, node.file, c.put_void()));
    EXPECT_ND(E_NOINTERFACE, a->CreateConnector(IID_IND2Listener, node.file, bad.put_void()));
    Ref<IND2Listener> l;
    EXPECT_ND(ND_SUCCESS, a->CreateListener(IID_IND2Listener, node.file, l.put_void()));
    EXPECT_ND(E_NOINTERFACE, a->CreateListener(IID_IND2Connector, node.file, bad.put_void()));
    if (node.info.MaxSharedReceiveQueueDepth > 0) {
        Ref<IND2SharedReceiveQueue> srq;
        EXPECT_ND(ND_SUCCESS,
                  a->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node.file, 4, 1, 0, 0, 0, srq.put_void()));
        EXPECT_ND(E_NOINTERFACE, a->CreateSharedReceiveQueue(IID_IND2Listener, node.file, 4, 1, 0, 0, 0, bad.put_void()));
        Ref<IND2QueuePair> sqp;
        EXPECT_ND(ND_SUCCESS, a->CreateQueuePairWithSrq(IID_IND2QueuePair, cq.get(), cq.get(), srq.get(), nullptr, 4,
                                                        1, 0, sqp.put_void()));
        EXPECT_ND(E_NOINTERFACE, a->CreateQueuePairWithSrq(IID_IND2Listener, cq.get(), cq.get(), srq.get(), nullptr,
                                                           4, 1, 0, bad.put_void()));
    }
}

}  // namespace
}  // namespace ndc
