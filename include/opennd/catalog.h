/* OpenND: the NetworkDirect provider catalog.
 *
 * On Windows, ND providers register in the Winsock catalog
 * (WSCInstallProvider, see <ws2spi.h>). On Linux the catalog is a directory of
 * drop-in files, one file per catalog entry, read in file-name order (that is
 * the catalog order). CatalogDirectory() says which directory.
 *
 * Drop-in file format (cmake/provider.conf.in is the template):
 *   - UTF-8 text, at most 64 KiB, every line ending in '\n' (a last line with
 *     no newline is taken as a truncated, half-written file). "\r\n" is fine.
 *   - `key=value` lines; blank lines and lines whose first non-blank character
 *     is '#' are ignored. Spaces around keys and values are ignored. There are
 *     no inline comments: '#' after '=' belongs to the value.
 *   - Keys, each at most once:
 *       format=1                 required, must be 1
 *       name=TEXT                required; the entry's name (szProtocol)
 *       description=TEXT         optional
 *       provider_id={GUID}       required; braces optional; not the nil GUID
 *       library=PATH             required; relative to the catalog directory
 *                                unless absolute; no variable expansion
 *       service_flags1=N         required (32-bit unsigned)
 *       provider_flags=N         required (32-bit unsigned)
 *       version=N                required (32-bit signed)
 *       address_family=inet|inet6  required; by name, never a number
 *       socket_type=N            required (32-bit signed, -1 for ND)
 *       protocol=N               required (32-bit signed)
 *       protocol_max_offset=N    required (32-bit signed)
 *     N is decimal (optionally negative) or 0x-prefixed hexadecimal; for the
 *     signed keys a hex value is the 32-bit two's-complement pattern
 *     (socket_type=0xFFFFFFFF is -1).
 *   - An unknown key makes the file a problem (so a typo is caught instead of
 *     silently dropping a setting); so do a missing required key, a duplicate
 *     key, a bad number or GUID, a line without '=', invalid UTF-8 or a NUL.
 *
 * A file that parses is a catalog entry even if it does not describe an ND
 * provider (as in Winsock, the catalog holds whatever was registered); the
 * consumer applies IsNdCandidate() (ND2-SPEC §5.2).
 */
#ifndef OPENND_CATALOG_H
#define OPENND_CATALOG_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opennd/win32.h"

