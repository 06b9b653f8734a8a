/* The bulk exchange: OpenND's own verified bandwidth-style exchange, spoken
 * by `ndrping --bulk` (ND) and tests/interop/verbs_bulk.c (rdma-core verbs
 * and rdma_cm), so an ND program and a verbs program on another RDMA stack
 * (Linux siw) check each other with many requests in flight. C and C++.
 *
 * Both sides run the same steps at the same time once connected; only the
 * connection is asymmetric (client connects, server listens and accepts).
 * Read limits asked and granted: BULK_READ_DEPTH each way.
 *
 *  1. Post BULK_RECEIVES(messages) Receives of BULK_RECV_BYTES each, then
 *     connect. Send a hello (BULK_HELLO_BYTES); take the peer's.
 *  2. Send `messages` messages; message j is bulk_send_length(j) bytes of
 *     stream 2 + j. Keep at most BULK_SEND_DEPTH in flight. Every Receive is
 *     checked (length and bytes) as it completes, in order.
 *  3. RDMA Write the peer's sink: `size` bytes of stream 1, in chunks of
 *     bulk_chunk(offset) at most BULK_WRITE_DEPTH in flight, then Send a
 *     control message BULK_WRITES_DONE right after the last Write (RDMA
 *     ordering: its Receive completes after every Write is placed). On the
 *     peer's WRITES_DONE, the local sink must hold the peer's stream 1.
 *  4. RDMA Read the peer's source (`size` bytes of the peer's stream 0), same
 *     chunks, at most BULK_READ_DEPTH in flight, into a local buffer that
 *     must then hold the peer's stream 0. Send BULK_READS_DONE.
 *  5. Once the peer's READS_DONE is in (it no longer touches our memory)
 *     and our own Sends completed, disconnect.
 *
 * Streams are bytes no other offset or side shares: byte i of stream s of
 * side `seed` (client 1, server 2) is byte i % 8 (little-endian) of
 * bulk_mix(seed << 56 | s << 40 | i / 8).
 *
 * Remote tokens travel as in rping: the 4 wire bytes of `*_rkey` are an ND
 * token's bytes (ND tokens are big-endian already), a verbs rkey in network
 * byte order. Addresses and lengths are big-endian. */
#ifndef OPENND_BULK_PROTOCOL_H
#define OPENND_BULK_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BULK_MAGIC 0x4f4e4442u /* "ONDB" */
#define BULK_VERSION 1u
#define BULK_RECV_BYTES 65536u
#define BULK_SEND_DEPTH 8u
#define BULK_WRITE_DEPTH 8u
#define BULK_READ_DEPTH 4u
#define BULK_CHUNK 65521u /* prime: chunks start at odd offsets */
#define BULK_DEFAULT_SIZE (1u << 20)
#define BULK_MAX_SIZE (64u << 20)
#define BULK_DEFAULT_MESSAGES 64u
#define BULK_MAX_MESSAGES 1000u
#define BULK_RECEIVES(messages) ((messages) + 3u) /* hello, messages, writes done, reads done */
#define BULK_SEED_CLIENT 1u
#define BULK_SEED_SERVER 2u
#define BULK_STREAM_SOURCE 0u
#define BULK_STREAM_WRITE 1u
#define BULK_STREAM_SEND(j) (2u + (uint32_t)(j))

enum { BULK_HELLO = 1, BULK_WRITES_DONE = 2, BULK_READS_DONE = 3 };

/* hello (44 bytes): be32 magic, version, kind, size, messages; source
 * {be64 addr, rkey[4]}; sink {be64 addr, rkey[4]}.
 * control (16 bytes): be32 magic, version, kind, 0. */
#define BULK_HELLO_BYTES 44u
#define BULK_CONTROL_BYTES 16u

struct bulk_hello {
    uint32_t kind, size, messages;
    uint64_t source_addr, sink_addr;
    unsigned char source_rkey[4], sink_rkey[4]; /* wire bytes, as they are */
};

