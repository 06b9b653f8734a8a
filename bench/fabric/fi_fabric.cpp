// fi_rma_bw's shared half: errors and timeouts, the socketpair, and one
// side's fabric (getinfo with the provider's mr_mode honoured, endpoint,
// registered buffer, the peer's address and key).
#include "fi_fabric.h"

namespace fi_bench {

pid_t g_child = -1;
const char *g_role = "fi_rma_bw";
int g_timeout = 30;

void ReapChild() {
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        while (waitpid(g_child, nullptr, 0) < 0 && errno == EINTR) {
        }
        g_child = -1;
    }
}

[[noreturn]] void Die(const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "fi_rma_bw (%s): error: %s\n", g_role, msg);
    std::fflush(stderr);
    ReapChild();
    _exit(1);
}

void OnAlarm(int) {
    char msg[128];
    int n = std::snprintf(msg, sizeof msg, "fi_rma_bw (%s): error: timed out after %d s\n", g_role, g_timeout);
    if (n > 0) (void)!write(2, msg, static_cast<size_t>(n));
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, nullptr, 0);
    }
    _exit(1);
}

void CheckFi(int ret, const char *call) {
    if (ret < 0) Die("%s: %s (%d)", call, fi_strerror(-ret), ret);
}

// --- socketpair messages ---------------------------------------------------

void WriteAll(int fd, const void *buf, size_t len) {
    const char *p = static_cast<const char *>(buf);
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) Die("socketpair write: %s", std::strerror(errno));
        p += n;
        len -= static_cast<size_t>(n);
    }
}

void ReadAll(int fd, void *buf, size_t len, const char *what) {
    char *p = static_cast<char *>(buf);
    while (len > 0) {
        pollfd pfd{fd, POLLIN, 0};
        int r = poll(&pfd, 1, g_timeout * 1000);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) Die("no %s from the peer in %d s", what, g_timeout);
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) Die("the peer closed the socketpair before sending %s", what);
        if (n < 0) Die("socketpair read: %s", std::strerror(errno));
        p += n;
        len -= static_cast<size_t>(n);
    }
}

// --- one side's fabric -------------------------------------------------------

std::string MrModeText(uint64_t m) {
    static const std::pair<uint64_t, const char *> bits[] = {
        {FI_MR_LOCAL, "local"},        {FI_MR_RAW, "raw"},         {FI_MR_VIRT_ADDR, "virt_addr"},
        {FI_MR_ALLOCATED, "allocated"}, {FI_MR_PROV_KEY, "prov_key"}, {FI_MR_MMU_NOTIFY, "mmu_notify"},
        {FI_MR_RMA_EVENT, "rma_event"}, {FI_MR_ENDPOINT, "endpoint"}, {FI_MR_HMEM, "hmem"},
    };
    std::string s;
    for (auto &[bit, name] : bits)
        if (m & bit) s += (s.empty() ? "" : ",") + std::string(name);
    return s.empty() ? "none" : s;
}

fi_info *GetInfo(const std::string &provider, Op op) {
    fi_info *hints = fi_allocinfo();
    if (!hints) Die("fi_allocinfo failed");
    hints->caps = op == Op::Send ? FI_MSG | FI_SEND | FI_RECV : FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = static_cast<int>(kMrModes);
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider.c_str());
    // Socket-based providers bind to loopback: both processes are on this host.
    const bool sockets = provider.find("tcp") != std::string::npos || provider.find("sockets") != std::string::npos;
    if (sockets) hints->addr_format = FI_SOCKADDR_IN;
    fi_info *info = nullptr;
    int ret = fi_getinfo(kApiVersion, sockets ? "127.0.0.1" : nullptr, nullptr, sockets ? FI_SOURCE : 0, hints,
                         &info);
    fi_freeinfo(hints);
    if (ret) {
        if (info) fi_freeinfo(info);
        return nullptr;
    }
    return info;
}

