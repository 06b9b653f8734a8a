/* verbs_bulk: the bulk exchange (tools/ndrping/bulk_protocol.h) over
 * rdma-core verbs and rdma_cm, to run on a real Linux RDMA stack (siw in
 * the interop VM) against `ndrping --bulk`. Single-threaded; every wait is
 * bounded by -T. Prints one "verified" line per step and exits 0 only when
 * every byte the peer sent, wrote and let us read was what the protocol says.
 *
 *   verbs_bulk -s -a ADDR [-p PORT] [-S size] [-M messages] [-T sec]
 *   verbs_bulk -c -a ADDR [-p PORT] [-S size] [-M messages] [-T sec] */
#include <errno.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bulk_protocol.h"

static const char *role = "verbs_bulk";
static double deadline_s;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", role);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct region {
    unsigned char *buf;
    size_t len;
    struct ibv_mr *mr;
};

struct ctx {
    struct rdma_cm_id *id;
    uint32_t seed, peer_seed, size, messages;
    struct region recv, send, source, writes, sink, readback; /* source: stream 0, writes: stream 1 */
    unsigned send_slots;
    uint64_t sends_posted, sends_done, writes_posted, writes_done, reads_posted, reads_done;
    uint32_t received; /* Receives completed, in order */
    uint32_t peer_messages_ok, peer_writes_done, peer_reads_done;
    struct bulk_hello peer;
};

