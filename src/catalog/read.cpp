// The catalog on disk, read side: where it is, the permission rules, reading
// the directory and one drop-in file (provider libraries: library.cpp).
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "catalog/catalog_internal.h"
#include "opennd/log.h"
#include "opennd/params.h"

#ifndef OPENND_CATALOG_FROM_LIBDIR
#define OPENND_CATALOG_FROM_LIBDIR ""
#endif
#ifndef OPENND_SYSTEM_CATALOG_DIR
#define OPENND_SYSTEM_CATALOG_DIR "/etc/opennd/providers.d"
#endif

namespace opennd {
namespace catalog {

std::string CheckTrusted(const struct stat &st, const std::string &what) {
    if (st.st_mode & S_IWOTH) return what + " is world-writable";
    // Writable by a group other than root's: its members could change it.
    if ((st.st_mode & S_IWGRP) && st.st_gid != 0)
        return what + " is writable by group " + std::to_string(st.st_gid);
    uid_t euid = geteuid();
    if (st.st_uid != 0 && st.st_uid != euid)
        return what + " is owned by uid " + std::to_string(st.st_uid) + ", not by root or uid " +
               std::to_string(euid);
    return "";
}

std::string CheckCatalogDir(const std::string &dir) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) return "cannot access the catalog directory: " + ErrnoText(errno);
    if (!S_ISDIR(st.st_mode)) return "the catalog path is not a directory";
    std::string why = CheckTrusted(st, "the catalog directory");
    return why.empty() ? why : why + "; refusing the whole catalog";
}

std::string ResolveLibraryPath(const std::string &dir, const std::string &library) {
    namespace fs = std::filesystem;
    fs::path lib(library);
    if (lib.is_absolute()) return lib.lexically_normal().string();
    std::error_code ec;
    fs::path base = fs::absolute(fs::path(dir), ec);
    if (ec) base = fs::path(dir);
    return (base / lib).lexically_normal().string();
}

bool ListDropInNames(const std::string &dir, std::vector<std::string> *names) {
    names->clear();
    DIR *d = opendir(dir.c_str());
    if (!d) return false;
    errno = 0;
    while (struct dirent *de = readdir(d)) {
        std::string_view n = de->d_name;
        if (n.size() > 5 && n[0] != '.' && n.substr(n.size() - 5) == ".conf") names->emplace_back(n);
        errno = 0;
    }
    int err = errno;
    closedir(d);
    if (err != 0) {
        errno = err;
        return false;
    }
    std::sort(names->begin(), names->end());  // byte order: the catalog order
    return true;
}

DropIn ReadDropIn(const std::string &dir, const std::string &name) {
    DropIn f;
    f.name = name;
    std::string path = dir + "/" + name;
    // O_NONBLOCK: opening a FIFO must not hang the reader.
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        struct stat lst;
        if (err == ENOENT && lstat(path.c_str(), &lst) != 0)
            f.vanished = true;  // removed since the listing: not a problem
        f.problem = err == ENOENT && !f.vanished ? "broken symbolic link" : "cannot open: " + ErrnoText(err);
        return f;
    }
    struct stat st;
    std::string text;
    if (fstat(fd, &st) != 0) {
        f.problem = "cannot stat: " + ErrnoText(errno);
    } else if (!S_ISREG(st.st_mode)) {
        f.problem = "not a regular file";
    } else if (static_cast<uint64_t>(st.st_size) > kMaxFileSize) {
        f.problem = "file is larger than " + std::to_string(kMaxFileSize) + " bytes";
    } else {
        f.problem = CheckTrusted(st, "the file");
        text.resize(kMaxFileSize + 1);
        size_t got = 0;
        while (got < text.size()) {
            ssize_t n = read(fd, text.data() + got, text.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                f.problem = "read error: " + ErrnoText(errno);
                break;
            }
            if (n == 0) break;
            got += static_cast<size_t>(n);
        }
        text.resize(got);
    }
    close(fd);
    if (!f.problem.empty() && text.empty()) return f;
    // Parse even a refused file, so that a remover can still find its provider.
    std::string error;
    if (ParseCatalogEntry(text, &f.entry, &error)) {
        f.parsed = true;
        f.entry.file = path;
        f.entry.library_path = ResolveLibraryPath(dir, f.entry.library);
    } else if (f.problem.empty()) {
        f.problem = error;
    }
    return f;
}

}  // namespace catalog

CatalogListing ReadCatalog(const std::string &dir) {
    CatalogListing out;
    auto problem = [&](const std::string &file, const std::string &reason) {
        // Info, not Warn: the caller reports problems (the loader warns once per problem).
        OPENND_LOG(Info, "catalog: skipping %s: %s", file.c_str(), reason.c_str());
        out.problems.push_back({file, reason});
    };
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 && errno == ENOENT) {
        OPENND_LOG(Debug, "catalog: %s does not exist: empty catalog", dir.c_str());
        return out;
    }
    if (std::string why = catalog::CheckCatalogDir(dir); !why.empty()) {
        problem(dir, why);
        return out;
    }
    std::vector<std::string> names;
    if (!catalog::ListDropInNames(dir, &names)) {
        problem(dir, "cannot read the catalog directory: " + catalog::ErrnoText(errno));
        return out;
    }
    for (const std::string &name : names) {
        catalog::DropIn f = catalog::ReadDropIn(dir, name);
        if (f.vanished) continue;
        if (!f.problem.empty())
            problem(dir + "/" + name, f.problem);
        else
            out.entries.push_back(std::move(f.entry));
    }
    return out;
}

namespace {

bool PathExists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

// The directory of the libopennd.so file this code is in ("" if unknown).
std::string LibraryDirectory() {
    Dl_info info{};
    // The address of a function with internal linkage: an exported one could
    // resolve to a PLT entry in the executable.
    if (dladdr(reinterpret_cast<void *>(&LibraryDirectory), &info) == 0 || !info.dli_fname) return "";
    char *real = realpath(info.dli_fname, nullptr);
    if (!real) return "";
    std::string dir = std::filesystem::path(real).parent_path().string();
    free(real);
    return dir;
}

}  // namespace

std::string CatalogDirectory() {
    // Not in a set-user-ID or set-group-ID process (secure_getenv): its
    // caller must not pick the libraries it loads.
    if (const char *env = ParamText("OPENND_CATALOG")) return env;
    const std::string system_dir = OPENND_SYSTEM_CATALOG_DIR;
    const std::string relative = OPENND_CATALOG_FROM_LIBDIR;
    if (!relative.empty()) {
        std::string libdir = LibraryDirectory();
        if (!libdir.empty()) {
            std::string dir = (std::filesystem::path(libdir) / relative).lexically_normal().string();
            while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
            if (PathExists(dir) || !PathExists(system_dir)) return dir;
        } else {
            OPENND_LOG(Warn, "catalog: cannot find the file of libopennd; using %s", system_dir.c_str());
        }
    }
    return system_dir;
}

}  // namespace opennd
