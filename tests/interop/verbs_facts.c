/* verbs_facts: settles, on a real Linux RDMA stack (rxe and siw in the
 * rdma-vm VM), the device behaviours the ND-over-verbs provider depends on
 * and that no document states reliably (spec/VERBS-MAPPING.md §8). Each
 * experiment prints "FACT <device> <name>: <what happened>"; docs/verbs.md
 * records the answers. Single process: both ends of each connection are
 * here, over rdma_cm on the device's own IP address. Every wait is bounded.
 *
 *   verbs_facts -a ADDR [-T sec] [-o experiment,...]
 *
 * Experiments: attrs (device limits, probed inline size), loopback (connect
 * to 127.0.0.1 / ::1), pdata (private data lengths as delivered), big
 * (RDMA Write/Read beyond the port's max_msg_sz), srq (an SRQ limit armed
 * below the fill level), zwrite (a zero-length Write with rkey 0), sink (a
 * Read into memory without remote write rights), rnr (a Send with no
 * receive posted, RNR retry 0), mw (a type 2 window: bind, remote Write,
 * invalidate, remote Write again); and, only by name, dreq (the link goes
 * down under a connection, then a Disconnect). */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double timeout_s = 10;
static const char *dev_name = "?";

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "verbs_facts: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void fact(const char *name, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("FACT %s %s: ", dev_name, name);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    va_end(ap);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct side {
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
};

struct pair {
    struct ibv_srq *srq; /* b's receive queue when connect_pair is asked for one (want_srq) */
    struct rdma_event_channel *ch;
    struct rdma_cm_id *listen;
    struct side a, b; /* a connects, b accepts */
    int req_pdata_len, rep_pdata_len;
};

/* The next CM event within the deadline, or NULL (with *type_out = -1). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, double until) {
    for (;;) {
        struct rdma_cm_event *ev;
        if (rdma_get_cm_event(ch, &ev) == 0) return ev;
        if (errno != EAGAIN) fail("rdma_get_cm_event: %s", strerror(errno));
        double left = until - now_s();
        if (left <= 0) return NULL;
        struct pollfd p = {ch->fd, POLLIN, 0};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
}

static int expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type, struct rdma_cm_event *copy) {
    struct rdma_cm_event *ev = next_event(ch, now_s() + timeout_s);
    if (!ev) return -ETIMEDOUT;
    int got = ev->event, status = ev->status;
    if (copy) *copy = *ev;
    rdma_ack_cm_event(ev);
    if (got != (int)type) {
        fprintf(stderr, "verbs_facts: expected %s, got %s (status %d)\n", rdma_event_str(type),
                rdma_event_str((enum rdma_cm_event_type)got), status);
        return -EPROTO;
    }
    return 0;
}

static int want_srq; /* connect_pair gives b a shared receive queue */

static void make_side(struct side *s, struct ibv_srq **srq_out, int depth) {
    s->pd = ibv_alloc_pd(s->id->verbs);
    struct ibv_srq *srq = NULL;
    if (srq_out) {
        struct ibv_srq_init_attr sa = {0};
        sa.attr.max_wr = 16;
        sa.attr.max_sge = 1;
        srq = *srq_out = ibv_create_srq(s->pd, &sa);
        if (!srq) fail("ibv_create_srq: %s", strerror(errno));
    }
    s->cq = ibv_create_cq(s->id->verbs, depth * 2, NULL, NULL, 0);
    if (!s->pd || !s->cq) fail("pd/cq: %s", strerror(errno));
    struct ibv_qp_init_attr qa = {0};
    qa.send_cq = qa.recv_cq = s->cq;
    qa.srq = srq;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = depth;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    qa.qp_type = IBV_QPT_RC;
    qa.sq_sig_all = 1;
    if (rdma_create_qp(s->id, s->pd, &qa)) fail("rdma_create_qp: %s", strerror(errno));
    s->qp = s->id->qp;
}

static void set_port(struct sockaddr *sa, uint16_t port) {
    if (sa->sa_family == AF_INET)
        ((struct sockaddr_in *)sa)->sin_port = port;
    else
        ((struct sockaddr_in6 *)sa)->sin6_port = port;
}

