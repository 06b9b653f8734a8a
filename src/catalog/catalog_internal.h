// Internal pieces of the provider catalog (src/catalog). The public API is
// include/opennd/catalog.h; this is what its files share.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opennd/catalog.h"

namespace opennd::catalog {

inline constexpr size_t kMaxFileSize = 64 * 1024;
inline constexpr size_t kMaxNameBytes = 255;  // WSAPROTOCOL_LEN

// ---- text.cpp: numbers, UTF-8, names ----
// Decimal (optionally negative for ParseI32) or 0x-prefixed hexadecimal.
bool ParseU32(std::string_view s, uint32_t *out);
// Hex values are the 32-bit two's-complement pattern (0xFFFFFFFF is -1).
bool ParseI32(std::string_view s, int32_t *out);
std::string Hex32(uint32_t v);  // "0x0000008e"
// Valid UTF-8 without NUL bytes; *bad is the offset of the first bad byte.
bool ValidUtf8(std::string_view s, size_t *bad);
// UTF-8 <-> wchar_t (UTF-32 on Linux). False on invalid input.
bool Utf8ToWide(std::string_view s, std::wstring *out);
bool WideToUtf8(std::wstring_view s, std::string *out);
// Reduces a provider name to [A-Za-z0-9_.-] for use in a file name.
std::string SanitizeName(std::string_view name);
std::string ErrnoText(int err);
bool IsSpace(char c);
std::string_view Trim(std::string_view s);

// ---- read.cpp: permission rules and one drop-in file ----
// "" if a catalog directory / drop-in / library (what) with this stat may be
// trusted: not world-writable, owned by root or the effective uid.
std::string CheckTrusted(const struct stat &st, const std::string &what);
// "" if dir (which exists) may be used as a catalog directory.
std::string CheckCatalogDir(const std::string &dir);
// The absolute, lexically normal path of library as seen from dir.
std::string ResolveLibraryPath(const std::string &dir, const std::string &library);

// One *.conf file of a catalog directory.
struct DropIn {
    std::string name;     // file name
    bool parsed = false;  // content parsed (entry valid)
    bool vanished = false;  // removed between listing and opening: ignore
    CatalogEntry entry;
    std::string problem;  // why it is refused ("" if none)
};
// The names of the non-hidden *.conf directory entries of dir, sorted.
// False with errno set if the directory cannot be read.
bool ListDropInNames(const std::string &dir, std::vector<std::string> *names);
// Reads and checks one drop-in file.
DropIn ReadDropIn(const std::string &dir, const std::string &name);

// ---- install.cpp helpers used by wsc.cpp ----
// Like InstallProvider / RemoveProvider, returning 0 or an errno value
// (EINVAL for entries that cannot be stored, ENOENT for "not installed").
int InstallEntries(const std::string &dir, const std::vector<CatalogEntry> &entries, std::string *error);
int RemoveMatching(const std::string &dir, const GUID *id, const std::string *name, std::string *error);

}  // namespace opennd::catalog
