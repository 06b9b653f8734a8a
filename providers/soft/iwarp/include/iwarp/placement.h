// Tagged memory, as the provider sees it. The engine never touches
// registered memory itself: every inbound tagged segment (RDMA Write, Read
// Response) and every inbound Read Request is checked through CheckTagged
// before a single byte is placed or fetched, and a failed check becomes a
// Terminate with the RFC's error code instead of a placement.
#pragma once

#include <cstddef>
#include <cstdint>

#include "iwarp/bytes.h"

namespace iwarp {

enum class Access : uint8_t {
    RemoteWrite,  // sink of an inbound RDMA Write (the peer writes our memory)
    RemoteRead,   // source of an inbound Read Request (the peer reads our memory)
    LocalWrite,   // sink of a Read Response to our own Read (STag chosen in PostRead)
};

enum class TaggedCheck : uint8_t {
    Ok,
    InvalidStag,        // no such STag (or invalidated, or not this kind of memory)
    BaseBounds,         // [to, to + len) not inside the registered range
    AccessRights,       // the STag does not grant `access`
    StagNotAssociated,  // valid STag, but not usable on this connection (other PD/QP)
};

class Placement {
public:
    virtual ~Placement();

    // Is [to, to + len) of `stag` usable for `access`? Called with len > 0
    // and to + len representable (no overflow); the engine never places or
    // fetches a byte of the range before this returned Ok.
    virtual TaggedCheck CheckTagged(uint32_t stag, uint64_t to, uint32_t len, Access access) = 0;

    // Copies into a range that passed CheckTagged for `access` (RemoteWrite
    // or LocalWrite; a provider may keep the two STag spaces apart).
    virtual void PlaceTagged(uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len, Access access) = 0;

    // Copies out of a range that passed CheckTagged(RemoteRead) when the Read
    // Request arrived, to build Read Responses (possibly much later, in
    // pieces). Returns false if the memory is no longer accessible (the
    // engine then terminates the stream).
    virtual bool FetchTagged(uint32_t stag, uint64_t to, uint8_t *out, uint32_t len) = 0;
    // Where FetchTagged would copy from, if the range is plain memory of
    // this process (the engine then appends it to its output in one copy);
    // nullptr: use FetchTagged. Checked like FetchTagged. Default: nullptr.
    virtual const uint8_t *TaggedSource(uint32_t stag, uint64_t to, uint32_t len);

    // Where a range that just passed CheckTagged for `access` (RemoteWrite
    // or LocalWrite) lies, if it is plain memory of this process: fills at
    // most `max` buffers in address order (the range's first bytes if more
    // would be needed) and returns how many; the caller then reads the
    // stream straight into them. 0: not possible (use PlaceTagged).
    // Default: 0.
    virtual size_t TaggedDestination(uint32_t stag, uint64_t to, uint32_t len, Access access, MutableBuffer *out,
                                     size_t max);

    // Send with Invalidate: invalidate `stag` once the message is placed.
    // Returns false if it cannot be invalidated. Default: refuse.
    virtual bool InvalidateStag(uint32_t stag);

    // May the payload of an inbound Send be placed into the receive posted
    // as `id` now? Asked before every segment's bytes are copied, so a
    // receive whose memory was deregistered after it was posted is never
    // written (the receive then fails and the stream is terminated, as a
    // NIC reports a local protection error). Default: yes.
    virtual bool ReceiveUsable(uint64_t id);
};

}  // namespace iwarp
