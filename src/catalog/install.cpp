// Changing the catalog: install and remove drop-in files, atomically and
// serialised across processes with flock on <dir>/.lock. Readers take no
// lock: every file appears whole (temp file + rename) or not at all.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "catalog/catalog_internal.h"
#include "opennd/log.h"

namespace opennd {
namespace catalog {
namespace {

int Fail(std::string *error, int err, const std::string &msg) {
    if (error) *error = msg;
    return err;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

// mkdir -p; directories created here get 0755 whatever the umask.
int MakeDirs(const std::string &dir, std::string *error) {
    std::filesystem::path cur;
    for (const auto &part : std::filesystem::path(dir)) {
        cur /= part;
        if (mkdir(cur.c_str(), 0755) == 0) {
            chmod(cur.c_str(), 0755);
        } else if (errno != EEXIST) {
            return Fail(error, errno, "cannot create " + cur.string() + ": " + ErrnoText(errno));
        }
    }
    return 0;
}

// Takes the catalog lock; released when lock is destroyed.
int Lock(const std::string &dir, Fd *lock, std::string *error) {
    std::string path = dir + "/.lock";
    lock->fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lock->fd < 0) return Fail(error, errno, "cannot open the catalog lock " + path + ": " + ErrnoText(errno));
    while (flock(lock->fd, LOCK_EX) != 0) {
        if (errno != EINTR) return Fail(error, errno, "cannot lock " + path + ": " + ErrnoText(errno));
    }
    return 0;
}

int SyncDir(const std::string &dir, std::string *error) {
    Fd d;
    d.fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d.fd < 0 || fsync(d.fd) != 0) return Fail(error, errno, "cannot sync " + dir + ": " + ErrnoText(errno));
    return 0;
}

// Temp files are ".<target>.tmp.XXXXXX". Only lock holders create them, so
// under the lock any that exist were left by an installer that died.
void RemoveStaleTemps(const std::string &dir) {
    DIR *d = opendir(dir.c_str());
    if (!d) return;
    while (struct dirent *de = readdir(d)) {
        std::string_view n = de->d_name;
        if (n.size() > 1 && n[0] == '.' && n.find(".conf.tmp.") != std::string_view::npos) {
            OPENND_LOG(Info, "catalog: removing stale temp file %s/%s", dir.c_str(), de->d_name);
            unlinkat(dirfd(d), de->d_name, 0);
        }
    }
    closedir(d);
}

int WriteAtomically(const std::string &dir, const std::string &name, const std::string &text, std::string *error) {
    std::string tmp = dir + "/." + name + ".tmp.XXXXXX";
    Fd f;
    f.fd = mkostemp(tmp.data(), O_CLOEXEC);
    if (f.fd < 0) return Fail(error, errno, "cannot create a file in " + dir + ": " + ErrnoText(errno));
    auto fail = [&](const std::string &what) {
        int err = errno;
        unlink(tmp.c_str());
        return Fail(error, err, what + " " + tmp + ": " + ErrnoText(err));
    };
    if (fchmod(f.fd, 0644) != 0) return fail("cannot chmod");
    for (size_t off = 0; off < text.size();) {
        ssize_t n = write(f.fd, text.data() + off, text.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail("cannot write");
        off += static_cast<size_t>(n);
    }
    if (fsync(f.fd) != 0) return fail("cannot sync");
    int fd = f.fd;
    f.fd = -1;
    if (close(fd) != 0) return fail("cannot close");
    if (rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) return fail("cannot rename into place");
    return 0;
}

// Every drop-in of dir (except those removed meanwhile).
std::vector<DropIn> Scan(const std::string &dir) {
    std::vector<DropIn> out;
    std::vector<std::string> names;
    if (!ListDropInNames(dir, &names)) return out;
    for (const std::string &n : names) {
        DropIn f = ReadDropIn(dir, n);
        if (!f.vanished) out.push_back(std::move(f));
    }
    return out;
}

// Orders 90 to 99 are for providers that serve every address (ndsoft): a
// provider installed without an order goes before them, so NdOpenAdapter
// tries a provider that serves an address of its own (a NIC's) first.
constexpr char kFallbackOrderPrefix[] = "90-";

// "NN" if the file name starts with two digits and '-'.
std::string OrderPrefix(const std::string &path) {
    std::string n = std::filesystem::path(path).filename().string();
    if (n.size() >= 3 && isdigit(static_cast<unsigned char>(n[0])) && isdigit(static_cast<unsigned char>(n[1])) &&
        n[2] == '-')
        return n.substr(0, 2);
    return "";
}

std::string TargetName(const std::string &nn, const std::string &base, size_t index, size_t count) {
    char kk[24] = "";
    if (count > 1) std::snprintf(kk, sizeof kk, "-%02zu", index + 1);
    return nn + "-" + base + kk + ".conf";
}

int PrepareDir(const std::string &dir, Fd *lock, std::string *error) {
    if (std::string why = CheckCatalogDir(dir); !why.empty()) return Fail(error, EACCES, dir + ": " + why);
    if (int err = Lock(dir, lock, error)) return err;
    RemoveStaleTemps(dir);
    return 0;
}

}  // namespace

int InstallEntries(const std::string &dir, const std::vector<CatalogEntry> &entries, std::string *error) {
    if (entries.empty()) return Fail(error, EINVAL, "no catalog entries to install");
    if (entries.size() > 99) return Fail(error, EINVAL, "more than 99 entries for one provider");
    const GUID id = entries[0].provider_id;
    std::vector<std::string> texts(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        std::string why;
        if (entries[i].provider_id != id)
            return Fail(error, EINVAL, "the entries of one installation must share one provider_id");
        if (!FormatCatalogEntry(entries[i], &texts[i], &why))
            return Fail(error, EINVAL, entries.size() > 1 ? "entry " + std::to_string(i + 1) + ": " + why : why);
    }
    if (int err = MakeDirs(dir, error)) return err;
    Fd lock;
    if (int err = PrepareDir(dir, &lock, error)) return err;

    std::vector<DropIn> files = Scan(dir);
    std::vector<std::string> mine;  // files of this provider, to be replaced
    std::string last_other;         // the last file of any other provider, below the fallback orders
    for (const DropIn &f : files) {
        if (f.parsed && f.entry.provider_id == id)
            mine.push_back(f.name);
        else if (f.name < kFallbackOrderPrefix)
            last_other = f.name;
    }
    const std::string base = SanitizeName(entries[0].name);
    std::string nn = OrderPrefix(entries[0].file);
    if (nn.empty() && !mine.empty()) nn = OrderPrefix(mine[0]);
    if (nn.empty()) {
        nn = "89";
        for (int n = 50; n <= 89; ++n) {
            std::string cand = std::to_string(n);
            if (last_other.empty() || TargetName(cand, base, 0, entries.size()) > last_other) {
                nn = cand;
                break;
            }
        }
    }
    std::vector<std::string> targets;
    for (size_t i = 0; i < entries.size(); ++i) {
        targets.push_back(TargetName(nn, base, i, entries.size()));
        for (const DropIn &f : files) {
            if (f.name != targets.back() || (f.parsed && f.entry.provider_id == id)) continue;
            if (f.parsed)
                return Fail(error, EEXIST,
                            dir + "/" + f.name + " already exists and belongs to provider " +
                                FormatGuid(f.entry.provider_id) + " (" + f.entry.name + ")");
            return Fail(error, EEXIST, dir + "/" + f.name + " already exists and is not a valid entry: " + f.problem);
        }
    }
    for (size_t i = 0; i < entries.size(); ++i)
        if (int err = WriteAtomically(dir, targets[i], texts[i], error)) return err;
    for (const std::string &old : mine) {
        bool kept = false;
        for (const std::string &t : targets) kept = kept || t == old;
        if (!kept && unlink((dir + "/" + old).c_str()) != 0 && errno != ENOENT)
            return Fail(error, errno, "cannot remove the old file " + dir + "/" + old + ": " + ErrnoText(errno));
    }
    if (int err = SyncDir(dir, error)) return err;
    OPENND_LOG(Info, "catalog: installed %s (%s) as %s/%s", FormatGuid(id).c_str(), entries[0].name.c_str(),
               dir.c_str(), targets[0].c_str());
    return 0;
}

int RemoveMatching(const std::string &dir, const GUID *id, const std::string *name, std::string *error) {
    const std::string who = id ? "provider " + FormatGuid(*id) : "provider '" + *name + "'";
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 && errno == ENOENT) return Fail(error, ENOENT, who + " is not installed");
    Fd lock;
    if (int err = PrepareDir(dir, &lock, error)) return err;
    int removed = 0;
    for (const DropIn &f : Scan(dir)) {
        if (!f.parsed || (id ? f.entry.provider_id != *id : f.entry.name != *name)) continue;
        std::string path = dir + "/" + f.name;
        if (unlink(path.c_str()) != 0 && errno != ENOENT)
            return Fail(error, errno, "cannot remove " + path + ": " + ErrnoText(errno));
        OPENND_LOG(Info, "catalog: removed %s", path.c_str());
        ++removed;
    }
    if (removed == 0) return Fail(error, ENOENT, who + " is not installed");
    return SyncDir(dir, error);
}

}  // namespace catalog

bool InstallProvider(const std::string &dir, const CatalogEntry &e, std::string *error) {
    return catalog::InstallEntries(dir, {e}, error) == 0;
}

bool InstallProvider(const std::string &dir, const std::vector<CatalogEntry> &entries, std::string *error) {
    return catalog::InstallEntries(dir, entries, error) == 0;
}

bool RemoveProvider(const std::string &dir, const GUID &id, std::string *error) {
    return catalog::RemoveMatching(dir, &id, nullptr, error) == 0;
}

bool RemoveProviderByName(const std::string &dir, const std::string &name, std::string *error) {
    return catalog::RemoveMatching(dir, nullptr, &name, error) == 0;
}

}  // namespace opennd
