/* The one table of ND status codes: name, value, meaning.
 * X(name, value, meaning) is applied to every entry. ndstatus.h turns it into
 * the constants, src/core/status.cpp into the name and meaning lookups, and
 * the conformance suite (tools/ndconformance/cases/types_and_helper.cpp)
 * checks the values against the SPI. */
#ifndef OPENND_STATUS_LIST_H
#define OPENND_STATUS_LIST_H

#define OPENND_STATUS_LIST(X)                                                                       \
    X(ND_SUCCESS, 0x00000000, "finished")                                                           \
    X(ND_TIMEOUT, 0x00000102, "a wait timed out (retry)")                                           \
    X(ND_PENDING, 0x00000103, "request queued; completion comes through the overlapped mechanism") \
    X(ND_BUFFER_OVERFLOW, 0x80000005, "buffer too small, or a queue overran")                       \
    X(ND_DEVICE_BUSY, 0x80000011, "memory windows are still bound to the region")                   \
    X(ND_NO_MORE_ENTRIES, 0x8000001A, "the queue is full")                                          \
    X(ND_UNSUCCESSFUL, 0xC0000001, "generic failure")                                               \
    X(ND_ACCESS_VIOLATION, 0xC0000005, "invalid buffer, token, range or rights")                    \
    X(ND_INVALID_HANDLE, 0xC0000008, "invalid handle")                                              \
    X(ND_INVALID_DEVICE_REQUEST, 0xC0000010, "malformed request")                                   \
    X(ND_INVALID_PARAMETER, 0xC000000D, "invalid parameter")                                        \
    X(ND_NO_MEMORY, 0xC0000017, "out of host memory")                                               \
    X(ND_INVALID_PARAMETER_MIX, 0xC0000030, "invalid combination of parameters")                    \
    X(ND_DATA_OVERRUN, 0xC000003C, "too many SGEs, or more data than the adapter can move")         \
    X(ND_SHARING_VIOLATION, 0xC0000043, "local address and port already in use")                    \
    X(ND_INSUFFICIENT_RESOURCES, 0xC000009A, "provider or hardware resources exhausted")            \
    X(ND_DEVICE_NOT_READY, 0xC00000A3, "not started, or the provider could not be loaded")          \
    X(ND_IO_TIMEOUT, 0xC00000B5, "timed out: the connection or the remote queue pair failed")       \
    X(ND_NOT_SUPPORTED, 0xC00000BB, "optional feature not supported")                               \
    X(ND_INTERNAL_ERROR, 0xC00000E5, "catastrophic queue failure")                                  \
    X(ND_INVALID_PARAMETER_1, 0xC00000EF, "parameter 1 is invalid")                                 \
    X(ND_INVALID_PARAMETER_2, 0xC00000F0, "parameter 2 is invalid")                                 \
    X(ND_INVALID_PARAMETER_3, 0xC00000F1, "parameter 3 is invalid")                                 \
    X(ND_INVALID_PARAMETER_4, 0xC00000F2, "parameter 4 is invalid")                                 \
    X(ND_INVALID_PARAMETER_5, 0xC00000F3, "parameter 5 is invalid")                                 \
    X(ND_INVALID_PARAMETER_6, 0xC00000F4, "parameter 6 is invalid")                                 \
    X(ND_INVALID_PARAMETER_7, 0xC00000F5, "parameter 7 is invalid")                                 \
    X(ND_INVALID_PARAMETER_8, 0xC00000F6, "parameter 8 is invalid")                                 \
    X(ND_INVALID_PARAMETER_9, 0xC00000F7, "parameter 9 is invalid")                                 \
    X(ND_INVALID_PARAMETER_10, 0xC00000F8, "parameter 10 is invalid")                               \
    X(ND_CANCELED, 0xC0000120, "cancelled or flushed")                                              \
    X(ND_REMOTE_ERROR, 0xC000013D, "the request caused an error at the remote queue pair")          \
    X(ND_INVALID_ADDRESS, 0xC0000141, "address not served by this provider or adapter")             \
    X(ND_INVALID_DEVICE_STATE, 0xC0000184, "object in the wrong state for this call")               \
    X(ND_INVALID_BUFFER_SIZE, 0xC0000206, "private data longer than the adapter allows")            \
    X(ND_TOO_MANY_ADDRESSES, 0xC0000209, "no free port in the ephemeral range 49152-65535")         \
    X(ND_ADDRESS_ALREADY_EXISTS, 0xC000020A, "a connection with the same address 4-tuple exists")   \
    X(ND_CONNECTION_REFUSED, 0xC0000236, "no listener, backlog full, or the peer rejected")         \
    X(ND_CONNECTION_INVALID, 0xC000023A, "not connected (or not connecting)")                       \
    X(ND_CONNECTION_ACTIVE, 0xC000023B, "the queue pair is already connected")                      \
    X(ND_NETWORK_UNREACHABLE, 0xC000023C, "remote network unreachable")                             \
    X(ND_HOST_UNREACHABLE, 0xC000023D, "remote host unreachable")                                   \
    X(ND_CONNECTION_ABORTED, 0xC0000241, "the peer abandoned the connection attempt")               \
    X(ND_DEVICE_REMOVED, 0xC00002B6, "adapter removed; only cleanup will succeed")

#endif
