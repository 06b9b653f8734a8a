// The deliberately broken provider (ndsoft_broken, never installed): RDMA
// Reads and Writes are not checked for the target's rights, so the
// conformance suite can show it catches a provider that forgets to.
#include "mr_table.h"

namespace soft {
extern const bool kCheckRemoteRights = false;
}