/* Connects a to b over rdma_cm on `addr`. pdata_req/pdata_rep: private data
 * lengths to send (the bytes are 0x5A). rnr_retry: in both directions.
 * Returns 0, or a negative errno (the step that failed is printed). */
static int connect_pair(struct pair *p, const struct sockaddr *addr, socklen_t alen, int pdata_req, int pdata_rep,
                        int rnr_retry) {
    memset(p, 0, sizeof *p);
    p->req_pdata_len = p->rep_pdata_len = -1;
    struct sockaddr_storage ss;
    memcpy(&ss, addr, alen);
    set_port((struct sockaddr *)&ss, 0);
    p->ch = rdma_create_event_channel();
    if (!p->ch) fail("rdma_create_event_channel: %s", strerror(errno));
    fcntl(p->ch->fd, F_SETFL, fcntl(p->ch->fd, F_GETFL) | O_NONBLOCK);
    if (rdma_create_id(p->ch, &p->listen, NULL, RDMA_PS_TCP)) fail("rdma_create_id: %s", strerror(errno));
    if (rdma_bind_addr(p->listen, (struct sockaddr *)&ss)) return fprintf(stderr, "bind: %s\n", strerror(errno)), -errno;
    if (rdma_listen(p->listen, 4)) return fprintf(stderr, "listen: %s\n", strerror(errno)), -errno;
    set_port((struct sockaddr *)&ss, rdma_get_src_port(p->listen));
    if (rdma_create_id(p->ch, &p->a.id, NULL, RDMA_PS_TCP)) fail("rdma_create_id: %s", strerror(errno));
    int rc;
    if (rdma_resolve_addr(p->a.id, NULL, (struct sockaddr *)&ss, 2000)) return -errno;
    if ((rc = expect_event(p->ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))) return rc;
    if (rdma_resolve_route(p->a.id, 2000)) return -errno;
    if ((rc = expect_event(p->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))) return rc;
    make_side(&p->a, NULL, 16);
    unsigned char req[256], rep[256];
    memset(req, 0x5A, sizeof req);
    memset(rep, 0x5A, sizeof rep);
    struct rdma_conn_param cp = {0};
    cp.private_data = pdata_req ? req : NULL;
    cp.private_data_len = (uint8_t)pdata_req;
    cp.responder_resources = cp.initiator_depth = 1;
    cp.retry_count = 6;
    cp.rnr_retry_count = (uint8_t)rnr_retry;
    if (rdma_connect(p->a.id, &cp)) return fprintf(stderr, "connect: %s\n", strerror(errno)), -errno;
    struct rdma_cm_event ev;
    if ((rc = expect_event(p->ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))) return rc;
    p->req_pdata_len = ev.param.conn.private_data_len;
    p->b.id = ev.id;
    make_side(&p->b, want_srq ? &p->srq : NULL, 16);
    cp.private_data = pdata_rep ? rep : NULL;
    cp.private_data_len = (uint8_t)pdata_rep;
    if (rdma_accept(p->b.id, &cp)) return fprintf(stderr, "accept: %s\n", strerror(errno)), -errno;
    /* Both ESTABLISHED, in either order (the active side's carries the REP's data). */
    for (int seen = 0; seen < 2;) {
        struct rdma_cm_event *e = next_event(p->ch, now_s() + timeout_s);
        if (!e) return -ETIMEDOUT;
        int type = e->event;
        if (type == RDMA_CM_EVENT_ESTABLISHED && e->id == p->a.id) p->rep_pdata_len = e->param.conn.private_data_len;
        rdma_ack_cm_event(e);
        if (type != RDMA_CM_EVENT_ESTABLISHED) {
            fprintf(stderr, "verbs_facts: waiting for ESTABLISHED, got %s\n", rdma_event_str(type));
            return -EPROTO;
        }
        ++seen;
    }
    return 0;
}

static void destroy_side(struct side *s) {
    if (s->qp) rdma_destroy_qp(s->id);
    if (s->cq) ibv_destroy_cq(s->cq);
    if (s->pd) ibv_dealloc_pd(s->pd);
    if (s->id) rdma_destroy_id(s->id);
}