namespace opennd {

struct CatalogEntry {
    std::string file;         /* the drop-in file (catalog dir + "/" + name) it was read from */
    std::string name;         /* szProtocol */
    std::string description;  /* optional, free text */
    GUID provider_id{};       /* ProviderId, the CLSID passed to DllGetClassObject */
    std::string library;      /* as written in the file */
    std::string library_path; /* resolved absolute path: relative paths are relative to the catalog directory */
    /* The defaults are an ND v2 registration (ND2-SPEC §5.1). */
    uint32_t service_flags1 = 0x8E;  /* XP1_GUARANTEED_DELIVERY|ORDER|MESSAGE_ORIENTED|CONNECT_DATA */
    uint32_t provider_flags = 0x14;  /* PFL_HIDDEN | PFL_NETWORKDIRECT_PROVIDER */
    int32_t version = 0x20000;       /* ND_VERSION_2 */
    int address_family = AF_INET6;   /* AF_INET or AF_INET6 (Linux values) */
    int socket_type = -1;
    int protocol = 0;
    int protocol_max_offset = 0;
};

struct CatalogProblem {
    std::string file; /* the drop-in file, or the catalog directory itself */
    std::string reason;
};

struct CatalogListing {
    std::vector<CatalogEntry> entries; /* catalog order */
    std::vector<CatalogProblem> problems;
};

/* The catalog directory: $OPENND_CATALOG if set and non-empty (ignored in
 * set-user-ID and set-group-ID processes, as secure_getenv does); otherwise the
 * directory relative to the libopennd.so file in use (build tree or install
 * tree) if it exists; otherwise the system directory (/etc/opennd/providers.d). */
OPENND_API std::string CatalogDirectory();

/* Reads every regular, non-hidden `*.conf` file of dir in file-name (byte)
 * order. A bad file is reported in problems and skipped; the others still
 * load. A missing directory is an empty catalog. Refused, as problems: a
 * world-writable directory or one owned by a user other than root or the
 * effective uid (then there are no entries at all), and a drop-in file that is
 * world-writable or owned by such a user. Problems are logged at info level
 * only: reporting them is the caller's job (it may read the catalog often). */
OPENND_API CatalogListing ReadCatalog(const std::string &dir);

/* The ND2-SPEC §5.2 candidate predicate. version 2 is accepted as v2 (D01). */
OPENND_API bool IsNdCandidate(const CatalogEntry &e, std::string *why_not);

/* "" if the provider library at path may be loaded, otherwise why not: the
 * path is not absolute, does not exist, is not a regular file, or the file,
 * its directory or any directory above it (after realpath) is owned by a
 * user other than root or the effective uid, or writable by others (world,
 * or a group other than root's; a sticky directory above the library's own
 * is fine). */
OPENND_API std::string CheckProviderLibrary(const std::string &path);

/* dlopen of the provider library at path, if CheckProviderLibrary allows it:
 * by its resolved path (no symbolic link left, every directory on the way
 * changeable by root or us only, so no one else can swap the file between
 * the check and the load). NULL with *why set otherwise. */
OPENND_API void *LoadProviderLibrary(const std::string &path, int dlopen_flags, std::string *why);

/* Writes e as one drop-in file in dir, atomically (temp file, fsync, rename,
 * fsync of the directory), creating dir (0755) if it is missing. Installers
 * and removers of all processes are serialised with flock on dir/.lock.
 * Every other file of the same provider_id is replaced.
 *
 * The file is named NN-<name>.conf, with <name> reduced to [A-Za-z0-9_.-]
 * (other characters become '_'). The order prefix NN is:
 *   1. the two digits e.file's base name starts with, if it is "DD-...": the
 *      entry names its own order (ndinstall -i 20-foo.conf keeps 20);
 *   2. otherwise, when replacing an installed provider, its existing prefix
 *      (the provider keeps its place in the catalog);
 *   3. otherwise the smallest NN from 50 to 89 that makes the new file sort
 *      after every existing file below 90 (a new provider goes last, as in
 *      Winsock, but before the fallbacks); 89 if none does.
 * Orders 90 to 99 are for fallback providers, which serve every address
 * (ndsoft is 90): NdOpenAdapter tries providers in catalog order, so one
 * that serves an address of its own (a NIC's) must come first. A provider
 * that serves every address installs itself with an order of 90 or more.
 * Fails (false, *error says why) if the entry cannot be stored (see
 * FormatCatalogEntry), the directory is refused by ReadCatalog's rules, the
 * target name belongs to another provider, or on an I/O error. */
OPENND_API bool InstallProvider(const std::string &dir, const CatalogEntry &e, std::string *error);

/* Several entries of one provider (all with the same provider_id), e.g. one per
 * address family, in one step. With more than one entry the files are named
 * NN-<first name>-01.conf, -02, ... so they keep their order. */
OPENND_API bool InstallProvider(const std::string &dir, const std::vector<CatalogEntry> &entries,
                                std::string *error);

/* Removes every drop-in file of the provider (by provider_id or by name),
 * under the same lock. False with "not installed" if there is none. */
OPENND_API bool RemoveProvider(const std::string &dir, const GUID &id, std::string *error);
OPENND_API bool RemoveProviderByName(const std::string &dir, const std::string &name, std::string *error);

/* Drop-in file text <-> entry. ParseCatalogEntry fills every field except
 * file and library_path; on failure *error is "line N: ..." or names the
 * missing keys. FormatCatalogEntry fails if a field cannot be stored: empty or
 * multi-line name/library, surrounding spaces, invalid UTF-8, a name longer
 * than 255 bytes, the nil GUID, or a family other than AF_INET/AF_INET6. */
OPENND_API bool ParseCatalogEntry(std::string_view text, CatalogEntry *out, std::string *error);
OPENND_API bool FormatCatalogEntry(const CatalogEntry &e, std::string *text, std::string *error);

/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}", braces optional, any case. */
OPENND_API bool ParseGuid(std::string_view s, GUID *out);
/* The braced upper-case form. */
OPENND_API std::string FormatGuid(const GUID &g);

}  // namespace opennd

#endif /* OPENND_CATALOG_H */
