#include "sealed_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010  // Linux 5.1
#endif

namespace soft {

int CreateSealedMemfd(const char *name, size_t bytes, std::string *error, bool final) {
    const int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | (final ? F_SEAL_SEAL : 0)) != 0) {
        *error = std::string("cannot create a sealed ") + name + ": " + std::strerror(errno);
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

bool SealForReaders(int fd, std::string *error) {
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) == 0) return true;
    *error = std::string("cannot seal against new writers: ") + std::strerror(errno);
    return false;
}

// Seals first, then the size: once it cannot shrink, the size we see stays.
bool SealedAtSize(int fd, size_t bytes, const char *what, std::string *error) {
    const int seals = fd < 0 ? -1 : fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
        *error = std::string("the peer's ") + what + " is missing or not sealed against shrinking";
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != bytes) {
        *error = std::string("the peer's ") + what + " has the wrong size";
        return false;
    }
    return true;
}

}  // namespace soft