static void close_pair(struct pair *p) {
    if (p->a.qp) rdma_disconnect(p->a.id);
    destroy_side(&p->a);
    if (p->b.qp) rdma_destroy_qp(p->b.id);
    p->b.qp = NULL;
    if (p->srq) ibv_destroy_srq(p->srq);
    destroy_side(&p->b);
    if (p->listen) rdma_destroy_id(p->listen);
    if (p->ch) rdma_destroy_event_channel(p->ch);
}

/* One completion within the deadline; 0 on success, -1 on timeout. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double seconds) {
    double until = now_s() + seconds;
    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n < 0) fail("ibv_poll_cq");
        if (n == 1) return 0;
        if (now_s() > until) return -1;
        sched_yield(); /* a soft device: completions come from the kernel's own threads */
    }
}

static struct ibv_mr *reg_buf(struct ibv_pd *pd, size_t len, int access) {
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, len ? len : 1)) fail("no memory");
    memset(buf, 0x33, len);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);
    if (!mr) fail("ibv_reg_mr(%zu, 0x%x): %s", len, access, strerror(errno));
    return mr;
}

static void free_mr(struct ibv_mr *mr) {
    void *buf = mr->addr;
    ibv_dereg_mr(mr);
    free(buf);
}

/* Posts one signalled Send of mr's first `len` bytes; ibv_post_send's result. */
static int post_send(struct ibv_qp *qp, struct ibv_mr *mr, size_t len) {
    struct ibv_sge sge = {(uintptr_t)mr->addr, (uint32_t)len, mr->lkey};
    struct ibv_send_wr wr = {0}, *bad;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    return ibv_post_send(qp, &wr, &bad);
}

/* Posts one RDMA op from a to b and reports what happened. */
static void one_sided(struct pair *p, const char *name, enum ibv_wr_opcode op, struct ibv_mr *local, size_t len,
                      struct ibv_mr *remote) {
    struct ibv_sge sge = {(uintptr_t)local->addr, (uint32_t)len, local->lkey};
    struct ibv_send_wr wr = {0}, *bad;
    wr.wr_id = 7;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)remote->addr;
    wr.wr.rdma.rkey = remote->rkey;
    int rc = ibv_post_send(p->a.qp, &wr, &bad);
    if (rc) {
        fact(name, "%zu B: ibv_post_send refused it: %s", len, strerror(rc));
        return;
    }
    struct ibv_wc wc;
    if (poll_one(p->a.cq, &wc, timeout_s))
        fact(name, "%zu B: posted, no completion in %.0f s", len, timeout_s);
    else {
        /* The destination's bytes: did all of them arrive? */
        const unsigned char *dst = op == IBV_WR_RDMA_READ ? local->addr : remote->addr;
        const unsigned char *src = op == IBV_WR_RDMA_READ ? remote->addr : local->addr;
        size_t same = 0;
        while (same < len && dst[same] == src[same]) ++same;
        fact(name, "%zu B: posted, completion %s (vendor_err 0x%x, byte_len %u), %zu B arrived intact", len,
             ibv_wc_status_str(wc.status), wc.vendor_err, wc.byte_len, same);
    }
}

