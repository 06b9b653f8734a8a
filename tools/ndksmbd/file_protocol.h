// A minimal SMB2-like file service over an SMB Direct connection, enough to
// copy a file the way SMB does: small requests as messages, bulk data by RDMA
// through buffer descriptors (WRITE: the server RDMA-Reads the client's
// buffer; READ: the server RDMA-Writes into it), windows invalidated after
// each request. WRITE_INLINE carries data in the (fragmented) message itself.
//
// Request: op u8, channel u8, descriptor count u16, length u32, offset u64,
// then descriptors (16 B each), inline data or a file name.
// Response: op u8, 3 bytes zero, status u32, value u64 (bytes, or checksum).
#pragma once

#include <cstdint>
#include <string>

#include "smbd_connection.h"

namespace smbd {

enum class FileOp : uint8_t { Create = 1, Write = 2, WriteInline = 3, Read = 4, Close = 5 };

// FNV-1a, 64 bits: the checksum both ends compute.
uint64_t Checksum(const void *data, size_t length, uint64_t seed = 0xcbf29ce484222325ull);

class FileClient {
public:
    // `buffer`: client memory used for RDMA (registered here), at least one
    // max_read_write_size.
    FileClient(Connection &connection, size_t buffer = 4u << 20);
    ~FileClient();
    NTSTATUS Create(const std::string &name, uint64_t size);
    // Writes `length` bytes at `offset`, by RDMA (the server reads them) or
    // inline in messages.
    NTSTATUS Write(uint64_t offset, const uint8_t *data, size_t length, bool inline_data = false);
    // Reads `length` bytes at `offset` by RDMA (the server writes them).
    NTSTATUS Read(uint64_t offset, uint8_t *data, size_t length);
    // Flushes the file; *checksum: the server's checksum of what it stored.
    // The file stays readable until the connection ends.
    NTSTATUS Close(uint64_t *checksum);

private:
    NTSTATUS Call(FileOp op, uint32_t channel, uint64_t offset, uint32_t length, const Window *window,
                  const uint8_t *payload, size_t payload_length, uint64_t *value);
    Connection &c_;
    std::vector<uint8_t> memory_;
    Registration buffer_;
};

// Serves one client until it closes the file and disconnects (or fails).
// Files are created in `directory`. Returns the status that ended it.
NTSTATUS ServeFiles(Connection &connection, const std::string &directory, int idle_timeout_ms = 30000);

}  // namespace smbd
