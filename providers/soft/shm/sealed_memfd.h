// Shared mappings a peer process hands us (its channel, its memory-region
// table) are memfds sealed against resizing: a file the peer shrank after
// we mapped it would fault our next access (SIGBUS) instead of failing a
// request.
#pragma once

#include <cstddef>
#include <string>

namespace soft {

// A memfd of `bytes`, zero-filled, that can no longer shrink or grow; -1
// with *error set on failure. With `final` false no seal is added yet:
// the creator maps it writable, then calls SealForReaders.
int CreateSealedMemfd(const char *name, size_t bytes, std::string *error, bool final = true);

// Seals a memfd from CreateSealedMemfd(final = false) so that only mappings
// that exist now can write it: a peer handed a read-only descriptor cannot
// reopen it writable through /proc/<pid>/fd (memfds are mode 0777), map it
// writable or write(2) it. Then no seal can be added or removed.
bool SealForReaders(int fd, std::string *error);

// A peer's fd is fit to map: exactly `bytes` long, sealed against shrinking.
// Otherwise false with *error saying why (`what`: "channel", say).
bool SealedAtSize(int fd, size_t bytes, const char *what, std::string *error);

}  // namespace soft