static void pattern(struct ibv_mr *mr, unsigned seed) {
    unsigned char *b = mr->addr;
    for (size_t i = 0; i < mr->length; ++i) b[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static int probe_inline(struct ibv_context *ctx, uint32_t *reported) {
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
    uint32_t lo = 0, hi = 4096;
    *reported = 0;
    while (lo < hi) { /* the largest size a QP is created with */
        uint32_t mid = (lo + hi + 1) / 2;
        struct ibv_qp_init_attr qa = {0};
        qa.send_cq = qa.recv_cq = cq;
        qa.cap.max_send_wr = qa.cap.max_recv_wr = 2;
        qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
        qa.cap.max_inline_data = mid;
        qa.qp_type = IBV_QPT_RC;
        struct ibv_qp *qp = ibv_create_qp(pd, &qa);
        if (qp) {
            lo = mid;
            *reported = qa.cap.max_inline_data;
            ibv_destroy_qp(qp);
        } else {
            hi = mid - 1;
        }
    }
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    return (int)lo;
}

static void case_attrs(const struct sockaddr *addr) {
    struct rdma_cm_id *id;
    if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) fail("rdma_create_id: %s", strerror(errno));
    if (rdma_bind_addr(id, (struct sockaddr *)addr)) fail("rdma_bind_addr: %s", strerror(errno));
    if (!id->verbs) fail("no device behind the address");
    dev_name = ibv_get_device_name(id->verbs->device);
    struct ibv_device_attr_ex ax = {0};
    if (ibv_query_device_ex(id->verbs, NULL, &ax)) fail("ibv_query_device_ex");
    struct ibv_device_attr *a = &ax.orig_attr;
    struct ibv_port_attr pa;
    if (ibv_query_port(id->verbs, id->port_num ? id->port_num : 1, &pa)) fail("ibv_query_port");
    fact("device", "vendor 0x%x part 0x%x guid 0x%llx fw '%s' link_layer %s port %u state %s mtu %d", a->vendor_id,
         a->vendor_part_id, (unsigned long long)be64toh(a->node_guid), a->fw_ver,
         pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? "IB" : "?",
         id->port_num, ibv_port_state_str(pa.state), 128 << pa.active_mtu);
    fact("limits", "max_qp_wr %d max_send_sge %d max_recv_sge %d max_sge_rd %d max_cqe %d max_mr_size %llu "
         "max_msg_sz %u max_qp_rd_atom %d max_qp_init_rd_atom %d max_srq %d max_srq_wr %d max_mw %d",
         a->max_qp_wr, a->max_sge, a->max_sge, a->max_sge_rd, a->max_cqe,
         (unsigned long long)a->max_mr_size, pa.max_msg_sz, a->max_qp_rd_atom, a->max_qp_init_rd_atom, a->max_srq,
         a->max_srq_wr, a->max_mw);
    fact("caps", "device_cap_flags 0x%x: MEM_WINDOW %d MW_TYPE_2A %d MW_TYPE_2B %d SRQ_RESIZE %d "
         "MEM_MGT_EXTENSIONS %d", a->device_cap_flags, !!(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW),
         !!(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A), !!(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B),
         !!(a->device_cap_flags & IBV_DEVICE_SRQ_RESIZE),
         !!(a->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS));
    uint32_t reported;
    int inl = probe_inline(id->verbs, &reported);
    fact("inline", "largest max_inline_data a QP is created with: %d (the QP reports %u)", inl, reported);
    struct ibv_cq *cq = ibv_create_cq(id->verbs, 4, NULL, NULL, 0);
    int resize = ibv_resize_cq(cq, 64);
    fact("resize_cq", "ibv_resize_cq 4 -> 64: %s", resize ? strerror(resize) : "ok");
    ibv_destroy_cq(cq);
    rdma_destroy_id(id);
    /* A non-RDMA address: what QueryAddressList's probe sees. */
    struct sockaddr_in lo = {0};
    lo.sin_family = AF_INET;
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0) {
        int rc = rdma_bind_addr(id, (struct sockaddr *)&lo);
        fact("bind_loopback", "rdma_bind_addr(127.0.0.1): %s, device %s", rc ? strerror(errno) : "ok",
             id->verbs ? ibv_get_device_name(id->verbs->device) : "none");
        rdma_destroy_id(id);
    }
}

static void case_loopback(void) {
    struct sockaddr_in lo4 = {0};
    lo4.sin_family = AF_INET;
    lo4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in6 lo6 = {0};
    lo6.sin6_family = AF_INET6;
    lo6.sin6_addr = in6addr_loopback;
    struct pair p;
    int rc = connect_pair(&p, (struct sockaddr *)&lo4, sizeof lo4, 0, 0, 7);
    fact("loopback_ipv4", "connect to 127.0.0.1: %s", rc ? strerror(-rc) : "connected");
    close_pair(&p);
    rc = connect_pair(&p, (struct sockaddr *)&lo6, sizeof lo6, 0, 0, 7);
    fact("loopback_ipv6", "connect to ::1: %s", rc ? strerror(-rc) : "connected");
    close_pair(&p);
}