static inline void bulk_put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8),
    p[3] = (unsigned char)v;
}
static inline uint32_t bulk_get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void bulk_put64(unsigned char *p, uint64_t v) {
    bulk_put32(p, (uint32_t)(v >> 32)), bulk_put32(p + 4, (uint32_t)v);
}
static inline uint64_t bulk_get64(const unsigned char *p) {
    return (uint64_t)bulk_get32(p) << 32 | bulk_get32(p + 4);
}

/* Encodes a hello (kind BULK_HELLO) or a control message (other kinds:
 * only `kind` is used); returns its length. `out` holds BULK_HELLO_BYTES. */
static inline uint32_t bulk_encode(const struct bulk_hello *m, unsigned char *out) {
    memset(out, 0, BULK_HELLO_BYTES);
    bulk_put32(out, BULK_MAGIC);
    bulk_put32(out + 4, BULK_VERSION);
    bulk_put32(out + 8, m->kind);
    if (m->kind != BULK_HELLO) return BULK_CONTROL_BYTES;
    bulk_put32(out + 12, m->size);
    bulk_put32(out + 16, m->messages);
    bulk_put64(out + 20, m->source_addr);
    memcpy(out + 28, m->source_rkey, 4);
    bulk_put64(out + 32, m->sink_addr);
    memcpy(out + 40, m->sink_rkey, 4);
    return BULK_HELLO_BYTES;
}

/* Decodes `len` bytes; returns the kind (0 if the message is not one of
 * ours: wrong magic, version or length). */
static inline uint32_t bulk_decode(const unsigned char *in, uint32_t len, struct bulk_hello *m) {
    memset(m, 0, sizeof *m);
    if (len < BULK_CONTROL_BYTES || bulk_get32(in) != BULK_MAGIC || bulk_get32(in + 4) != BULK_VERSION) return 0;
    m->kind = bulk_get32(in + 8);
    if (m->kind == BULK_WRITES_DONE || m->kind == BULK_READS_DONE) return len == BULK_CONTROL_BYTES ? m->kind : 0;
    if (m->kind != BULK_HELLO || len != BULK_HELLO_BYTES) return 0;
    m->size = bulk_get32(in + 12);
    m->messages = bulk_get32(in + 16);
    m->source_addr = bulk_get64(in + 20);
    memcpy(m->source_rkey, in + 28, 4);
    m->sink_addr = bulk_get64(in + 32);
    memcpy(m->sink_rkey, in + 40, 4);
    return m->kind;
}

static inline uint64_t bulk_mix(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Bytes [offset, offset + len) of stream `stream` of side `seed`. */
static inline void bulk_fill(unsigned char *buf, uint64_t offset, size_t len, uint32_t seed, uint32_t stream) {
    uint64_t base = (uint64_t)seed << 56 | (uint64_t)stream << 40;
    for (size_t k = 0; k < len; ++k) {
        uint64_t i = offset + k;
        buf[k] = (unsigned char)(bulk_mix(base | i / 8) >> (8 * (i % 8)));
    }
}

/* The first offset in [0, len) where `buf` differs from the stream, or -1. */
static inline long long bulk_check(const unsigned char *buf, size_t len, uint32_t seed, uint32_t stream) {
    uint64_t base = (uint64_t)seed << 56 | (uint64_t)stream << 40;
    for (size_t i = 0; i < len; ++i)
        if (buf[i] != (unsigned char)(bulk_mix(base | i / 8) >> (8 * (i % 8)))) return (long long)i;
    return -1;
}

/* Message j's length: 1 byte, a full Receive, and lengths in between. */
static inline uint32_t bulk_send_length(uint32_t j) {
    if (j % 4 == 0) return j % 8 == 0 ? 1u : BULK_RECV_BYTES;
    return 1u + (j * 40503u) % BULK_RECV_BYTES;
}

/* Length of the Write/Read chunk at `offset` of a `size`-byte region. */
static inline uint32_t bulk_chunk(uint32_t offset, uint32_t size) {
    return size - offset < BULK_CHUNK ? size - offset : BULK_CHUNK;
}

#endif
