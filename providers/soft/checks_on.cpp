// Linked into the shipped provider: every remote access is checked for the
// rights its region grants (mr_table.cpp). The conformance suite's own test
// links the same objects with tests/soft/checks_off.cpp instead.
#include "mr_table.h"

namespace soft {
extern const bool kCheckRemoteRights = true;
}