static void case_pdata(const struct sockaddr *addr, socklen_t alen) {
    static const int req[] = {0, 1, 56, 57, 148, 149, 196, 197, 252, 253, 255};
    for (unsigned i = 0; i < sizeof req / sizeof req[0]; ++i) {
        struct pair p;
        int rc = connect_pair(&p, addr, alen, req[i], 0, 7);
        if (rc)
            fact("pdata_request", "connect with %d B: failed (%s)", req[i], strerror(-rc));
        else
            fact("pdata_request", "connect with %d B: delivered as %d B", req[i], p.req_pdata_len);
        close_pair(&p);
        rc = connect_pair(&p, addr, alen, 0, req[i], 7);
        if (rc)
            fact("pdata_reply", "accept with %d B: failed (%s)", req[i], strerror(-rc));
        else
            fact("pdata_reply", "accept with %d B: delivered as %d B", req[i], p.rep_pdata_len);
        close_pair(&p);
    }
}

/* The largest private data a connect (reply = 0) or an accept carries. */
static void case_pdata_max(const struct sockaddr *addr, socklen_t alen) {
    for (int reply = 0; reply < 2; ++reply) {
        int lo = 0, hi = 255;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            struct pair p;
            int rc = connect_pair(&p, addr, alen, reply ? 0 : mid, reply ? mid : 0, 7);
            close_pair(&p);
            if (rc == 0)
                lo = mid;
            else
                hi = mid - 1;
        }
        fact(reply ? "pdata_reply_max" : "pdata_request_max", "%d B", lo);
    }
}

