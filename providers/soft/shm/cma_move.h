// Cross-memory attach helpers shared by one-sided operations and Sends.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

namespace soft {

// Moves every byte `local` describes between us and process `pid` (where
// `remote` describes): process_vm_writev if `write`, else readv, repeated
// while the kernel stops short. 0, or the errno (EFAULT: no progress).
// Both vectors are consumed.
int MoveAll(pid_t pid, iovec *local, int nl, iovec *remote, int nr, bool write);

// The bytes [from, to) of the pieces in[0..n) as pieces into out (room for
// n); returns how many.
int SliceIov(const iovec *in, int n, uint64_t from, uint64_t to, iovec *out);

}  // namespace soft