static void reg(struct ctx *c, struct region *r, size_t len, int access) {
    r->len = len;
    r->buf = calloc(1, len);
    if (!r->buf) fail("out of memory");
    r->mr = ibv_reg_mr(c->id->pd, r->buf, len, access);
    if (!r->mr) fail("ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
}

static void post_receive(struct ctx *c, uint32_t slot) {
    struct ibv_sge sge = {(uintptr_t)(c->recv.buf + (size_t)slot * BULK_RECV_BYTES), BULK_RECV_BYTES, c->recv.mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(c->id->qp, &wr, &bad)) fail("ibv_post_recv: %s", strerror(errno));
}

static void on_receive(struct ctx *c, const struct ibv_wc *wc) {
    const unsigned char *p = c->recv.buf + (size_t)wc->wr_id * BULK_RECV_BYTES;
    uint32_t n = c->received++, len = wc->byte_len;
    struct bulk_hello m;
    if (n == 0) { /* the hello */
        if (bulk_decode(p, len, &m) != BULK_HELLO) fail("the first message (%u bytes) is not a bulk hello", len);
        if (m.size != c->size || m.messages != c->messages)
            fail("the peer runs size %u, %u messages; we run %u, %u", m.size, m.messages, c->size, c->messages);
        c->peer = m;
        return;
    }
    if (n <= c->messages) { /* stream message j */
        uint32_t j = n - 1;
        long long at;
        if (len != bulk_send_length(j)) fail("message %u: %u bytes, expected %u", j, len, bulk_send_length(j));
        at = bulk_check(p, len, c->peer_seed, BULK_STREAM_SEND(j));
        if (at >= 0) fail("message %u: wrong byte at offset %lld", j, at);
        c->peer_messages_ok++;
        return;
    }
    switch (bulk_decode(p, len, &m)) {
    case BULK_WRITES_DONE: c->peer_writes_done = 1; break;
    case BULK_READS_DONE: c->peer_reads_done = 1; break;
    default: fail("message %u (%u bytes) is not a control message", n, len);
    }
}

static void poll_cq(struct ctx *c, struct ibv_cq *cq) {
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(cq, 16, wc);
    if (n < 0) fail("ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS)
            fail("%s completed with %s", wc[i].opcode == IBV_WC_RECV ? "a Receive" : "a request",
                 ibv_wc_status_str(wc[i].status));
        switch (wc[i].opcode) {
        case IBV_WC_RECV: on_receive(c, &wc[i]); break;
        case IBV_WC_SEND: c->sends_done++; break;
        case IBV_WC_RDMA_WRITE: c->writes_done++; break;
        case IBV_WC_RDMA_READ: c->reads_done++; break;
        default: break;
        }
    }
}

/* One round of polling both CQs; fails past the deadline. */
static void poll_round(struct ctx *c, unsigned *idle, const char *what) {
    poll_cq(c, c->id->send_cq);
    if (c->id->recv_cq != c->id->send_cq) poll_cq(c, c->id->recv_cq);
    if (now_s() > deadline_s) fail("timed out waiting for %s", what);
    if (++*idle > 1000) usleep(100); /* the peer may share our CPUs (an emulated VM) */
}

/* Until done(c). */
static void wait_until(struct ctx *c, int (*done)(const struct ctx *), const char *what) {
    unsigned idle = 0;
    while (!done(c)) poll_round(c, &idle, what);
}

/* Until at most `in_flight` of the requests that *posted and *done count are outstanding. */
static void wait_in_flight(struct ctx *c, const uint64_t *posted, const uint64_t *done, uint64_t in_flight,
                           const char *what) {
    unsigned idle = 0;
    while (*posted - *done > in_flight) poll_round(c, &idle, what);
}

static int have_hello(const struct ctx *c) { return c->received >= 1; }
static int peer_wrote(const struct ctx *c) { return c->peer_writes_done && c->peer_messages_ok == c->messages; }
static int peer_read(const struct ctx *c) { return c->peer_reads_done; }

/* The next free send buffer (waits for one), then post_send with its length. */
static unsigned char *send_slot(struct ctx *c) {
    wait_in_flight(c, &c->sends_posted, &c->sends_done, c->send_slots - 1, "a Send to complete");
    return c->send.buf + (size_t)(c->sends_posted % c->send_slots) * BULK_RECV_BYTES;
}

static void post_send(struct ctx *c, unsigned char *slot, uint32_t len) {
    struct ibv_sge sge = {(uintptr_t)slot, len, c->send.mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED},
                       *bad;
    if (ibv_post_send(c->id->qp, &wr, &bad)) fail("ibv_post_send(Send): %s", strerror(errno));
    c->sends_posted++;
}

static void post_control(struct ctx *c, uint32_t kind) {
    struct bulk_hello m = {.kind = kind};
    unsigned char *slot = send_slot(c);
    post_send(c, slot, bulk_encode(&m, slot));
}

static void post_rdma(struct ctx *c, enum ibv_wr_opcode op, struct region *local, uint32_t off, uint32_t len,
                      uint64_t raddr, const unsigned char rkey_wire[4]) {
    uint32_t rkey_be;
    memcpy(&rkey_be, rkey_wire, 4);
    struct ibv_sge sge = {(uintptr_t)(local->buf + off), len, local->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED}, *bad;
    wr.wr.rdma.remote_addr = raddr + off;
    wr.wr.rdma.rkey = ntohl(rkey_be);
    if (ibv_post_send(c->id->qp, &wr, &bad))
        fail("ibv_post_send(%s): %s", op == IBV_WR_RDMA_READ ? "RDMA Read" : "RDMA Write", strerror(errno));
}

static void exchange(struct ctx *c) {
    unsigned char *slot;
    struct bulk_hello h = {.kind = BULK_HELLO, .size = c->size, .messages = c->messages,
                           .source_addr = (uintptr_t)c->source.buf, .sink_addr = (uintptr_t)c->sink.buf};
    uint32_t k;
    memcpy(h.source_rkey, &(uint32_t){htonl(c->source.mr->rkey)}, 4);
    memcpy(h.sink_rkey, &(uint32_t){htonl(c->sink.mr->rkey)}, 4);
    slot = send_slot(c);
    post_send(c, slot, bulk_encode(&h, slot));
    wait_until(c, have_hello, "the peer's hello");

    for (uint32_t j = 0; j < c->messages; ++j) {
        uint32_t len = bulk_send_length(j);
        slot = send_slot(c);
        bulk_fill(slot, 0, len, c->seed, BULK_STREAM_SEND(j));
        post_send(c, slot, len);
    }

    for (k = 0; k < c->size; k += bulk_chunk(k, c->size)) {
        wait_in_flight(c, &c->writes_posted, &c->writes_done, BULK_WRITE_DEPTH - 1, "RDMA Writes to complete");
        post_rdma(c, IBV_WR_RDMA_WRITE, &c->writes, k, bulk_chunk(k, c->size), c->peer.sink_addr, c->peer.sink_rkey);
        c->writes_posted++;
    }
    post_control(c, BULK_WRITES_DONE); /* ordered after the Writes */
    wait_until(c, peer_wrote, "the peer's messages and Writes");
    printf("%s: %u messages from the peer verified\n", role, c->messages);
    long long at = bulk_check(c->sink.buf, c->size, c->peer_seed, BULK_STREAM_WRITE);
    if (at >= 0) fail("what the peer wrote differs at offset %lld", at);
    printf("%s: %u bytes the peer wrote verified\n", role, c->size);

    for (k = 0; k < c->size; k += bulk_chunk(k, c->size)) {
        wait_in_flight(c, &c->reads_posted, &c->reads_done, BULK_READ_DEPTH - 1, "RDMA Reads to complete");
        post_rdma(c, IBV_WR_RDMA_READ, &c->readback, k, bulk_chunk(k, c->size), c->peer.source_addr,
                  c->peer.source_rkey);
        c->reads_posted++;
    }
    wait_in_flight(c, &c->reads_posted, &c->reads_done, 0, "RDMA Reads to complete");
    at = bulk_check(c->readback.buf, c->size, c->peer_seed, BULK_STREAM_SOURCE);
    if (at >= 0) fail("what we read from the peer differs at offset %lld", at);
    printf("%s: %u bytes read from the peer verified\n", role, c->size);
    post_control(c, BULK_READS_DONE);
    wait_until(c, peer_read, "the peer to finish its Reads");
    wait_in_flight(c, &c->sends_posted, &c->sends_done, 0, "our last Send to complete");
}

int main(int argc, char **argv) {
    struct ctx c = {0};
    const char *addr = NULL, *port = "7180";
    int server = -1, opt;
    double timeout = 60;
    c.size = BULK_DEFAULT_SIZE;
    c.messages = BULK_DEFAULT_MESSAGES;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while ((opt = getopt(argc, argv, "sca:p:S:M:T:")) != -1) {
        switch (opt) {
        case 's': server = 1; break;
        case 'c': server = 0; break;
        case 'a': addr = optarg; break;
        case 'p': port = optarg; break;
        case 'S': c.size = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'M': c.messages = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'T': timeout = atof(optarg); break;
        default: server = -1, argc = 0; break;
        }
    }
    if (server < 0 || !addr || c.size < 1 || c.size > BULK_MAX_SIZE || c.messages > BULK_MAX_MESSAGES || timeout <= 0) {
        fprintf(stderr, "usage: verbs_bulk -s|-c -a addr [-p port] [-S 1..%u] [-M 0..%u] [-T sec]\n", BULK_MAX_SIZE,
                BULK_MAX_MESSAGES);
        return 2;
    }
    role = server ? "verbs_bulk server" : "verbs_bulk client";
    c.seed = server ? BULK_SEED_SERVER : BULK_SEED_CLIENT;
    c.peer_seed = server ? BULK_SEED_CLIENT : BULK_SEED_SERVER;
    c.send_slots = BULK_SEND_DEPTH;
    deadline_s = now_s() + timeout;

    struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *res;
    if (server) hints.ai_flags = RAI_PASSIVE;
    int rc = rdma_getaddrinfo(addr, port, &hints, &res);
    if (rc) fail("rdma_getaddrinfo(%s, %s): %s", addr, port, rc == -1 ? strerror(errno) : gai_strerror(rc));
    struct ibv_qp_init_attr attr = {.cap = {.max_send_wr = BULK_SEND_DEPTH + BULK_WRITE_DEPTH + BULK_READ_DEPTH + 2,
                                            .max_recv_wr = BULK_RECEIVES(c.messages),
                                            .max_send_sge = 1,
                                            .max_recv_sge = 1},
                                    .qp_type = IBV_QPT_RC,
                                    .sq_sig_all = 1};
    struct rdma_cm_id *listen_id = NULL;
    if (rdma_create_ep(server ? &listen_id : &c.id, res, NULL, &attr))
        fail("rdma_create_ep(%s:%s): %s", addr, port, strerror(errno));
    rdma_freeaddrinfo(res);
    if (server) {
        if (rdma_listen(listen_id, 1)) fail("rdma_listen: %s", strerror(errno));
        printf("%s: listening on %s port %s\n", role, addr, port);
        if (rdma_get_request(listen_id, &c.id)) fail("rdma_get_request: %s", strerror(errno));
    }
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    reg(&c, &c.recv, (size_t)BULK_RECEIVES(c.messages) * BULK_RECV_BYTES, IBV_ACCESS_LOCAL_WRITE);
    reg(&c, &c.send, (size_t)c.send_slots * BULK_RECV_BYTES, 0);
    reg(&c, &c.source, c.size, access);
    reg(&c, &c.writes, c.size, 0);
    reg(&c, &c.sink, c.size, access);
    reg(&c, &c.readback, c.size, IBV_ACCESS_LOCAL_WRITE);
    bulk_fill(c.source.buf, 0, c.size, c.seed, BULK_STREAM_SOURCE);
    bulk_fill(c.writes.buf, 0, c.size, c.seed, BULK_STREAM_WRITE);
    for (uint32_t i = 0; i < BULK_RECEIVES(c.messages); ++i) post_receive(&c, i);

    struct rdma_conn_param param = {.responder_resources = BULK_READ_DEPTH, .initiator_depth = BULK_READ_DEPTH};
    if (server ? rdma_accept(c.id, &param) : rdma_connect(c.id, &param))
        fail("%s: %s", server ? "rdma_accept" : "rdma_connect", strerror(errno));
    printf("%s: connected\n", role);

    exchange(&c);
    rdma_disconnect(c.id);
    printf("%s: PASS (Send both ways, %u bytes RDMA Write and Read each way)\n", role, c.size);
    return 0;
}