static void case_big(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_port_attr pa;
    ibv_query_port(p.a.id->verbs, p.a.id->port_num ? p.a.id->port_num : 1, &pa);
    const size_t most = (size_t)32 << 20;
    struct ibv_mr *l = reg_buf(p.a.pd, most, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_mr *r = reg_buf(p.b.pd, most, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    size_t sizes[] = {(size_t)8 << 20, ((size_t)8 << 20) + 1, (size_t)16 << 20, most};
    fact("big", "port max_msg_sz %u", pa.max_msg_sz);
    for (unsigned i = 0; i < 4; ++i) {
        pattern(l, i);
        one_sided(&p, "big_write", IBV_WR_RDMA_WRITE, l, sizes[i], r);
        if (p.a.qp->state == IBV_QPS_ERR) break;
    }
    close_pair(&p);
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_mr *l2 = reg_buf(p.a.pd, most, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_mr *r2 = reg_buf(p.b.pd, most, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    for (unsigned i = 0; i < 4; ++i) {
        pattern(r2, i + 7);
        one_sided(&p, "big_read", IBV_WR_RDMA_READ, l2, sizes[i], r2);
        if (p.a.qp->state == IBV_QPS_ERR) break;
    }
    free_mr(l);
    free_mr(r);
    free_mr(l2);
    free_mr(r2);
    close_pair(&p);
}

/* An async event within `seconds`, or -1. */
static int async_event(struct ibv_context *ctx, double seconds) {
    fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
    double until = now_s() + seconds;
    for (;;) {
        struct ibv_async_event ev;
        if (ibv_get_async_event(ctx, &ev) == 0) {
            int type = ev.event_type;
            ibv_ack_async_event(&ev);
            if (type == IBV_EVENT_GID_CHANGE || type == IBV_EVENT_PORT_ACTIVE) continue; /* the device's setup */
            return type;
        }
        double left = until - now_s();
        if (left <= 0) return -1;
        struct pollfd p = {ctx->async_fd, POLLIN, 0};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
}

static void case_srq(const struct sockaddr *addr) {
    struct rdma_cm_id *id;
    if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) || rdma_bind_addr(id, (struct sockaddr *)addr)) fail("bind");
    struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
    struct ibv_srq_init_attr sa = {0};
    sa.attr.max_wr = 16;
    sa.attr.max_sge = 1;
    struct ibv_srq *srq = ibv_create_srq(pd, &sa);
    if (!srq) {
        fact("srq", "ibv_create_srq: %s", strerror(errno));
        ibv_dealloc_pd(pd);
        rdma_destroy_id(id);
        return;
    }
    struct ibv_mr *mr = reg_buf(pd, 4096, IBV_ACCESS_LOCAL_WRITE);
    for (int i = 0; i < 8; ++i) {
        struct ibv_sge sge = {(uintptr_t)mr->addr, 64, mr->lkey};
        struct ibv_recv_wr wr = {0}, *bad;
        wr.wr_id = (uint64_t)i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_srq_recv(srq, &wr, &bad)) fail("ibv_post_srq_recv");
    }
    struct ibv_srq_attr at = {0};
    at.srq_limit = 4;
    int rc = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
    int ev = rc ? -2 : async_event(id->verbs, 1);
    fact("srq_limit_below_fill", "8 posted, limit armed at 4: %s", rc ? strerror(rc) : ev < 0 ? "no event in 1 s"
         : ibv_event_type_str((enum ibv_event_type)ev));
    at.srq_limit = 12;
    rc = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
    ev = rc ? -2 : async_event(id->verbs, 1);
    fact("srq_limit_above_fill", "8 posted, limit armed at 12: %s", rc ? strerror(rc) : ev < 0 ? "no event in 1 s"
         : ibv_event_type_str((enum ibv_event_type)ev));
    ibv_destroy_srq(srq);
    free_mr(mr);
    ibv_dealloc_pd(pd);
    rdma_destroy_id(id);
}

/* The limit event when Sends consume the SRQ below an armed limit. */
static void case_srq_crossing(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    want_srq = 1;
    int rc = connect_pair(&p, addr, alen, 0, 0, 7);
    want_srq = 0;
    if (rc) fail("connect with an SRQ");
    struct ibv_mr *rmr = reg_buf(p.b.pd, 4096, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *smr = reg_buf(p.a.pd, 64, IBV_ACCESS_LOCAL_WRITE);
    for (int i = 0; i < 8; ++i) {
        struct ibv_sge sge = {(uintptr_t)rmr->addr, 64, rmr->lkey};
        struct ibv_recv_wr wr = {0}, *bad;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_srq_recv(p.srq, &wr, &bad)) fail("ibv_post_srq_recv");
    }
    struct ibv_srq_attr at = {0};
    at.srq_limit = 4;
    if ((rc = ibv_modify_srq(p.srq, &at, IBV_SRQ_LIMIT))) fail("ibv_modify_srq: %s", strerror(rc));
    for (int i = 0; i < 5; ++i) { /* 8 - 5 = 3 left: below the limit */
        struct ibv_wc wc;
        if (post_send(p.a.qp, smr, 64) || poll_one(p.a.cq, &wc, timeout_s) || wc.status)
            fail("send %d", i);
    }
    int ev = async_event(p.b.id->verbs, 2);
    fact("srq_limit_crossed", "8 posted, limit 4, 5 consumed: %s",
         ev < 0 ? "no event in 2 s" : ibv_event_type_str((enum ibv_event_type)ev));
    free_mr(smr);
    free_mr(rmr);
    close_pair(&p);
}

static void case_zwrite(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_send_wr wr = {0}, *bad;
    wr.wr_id = 9;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    int rc = ibv_post_send(p.a.qp, &wr, &bad); /* no SGE, remote address 0, rkey 0 */
    struct ibv_wc wc;
    if (rc)
        fact("zero_write", "ibv_post_send refused it: %s", strerror(rc));
    else if (poll_one(p.a.cq, &wc, timeout_s))
        fact("zero_write", "no completion in %.0f s", timeout_s);
    else
        fact("zero_write", "completion %s, then the QP is %s", ibv_wc_status_str(wc.status),
             p.a.qp->state == IBV_QPS_ERR ? "in error" : "usable");
    close_pair(&p);
}

static void case_sink(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_mr *l = reg_buf(p.a.pd, 4096, IBV_ACCESS_LOCAL_WRITE); /* no REMOTE_WRITE */
    struct ibv_mr *r = reg_buf(p.b.pd, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    memset(r->addr, 0x77, 4096);
    one_sided(&p, "read_sink_local_write_only", IBV_WR_RDMA_READ, l, 4096, r);
    fact("read_sink_local_write_only", "data %s", ((unsigned char *)l->addr)[4095] == 0x77 ? "arrived" : "did not arrive");
    free_mr(l);
    free_mr(r);
    close_pair(&p);
}

static void case_rnr(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 0)) fail("connect");
    static const size_t sizes[] = {64, (size_t)4 << 20};
    for (unsigned i = 0; i < 2; ++i) {
        struct ibv_mr *l = reg_buf(p.a.pd, sizes[i], IBV_ACCESS_LOCAL_WRITE);
        double t0 = now_s();
        int rc = post_send(p.a.qp, l, sizes[i]);
        struct ibv_wc wc;
        if (rc)
            fact("send_no_receive", "%zu B: ibv_post_send: %s", sizes[i], strerror(rc));
        else if (poll_one(p.a.cq, &wc, timeout_s))
            fact("send_no_receive", "%zu B, rnr_retry 0: no completion in %.0f s", sizes[i], timeout_s);
        else
            fact("send_no_receive", "%zu B, rnr_retry 0: %s after %.1f ms", sizes[i], ibv_wc_status_str(wc.status),
                 (now_s() - t0) * 1000);
        /* what the receiver saw */
        int n = ibv_poll_cq(p.b.cq, 1, &wc);
        fact("send_no_receive", "%zu B: receiver's CQ: %s", sizes[i], n == 1 ? ibv_wc_status_str(wc.status) : "empty");
        free_mr(l);
        close_pair(&p);
        if (i == 0 && connect_pair(&p, addr, alen, 0, 0, 0)) fail("connect");
    }
}

/* A type 2 window end to end: b binds it over its memory, a writes through
 * it, b invalidates it, a writes again (expect a remote access error). */
static void case_mw(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_mw *mw = ibv_alloc_mw(p.b.pd, IBV_MW_TYPE_2);
    if (!mw) {
        fact("mw2", "ibv_alloc_mw(type 2): %s", strerror(errno));
        close_pair(&p);
        return;
    }
    struct ibv_mr *target = reg_buf(p.b.pd, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    struct ibv_mr *src = reg_buf(p.a.pd, 4096, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_send_wr wr = {0}, *bad;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
    wr.bind_mw.bind_info.mr = target;
    wr.bind_mw.bind_info.addr = (uintptr_t)target->addr + 4096;
    wr.bind_mw.bind_info.length = 4096;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    int rc = ibv_post_send(p.b.qp, &wr, &bad);
    struct ibv_wc wc;
    if (rc || poll_one(p.b.cq, &wc, timeout_s) || wc.status != IBV_WC_SUCCESS) {
        fact("mw2", "bind: %s", rc ? strerror(rc) : ibv_wc_status_str(wc.status));
    } else {
        const uint32_t rkey = wr.bind_mw.rkey;
        struct ibv_mr window = *target; /* what a writes to: the window's range and key */
        window.addr = (char *)target->addr + 4096;
        window.rkey = rkey;
        pattern(src, 3);
        one_sided(&p, "mw2_write_bound", IBV_WR_RDMA_WRITE, src, 4096, &window);
        struct ibv_send_wr inv = {0};
        inv.opcode = IBV_WR_LOCAL_INV;
        inv.send_flags = IBV_SEND_SIGNALED;
        inv.invalidate_rkey = rkey;
        rc = ibv_post_send(p.b.qp, &inv, &bad);
        if (rc || poll_one(p.b.cq, &wc, timeout_s))
            fact("mw2", "local invalidate: %s", rc ? strerror(rc) : "no completion");
        else
            fact("mw2", "local invalidate: %s", ibv_wc_status_str(wc.status));
        pattern(src, 4); /* other bytes: none of them may land */
        one_sided(&p, "mw2_write_invalidated", IBV_WR_RDMA_WRITE, src, 4096, &window);
    }
    ibv_dealloc_mw(mw);
    free_mr(src);
    free_mr(target);
    close_pair(&p);
}

/* The link goes down under a connection (the VM's eth0: destructive, so only
 * when asked for by name), then the active side disconnects: how long until
 * rdma_cm reports DISCONNECTED, and what Sends posted meanwhile complete with. */
static void case_dreq(const struct sockaddr *addr, socklen_t alen) {
    struct pair p;
    if (connect_pair(&p, addr, alen, 0, 0, 7)) fail("connect");
    struct ibv_mr *l = reg_buf(p.a.pd, 64, IBV_ACCESS_LOCAL_WRITE);
    if (system("ip link set eth0 down") != 0) fail("ip link set eth0 down");
    double t0 = now_s();
    struct ibv_wc wc;
    if (post_send(p.a.qp, l, 64) == 0 && poll_one(p.a.cq, &wc, timeout_s) == 0)
        fact("link_down_send", "a Send after the link went down: %s after %.0f ms", ibv_wc_status_str(wc.status),
             (now_s() - t0) * 1000);
    else
        fact("link_down_send", "a Send after the link went down: no completion in %.0f s", timeout_s);
    t0 = now_s();
    int rc = rdma_disconnect(p.a.id);
    fact("link_down_disconnect", "rdma_disconnect: %s", rc ? strerror(errno) : "ok");
    for (;;) {
        struct rdma_cm_event *e = next_event(p.ch, t0 + timeout_s);
        if (!e) {
            fact("link_down_disconnect", "no DISCONNECTED within %.0f s", timeout_s);
            break;
        }
        int type = e->event, status = e->status, mine = e->id == p.a.id;
        rdma_ack_cm_event(e);
        fact("link_down_disconnect", "%s on the %s side (status %d) after %.1f s", rdma_event_str(type),
             mine ? "active" : "passive", status, now_s() - t0);
        if (type == RDMA_CM_EVENT_DISCONNECTED && mine) break;
    }
    /* A Send still outstanding: does the disconnect flush it, or must the provider move the QP to error? */
    if (poll_one(p.a.cq, &wc, 5) == 0)
        fact("link_down_flush", "after DISCONNECTED the outstanding Send completed: %s", ibv_wc_status_str(wc.status));
    else
        fact("link_down_flush", "after DISCONNECTED nothing completed in 5 s (QP state %d)", p.a.qp->state);
    free_mr(l);
    p.a.qp = NULL; /* (no second disconnect) */
    rdma_destroy_qp(p.a.id);
    close_pair(&p);
}

static int wanted(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *s = list; (s = strstr(s, name)); s += n)
        if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == 0)) return 1;
    return 0;
}

