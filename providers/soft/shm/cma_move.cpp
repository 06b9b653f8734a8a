#include "cma_move.h"

#include <cerrno>
#include <initializer_list>

namespace soft {

int MoveAll(pid_t pid, iovec *local, int nl, iovec *remote, int nr, bool write) {
    size_t want = 0;
    for (int i = 0; i < nl; ++i) want += local[i].iov_len;
    size_t done = 0;
    while (done < want) {
        ssize_t n = write ? process_vm_writev(pid, local, nl, remote, nr, 0)
                          : process_vm_readv(pid, local, nl, remote, nr, 0);
        if (n < 0) return errno;
        if (n == 0) return EFAULT;
        done += static_cast<size_t>(n);
        // Advance both vectors past n bytes.
        for (iovec *v : {local, remote}) {
            int &count = v == local ? nl : nr;
            size_t skip = static_cast<size_t>(n);
            int i = 0;
            while (i < count && skip >= v[i].iov_len) skip -= v[i++].iov_len;
            for (int j = i; j < count; ++j) v[j - i] = v[j];
            count -= i;
            if (count > 0) {
                v[0].iov_base = static_cast<char *>(v[0].iov_base) + skip;
                v[0].iov_len -= skip;
            }
        }
    }
    return 0;
}

int SliceIov(const iovec *in, int n, uint64_t from, uint64_t to, iovec *out) {
    int k = 0;
    uint64_t at = 0;
    for (int i = 0; i < n && at < to; ++i) {
        uint64_t begin = at, end = at + in[i].iov_len;
        at = end;
        if (end <= from) continue;
        uint64_t a = begin < from ? from : begin, b = end < to ? end : to;
        if (a < b) out[k++] = iovec{static_cast<char *>(in[i].iov_base) + (a - begin), static_cast<size_t>(b - a)};
    }
    return k;
}

}  // namespace soft
