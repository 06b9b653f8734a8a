// rdma-core rping's wire protocol (librdmacm/examples/rping.c), as ndrping
// speaks it. Facts taken from that source:
//
//  - every message is a Send of exactly 16 bytes, `struct rping_rdma_info
//    { __be64 buf; __be32 rkey; __be32 size; }`, all big-endian; each side
//    keeps one 16-byte Receive posted and reposts it as soon as one completes;
//  - per ping the client fills its start buffer (see FillPing) and sends its
//    {address, rkey, size}; the server RDMA-Reads `size` bytes from it and
//    Sends a go-ahead (its never-formatted send buffer: 16 zero bytes); the
//    client Sends its sink buffer's {address, rkey, size}; the server
//    RDMA-Writes strlen(data) + 1 bytes there and Sends a second go-ahead;
//    the client compares sink and start buffers (-V) and starts the next
//    ping. The client disconnects after -C pings; the server runs until then;
//  - rdma_connect asks for responder_resources = initiator_depth = 1 (one
//    RDMA Read in flight each way); the server accepts with the defaults; no
//    private data;
//  - default size 64, accepted 23..65535 (RPING_MIN_BUFSIZE is
//    sizeof("INT_MAX") + sizeof("rdma-ping-%d: ") since rping.c never
//    defines INT_MAX; RPING_BUFSIZE - 1); default port 7174; -C 0 = forever.
#pragma once

#include <cstdint>
#include <string>

namespace ndrping {

constexpr uint16_t kDefaultPort = 7174;
constexpr uint32_t kDefaultSize = 64;
constexpr uint32_t kMinSize = 23;
constexpr uint32_t kMaxSize = 65535;
constexpr uint32_t kServerBufferBytes = 65536;  // RPING_BUFSIZE: fits any client size
constexpr uint32_t kInfoBytes = 16;

// One rping_rdma_info, decoded. `token` is an ND remote token: ND tokens are
// in network byte order already (ND2-SPEC R077), so the 4 wire bytes are the
// token's 4 bytes in memory, with no conversion either way.
struct BufferInfo {
    uint64_t address = 0;  // host byte order (ND Read/Write take it so)
    uint32_t token = 0;
    uint32_t size = 0;  // host byte order
};

void Encode(const BufferInfo &info, unsigned char out[kInfoBytes]);
BufferInfo Decode(const unsigned char in[kInfoBytes]);

// rping client's text for ping number `ping` (0-based): "rdma-ping-N: "
// then ASCII 'A'..'z' cycling from 'A' + ping % 58, NUL in the last byte.
void FillPing(char *buf, uint32_t size, uint32_t ping);

// Empty if `buf` holds exactly FillPing's text for `ping`, else where and how
// it differs.
std::string CheckPing(const char *buf, uint32_t size, uint32_t ping);

// "offset 12: expected 0x41 'A', got 0x00" for the first differing byte, or
// empty if the two are equal.
std::string FirstDifference(const char *expected, const char *got, uint32_t size);

}  // namespace ndrping