static void run_cases(const struct sockaddr *addr, socklen_t alen, const char *only) {
    case_attrs(addr); /* (names the device) */
    if (wanted(only, "loopback")) case_loopback();
    if (wanted(only, "pdata")) case_pdata(addr, alen);
    if (wanted(only, "pdata")) case_pdata_max(addr, alen);
    if (wanted(only, "big")) case_big(addr, alen);
    if (wanted(only, "srq")) case_srq(addr);
    if (wanted(only, "srq")) case_srq_crossing(addr, alen);
    if (wanted(only, "zwrite")) case_zwrite(addr, alen);
    if (wanted(only, "sink")) case_sink(addr, alen);
    if (wanted(only, "rnr")) case_rnr(addr, alen);
    if (wanted(only, "mw")) case_mw(addr, alen);
    if (wanted(only, "dreq")) case_dreq(addr, alen); /* last: the link stays down */
}

int main(int argc, char **argv) {
    const char *addr_text = NULL, *only = "attrs,loopback,pdata,big,srq,zwrite,sink,rnr,mw";
    int opt;
    while ((opt = getopt(argc, argv, "a:T:o:")) != -1) {
        if (opt == 'a')
            addr_text = optarg;
        else if (opt == 'T')
            timeout_s = atof(optarg);
        else if (opt == 'o')
            only = optarg;
        else
            fail("usage: verbs_facts -a ADDR [-T sec] [-o experiment,...]");
    }
    if (!addr_text) fail("-a ADDR is required");
    struct addrinfo hints = {0}, *ai;
    hints.ai_flags = AI_NUMERICHOST;
    if (getaddrinfo(addr_text, NULL, &hints, &ai)) fail("not an address: %s", addr_text);
    run_cases(ai->ai_addr, ai->ai_addrlen, only);
    freeaddrinfo(ai);
    return 0;
}
