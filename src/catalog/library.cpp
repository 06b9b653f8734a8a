// Provider libraries: whether one may be loaded, and loading exactly the
// file that was checked.
//
// The catalog names a library by path. Between a check of that path and a
// dlopen of it, whoever can write any directory on the way could put other
// code there. So the check covers every directory from / down (none may be
// writable by someone other than root or us; a sticky world-writable one,
// like /tmp, above the library's own directory is fine: others cannot
// rename what is ours in it), and the load opens the resolved path, which
// then only root or we can change.
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "catalog/catalog_internal.h"

namespace opennd {
namespace {

// The directories above `dir` (exclusive), from / down: trusted owner, no
// other user or group may write, unless sticky.
std::string CheckAncestors(const std::filesystem::path &dir, const std::string &shown) {
    std::filesystem::path at;
    for (const auto &part : dir) {
        at /= part;
        if (at == dir) break;
        struct stat st;
        if (stat(at.c_str(), &st) != 0) return "cannot access directory " + at.string() + ": " + catalog::ErrnoText(errno);
        if (st.st_mode & S_ISVTX) st.st_mode &= ~(S_IWOTH | S_IWGRP);  // others cannot replace our entries
        std::string why = catalog::CheckTrusted(st, "directory " + at.string() + " above library " + shown);
        if (!why.empty()) return why;
    }
    return "";
}

// The checks of CheckProviderLibrary; *real the resolved path, *checked its stat.
std::string Check(const std::string &path, std::string *real, struct stat *checked) {
    if (path.empty()) return "no library path";
    if (path[0] != '/') return "library path '" + path + "' is not absolute";
    char *resolved = realpath(path.c_str(), nullptr);
    if (!resolved) {
        int err = errno;
        if (err == ENOENT) return "library " + path + " does not exist";
        return "cannot resolve library " + path + ": " + catalog::ErrnoText(err);
    }
    *real = resolved;
    free(resolved);
    std::string shown = *real == path ? path : path + " (" + *real + ")";
    if (stat(real->c_str(), checked) != 0) return "cannot access library " + shown + ": " + catalog::ErrnoText(errno);
    if (!S_ISREG(checked->st_mode)) return "library " + shown + " is not a regular file";
    if (std::string why = catalog::CheckTrusted(*checked, "library " + shown); !why.empty()) return why;
    std::filesystem::path dir = std::filesystem::path(*real).parent_path();
    if (dir.empty()) dir = "/";
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) return "cannot access directory " + dir.string() + ": " + catalog::ErrnoText(errno);
    if (std::string why = catalog::CheckTrusted(st, "the directory " + dir.string() + " of library " + shown);
        !why.empty())
        return why;
    return CheckAncestors(dir, shown);
}

}  // namespace

std::string CheckProviderLibrary(const std::string &path) {
    std::string real;
    struct stat st;
    return Check(path, &real, &st);
}

void *LoadProviderLibrary(const std::string &path, int dlopen_flags, std::string *why) {
    std::string real;
    struct stat checked;
    *why = Check(path, &real, &checked);
    if (!why->empty()) return nullptr;
    // By the resolved path: no symbolic link left to follow, and only root or
    // we can change the file or any directory on the way. (Not through
    // /proc/self/fd/N: glibc remembers a name it loaded a file under, and the
    // next library opened under the same descriptor number would be taken
    // for the first.)
    dlerror();
    void *dl = dlopen(real.c_str(), dlopen_flags);
    if (!dl) {
        const char *err = dlerror();
        *why = "cannot load " + real + ": " + (err ? err : "unknown error");
    }
    return dl;
}

}  // namespace opennd
