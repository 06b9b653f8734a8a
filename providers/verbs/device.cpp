// Opening a device and reading its descriptors (device.h). The adapter's
// limits come from ibv_query_device/ibv_query_port and an inline probe
// (docs/verbs.md has each field's source and the values on rxe and siw).
#include "device.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "opennd/kit/clock.h"
#include "opennd/log.h"
#include "opennd/params.h"

namespace opennd::verbs {
namespace {

bool NonBlocking(int fd) {
    const int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// The largest max_inline_data a queue pair is created with: verbs has no
// query for it, so create queue pairs until one fails (binary search; a
// device may also report back what it really gave).
uint32_t ProbeInline(ibv_context *ctx, ibv_pd *pd) {
    ibv_cq *cq = ibv_create_cq(ctx, 2, nullptr, nullptr, 0);
    if (!cq) return 0;
    auto fits = [&](uint32_t size, uint32_t *got) {
        ibv_qp_init_attr a{};
        a.send_cq = a.recv_cq = cq;
        a.qp_type = IBV_QPT_RC;
        a.cap = {1, 1, 1, 1, size};
        ibv_qp *qp = ibv_create_qp(pd, &a);
        if (!qp) return false;
        *got = std::max(size, a.cap.max_inline_data);
        ibv_destroy_qp(qp);
        return true;
    };
    uint32_t best = 0, lo = 0, hi = 4096, got = 0;
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (fits(mid, &got)) {
            best = std::max(best, got);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    ibv_destroy_cq(cq);
    return best;
}

ND2_ADAPTER_INFO Describe(ibv_context *ctx, const ibv_device_attr &d,
                          uint32_t inline_size, const DeviceCaps &caps) {
    ND2_ADAPTER_INFO info{};
    info.InfoVersion = ND_VERSION_2;
    info.VendorId = static_cast<UINT16>(d.vendor_id);
    info.DeviceId = static_cast<UINT16>(d.vendor_part_id);
    info.AdapterId = ibv_get_device_guid(ctx->device);
    info.MaxRegistrationSize = d.max_mr_size;
    info.MaxWindowSize = d.max_mr_size;  // windows are registrations (memory.h)
    info.MaxInitiatorSge = info.MaxReceiveSge = static_cast<ULONG>(d.max_sge);
    // One receive SGE limit for queue pairs and SRQs (ND has one): rxe's
    // SRQ takes fewer SGEs (27) than its queue pairs (32).
    if (d.max_srq && d.max_srq_sge)
        info.MaxReceiveSge = std::min<ULONG>(info.MaxReceiveSge, static_cast<ULONG>(d.max_srq_sge));
    info.MaxReadSge = static_cast<ULONG>(d.max_sge_rd ? d.max_sge_rd : 1);
    info.MaxTransferLength = static_cast<ULONG>(std::min<uint64_t>(caps.max_transfer, 0xFFFFFFFFu));
    info.MaxInlineDataSize = inline_size;
    info.MaxInboundReadLimit = static_cast<ULONG>(d.max_qp_rd_atom);
    info.MaxOutboundReadLimit = static_cast<ULONG>(d.max_qp_init_rd_atom);
    // Queues as deep as the device allows cannot all be created at once
    // (rxe: 1 Mi entries of 32 SGEs each); what one queue pair may have
    // with every other limit at its maximum is declared instead.
    info.MaxReceiveQueueDepth = info.MaxInitiatorQueueDepth = static_cast<ULONG>(std::min(d.max_qp_wr, 16384));
    info.MaxSharedReceiveQueueDepth = d.max_srq ? static_cast<ULONG>(std::min(d.max_srq_wr, 16384)) : 0;
    info.MaxCompletionQueueDepth = static_cast<ULONG>(d.max_cqe);
    info.InlineRequestThreshold = std::min<ULONG>(inline_size, 160);
    info.LargeRequestThreshold = 64 << 10;
    // IB/RoCE: the REQ's and the REJ's room behind rdma_cm's header (a REP
    // has more, but ND has one size for Accept and Reject). iWARP: what an
    // MPA v2 frame carries (measured on siw: 251 both ways).
    info.MaxCallerData = caps.iwarp ? 251 : 56;
    info.MaxCalleeData = caps.iwarp ? 251 : 148;
    // Interrupt moderation: the kit CQ's IOpenNdCqModeration, over the
    // completion channel's events (a device's own, ibv_modify_cq, is not
    // used).
    info.AdapterFlags = ND_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED | ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED |
                        ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED |
                        (caps.resize_cq ? ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED : 0);
    return info;
}

std::mutex g_devices_mu;
std::unordered_map<ibv_context *, std::weak_ptr<Device>> *g_devices;  // while any is open

}  // namespace

// The one watcher of the device's descriptors.
class Device::Reader final : public kit::Watched {
public:
    explicit Reader(Device *d) : d_(d) {}
    bool TryRef() override { return true; }  // the thread holds the device while it calls us
    void Unref() override {}
    void OnReadable(int fd) override {
        if (fd == d_->cm_->fd) d_->ReadCm();
        else if (fd == d_->comp_->fd) d_->ReadCompletions();
        else if (fd == d_->ctx_->async_fd) d_->ReadAsync();
        else if (fd == d_->defer_fd_) d_->RunDeferred();
    }

private:
    Device *d_;
};

std::shared_ptr<Device> Device::Get(ibv_context *ctx) {
    std::lock_guard<std::mutex> lock(g_devices_mu);
    if (!g_devices) g_devices = new std::unordered_map<ibv_context *, std::weak_ptr<Device>>;
    if (auto d = (*g_devices)[ctx].lock()) return d;
    std::shared_ptr<Device> d(new Device);
    if (!d->Open(ctx) || !d->Start(d, kit::ProgressConfig{})) return nullptr;  // (not in the map: no lock taken)
    d->reader_ = std::make_unique<Reader>(d.get());  // the thread's epoll exists once it started
    for (int fd : {d->cm_->fd, d->comp_->fd, ctx->async_fd, d->defer_fd_}) d->Watch(fd, d->reader_.get());
    (*g_devices)[ctx] = d;
    d->listed_ = true;
    return d;
}

bool Device::Open(ibv_context *ctx) {
    ctx_ = ctx;
    ibv_device_attr d{};
    ibv_port_attr port{};
    if (ibv_query_device(ctx, &d) != 0 || ibv_query_port(ctx, 1, &port) != 0) return false;
    pd_ = ibv_alloc_pd(ctx);
    comp_ = ibv_create_comp_channel(ctx);
    cm_ = rdma_create_event_channel();
    defer_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!pd_ || !comp_ || !cm_ || defer_fd_ < 0) return false;
    if (!NonBlocking(comp_->fd) || !NonBlocking(cm_->fd) || !NonBlocking(ctx->async_fd)) return false;
    caps_.iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;
    caps_.ib_link = port.link_layer == IBV_LINK_LAYER_INFINIBAND;
    constexpr uint32_t kSiwVendorId = 0x626d74;  // siw's ("bmt"), whatever its device is named
    caps_.siw = caps_.iwarp && (d.vendor_id == kSiwVendorId ||
                                std::string_view(ibv_get_device_name(ctx->device)).substr(0, 3) == "siw");
    caps_.sink_needs_write = caps_.iwarp && !caps_.siw;
    caps_.reads_complete_late = caps_.siw;
    caps_.fenced_reads = !caps_.siw;
    caps_.relocatable_regions = !caps_.siw;
    caps_.resize_srq = (d.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) != 0;
    // Type 2 windows (docs/verbs.md: rxe has them end to end, siw none),
    // only when asked for: their binds fail in cases the emulation passes
    // (rebinding through another queue pair; regions of read-only memory,
    // which MW_BIND rights pin writable), still to be settled.
    caps_.windows = (d.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) != 0 && d.max_mw > 0 &&
                    ParamLong("OPENND_VERBS_WINDOWS", 0) == 1;
    caps_.max_sge_rd = d.max_sge_rd ? d.max_sge_rd : 1;
    caps_.max_msg = port.max_msg_sz;
    // rxe reports 8 MiB but carries Sends, Writes and Reads of 32 MiB intact
    // (docs/verbs.md, point 1), what ND applications count on (COMPAT).
    caps_.max_transfer = port.max_msg_sz;
    constexpr uint32_t kRxeVendorId = 0xFFFFFF;  // rxe's, whatever its device is named
    if (d.vendor_id == kRxeVendorId && ctx->device->transport_type == IBV_TRANSPORT_IB)
        caps_.max_transfer = std::max<uint64_t>(port.max_msg_sz, 32u << 20);
    if (const long v = ParamLong("OPENND_VERBS_MAX_TRANSFER", 0); v > 0) caps_.max_transfer = static_cast<uint64_t>(v);
    caps_.max_qp_wr = static_cast<uint32_t>(d.max_qp_wr);
    // Resizing works on rxe, not on siw (docs/verbs.md); ask the device.
    if (ibv_cq *cq = ibv_create_cq(ctx, 2, nullptr, nullptr, 0)) {
        caps_.resize_cq = ibv_resize_cq(cq, 4) == 0;
        ibv_destroy_cq(cq);
    }
    info_ = Describe(ctx, d, ProbeInline(ctx, pd_), caps_);
    return true;
}

Device::~Device() {
    if (reader_)
        for (int fd : {cm_->fd, comp_->fd, ctx_->async_fd, defer_fd_}) Unwatch(fd);
    if (listed_) {
        std::lock_guard<std::mutex> lock(g_devices_mu);
        if (g_devices) {
            auto it = g_devices->find(ctx_);
            if (it != g_devices->end() && it->second.expired()) g_devices->erase(it);
            if (g_devices->empty()) {
                delete g_devices;
                g_devices = nullptr;
            }
        }
    }
    if (defer_fd_ >= 0) close(defer_fd_);
    if (cm_) rdma_destroy_event_channel(cm_);
    if (comp_) ibv_destroy_comp_channel(comp_);
    if (pd_) ibv_dealloc_pd(pd_);
}

std::vector<kit::IpAddress> Device::Addresses() const {
    std::vector<kit::IpAddress> out;
    for (const auto &a : kit::LocalIpAddresses())
        if (DeviceOf(a) == ctx_) out.push_back(a);
    return out;
}

std::string Device::Notes() const {
    ibv_device_attr d{};
    ibv_port_attr port{};
    ibv_query_device(ctx_, &d);
    ibv_query_port(ctx_, caps_.port, &port);
    std::string n = std::string("device: ") + ibv_get_device_name(ctx_->device) + ", firmware " +
                    (d.fw_ver[0] ? d.fw_ver : "(none reported)") + "\n";
    n += std::string("transport: ") +
         (caps_.iwarp ? "iWARP" : caps_.ib_link ? "InfiniBand" : "RoCE (Ethernet link layer)") + "; port " +
         std::to_string(caps_.port) + " " + ibv_port_state_str(port.state) + ", MTU " +
         std::to_string(128 << port.active_mtu) + "\n";
    const ibv_fork_status fork = ibv_is_fork_initialized();
    n += std::string("fork safety: ") +
         (fork == IBV_FORK_UNNEEDED  ? "not needed (the kernel copies registered pages for a child)"
          : fork == IBV_FORK_ENABLED ? "enabled (RDMAV_FORK_SAFE or ibv_fork_init: registrations are page-granular)"
                                     : "off: a child process must not touch registered memory") +
         "\n";
    n += caps_.windows ? "memory windows: the device's type 2 windows\n"
                       : "memory windows: a registration per binding (OPENND_VERBS_WINDOWS=1: the device's type 2)\n";
    // Linux siw checks no right on the memory a Read Response comes from
    // (docs/verbs.md, "ND to ND across providers").
    if (caps_.siw)
        n += "caution: siw serves a peer's Read of any region whose token it has, remote read right or not\n";
    return n;
}

// True if the kernel has any RDMA device. Asked first so that a host with
// none never initializes librdmacm and libibverbs (a device scan and a
// dlopen of every verbs driver) in each process that opens an adapter.
bool AnyRdmaDevice() {
    DIR *d = opendir("/sys/class/infiniband");
    if (!d) return false;
    bool any = false;
    while (dirent *e = readdir(d))
        if (e->d_name[0] != '.') any = true;
    closedir(d);
    return any;
}

std::vector<DeviceEntry> Devices() {
    std::vector<DeviceEntry> out;
    if (!AnyRdmaDevice()) return out;
    int n = 0;
    ibv_context **list = rdma_get_devices(&n);
    if (!list) return out;
    for (int i = 0; i < n; ++i) out.push_back({list[i], ibv_get_device_guid(list[i]->device)});
    rdma_free_devices(list);
    return out;
}

// rdma_cm binds an address to the device that serves it: a throw-away id
// tells (id->verbs; an address no device serves binds with none).
ibv_context *DeviceOf(const kit::IpAddress &a) {
    if (kit::IsLoopback(a.sa()) || kit::IsWildcard(a.sa())) return nullptr;
    rdma_cm_id *id = nullptr;
    if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP) != 0) return nullptr;
    kit::IpAddress copy = a;
    ibv_context *ctx = rdma_bind_addr(id, copy.sa()) == 0 ? id->verbs : nullptr;
    rdma_destroy_id(id);
    return ctx;
}

}  // namespace opennd::verbs