// Opens the fabric, endpoint and registered buffer; the peer is not known yet.
void Open(Fabric &f, const Options &o) {
    f.info = GetInfo(o.provider, o.op);
    if (!f.info && !o.provider_given) f.info = GetInfo("tcp", o.op);  // the default failed: plain tcp (its own RDM)
    if (!f.info)
        Die("fi_getinfo: no provider \"%s\" with FI_EP_RDM and %s%s", o.provider.c_str(),
            o.op == Op::Send ? "FI_MSG" : "FI_RMA", o.provider_given ? "" : " (nor \"tcp\")");
    const fi_info *i = f.info;
    if (i->ep_attr->max_msg_size && o.size > i->ep_attr->max_msg_size)
        Die("--size %zu is over the provider's max_msg_size %zu", o.size, i->ep_attr->max_msg_size);

    FI_CHECK(fi_fabric(i->fabric_attr, &f.fabric, nullptr));
    FI_CHECK(fi_domain(f.fabric, f.info, &f.domain, nullptr));

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = static_cast<size_t>(std::max(o.window * 2, 128));
    FI_CHECK(fi_cq_open(f.domain, &cq_attr, &f.cq, nullptr));

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = 2;
    FI_CHECK(fi_av_open(f.domain, &av_attr, &f.av, nullptr));

    FI_CHECK(fi_endpoint(f.domain, f.info, &f.ep, nullptr));
    FI_CHECK(fi_ep_bind(f.ep, &f.av->fid, 0));
    FI_CHECK(fi_ep_bind(f.ep, &f.cq->fid, FI_TRANSMIT | FI_RECV));
    FI_CHECK(fi_enable(f.ep));

    // A page-aligned buffer whose pages exist (FI_MR_ALLOCATED asks for that).
    f.buf_len = (o.size + 4095) / 4096 * 4096;
    f.buf = static_cast<unsigned char *>(std::aligned_alloc(4096, f.buf_len));
    if (!f.buf) Die("cannot allocate %zu bytes", f.buf_len);
    std::memset(f.buf, 0, f.buf_len);

    // Without FI_MR_PROV_KEY the application picks the key: one per process is enough.
    const uint64_t requested_key = (f.MrMode() & FI_MR_PROV_KEY) ? 0 : 0xfab0 + static_cast<uint64_t>(getpid() & 0xff);
    FI_CHECK(fi_mr_reg(f.domain, f.buf, o.size, kAccess, 0, requested_key, 0, &f.mr, nullptr));
    if (f.MrMode() & FI_MR_ENDPOINT) {
        FI_CHECK(fi_mr_bind(f.mr, &f.ep->fid, 0));
        FI_CHECK(fi_mr_enable(f.mr));
    }
    f.desc = fi_mr_desc(f.mr);  // passed on every operation; required with FI_MR_LOCAL
}

PeerInfo Describe(Fabric &f) {
    PeerInfo me;
    size_t len = sizeof me.name;
    FI_CHECK(fi_getname(&f.ep->fid, me.name, &len));
    me.name_len = len;
    me.addr = (f.MrMode() & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(f.buf) : 0;
    if (f.MrMode() & FI_MR_RAW) {
        size_t key_len = sizeof me.raw;
        uint64_t base = 0;
        FI_CHECK(fi_mr_raw_attr(f.mr, &base, me.raw, &key_len, 0));
        me.raw_len = key_len;
        me.addr = base;
    } else {
        me.key = fi_mr_key(f.mr);
        if (me.key == FI_KEY_NOTAVAIL) Die("fi_mr_key: no key available");
    }
    return me;
}

void Learn(Fabric &f, const PeerInfo &peer) {
    if (peer.name_len == 0 || peer.name_len > sizeof peer.name || peer.raw_len > sizeof peer.raw)
        Die("bad peer description");
    int n = fi_av_insert(f.av, peer.name, 1, &f.peer, 0, nullptr);
    if (n != 1) Die("fi_av_insert: inserted %d of 1 addresses%s%s", n, n < 0 ? ": " : "", n < 0 ? fi_strerror(-n) : "");
    f.peer_addr = peer.addr;
    if (f.MrMode() & FI_MR_RAW) {
        FI_CHECK(fi_mr_map_raw(f.domain, peer.addr, const_cast<uint8_t *>(peer.raw), peer.raw_len, &f.peer_key, 0));
        f.peer_key_mapped = true;
    } else {
        f.peer_key = peer.key;
    }
}

[[noreturn]] void CqError(Fabric &f) {
    fi_cq_err_entry err{};
    ssize_t r = fi_cq_readerr(f.cq, &err, 0);
    if (r < 0) Die("fi_cq_readerr: %s", fi_strerror(static_cast<int>(-r)));
    Die("completion error: %s (%d), provider: %s", fi_strerror(err.err), err.err,
        fi_cq_strerror(f.cq, err.prov_errno, err.err_data, nullptr, 0));
}

// Opens the endpoint, fills the buffer with `fill` and trades endpoint
// descriptions with the other process.
void Meet(Fabric &f, int sock, const Options &o, char fill) {
    Open(f, o);
    std::memset(f.buf, fill, o.size);
    PeerInfo me = Describe(f), peer;
    WriteAll(sock, &me, sizeof me);
    ReadAll(sock, &peer, sizeof peer, "its endpoint description");
    Learn(f, peer);
}

}  // namespace fi_bench
