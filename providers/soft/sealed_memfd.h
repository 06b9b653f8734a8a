// Shared mappings a peer process hands us (its channel, its memory-region
// table) are memfds sealed against resizing: a file the peer shrank after
// we mapped it would fault our next access (SIGBUS) instead of failing a
// request.
#pragma once

#include <cstddef>
#include <string>

namespace soft {

// A memfd of `bytes`, zero-filled, that can no longer shrink or grow; -1
// with *error set on failure.
int CreateSealedMemfd(const char *name, size_t bytes, std::string *error);

// A peer's fd is fit to map: exactly `bytes` long, sealed against shrinking.
// Otherwise false with *error saying why (`what`: "channel", say).
bool SealedAtSize(int fd, size_t bytes, const char *what, std::string *error);

}  // namespace soft
