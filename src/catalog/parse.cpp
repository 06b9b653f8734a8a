// The drop-in file format (see opennd/catalog.h): parse, format, and the
// ND2-SPEC §5.2 candidate predicate. No file-system access here.
#include <map>

#include "catalog/catalog_internal.h"
#include "ws2spi.h"

namespace opennd {
namespace {

using catalog::Hex32;
using catalog::Trim;

enum class Kind { Format, Text, OptionalText, Guid, U32, I32, Family };

struct Key {
    const char *name;
    Kind kind;
    std::string CatalogEntry::*text = nullptr;
    uint32_t CatalogEntry::*u32 = nullptr;
    int32_t CatalogEntry::*i32 = nullptr;
};

// In the order FormatCatalogEntry writes them.
const Key kKeys[] = {
    {"format", Kind::Format},
    {"name", Kind::Text, &CatalogEntry::name},
    {"description", Kind::OptionalText, &CatalogEntry::description},
    {"provider_id", Kind::Guid},
    {"library", Kind::Text, &CatalogEntry::library},
    {"service_flags1", Kind::U32, nullptr, &CatalogEntry::service_flags1},
    {"provider_flags", Kind::U32, nullptr, &CatalogEntry::provider_flags},
    {"version", Kind::I32, nullptr, nullptr, &CatalogEntry::version},
    {"address_family", Kind::Family},
    {"socket_type", Kind::I32, nullptr, nullptr, &CatalogEntry::socket_type},
    {"protocol", Kind::I32, nullptr, nullptr, &CatalogEntry::protocol},
    {"protocol_max_offset", Kind::I32, nullptr, nullptr, &CatalogEntry::protocol_max_offset},
};

const Key *FindKey(std::string_view name) {
    for (const Key &k : kKeys)
        if (name == k.name) return &k;
    return nullptr;
}

struct Value {
    std::string text;
    int line;
};

bool Fail(std::string *error, std::string msg) {
    if (error) *error = std::move(msg);
    return false;
}

bool LineFail(std::string *error, int line, const std::string &msg) {
    return Fail(error, "line " + std::to_string(line) + ": " + msg);
}

// Checks a text field for FormatCatalogEntry.
bool CheckText(const char *what, const std::string &v, bool required, std::string *error) {
    if (v.empty()) return !required || Fail(error, std::string(what) + " is empty");
    if (v.find_first_of("\r\n") != std::string::npos) return Fail(error, std::string(what) + " contains a line break");
    if (Trim(v).size() != v.size()) return Fail(error, std::string(what) + " has leading or trailing spaces");
    if (!catalog::ValidUtf8(v, nullptr)) return Fail(error, std::string(what) + " is not valid UTF-8 (or has a NUL)");
    return true;
}

}  // namespace

bool ParseCatalogEntry(std::string_view text, CatalogEntry *out, std::string *error) {
    if (text.size() > catalog::kMaxFileSize)
        return Fail(error, "file is larger than " + std::to_string(catalog::kMaxFileSize) + " bytes");
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
    std::map<std::string, Value, std::less<>> values;
    int line = 0;
    while (!text.empty()) {
        ++line;
        size_t nl = text.find('\n');
        if (nl == std::string_view::npos)
            return LineFail(error, line, "no newline at end of file (truncated or half-written file?)");
        std::string_view l = text.substr(0, nl);
        text.remove_prefix(nl + 1);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        size_t bad;
        if (!catalog::ValidUtf8(l, &bad))
            return LineFail(error, line, "not valid UTF-8 text (byte " + std::to_string(bad + 1) + ")");
        l = Trim(l);
        if (l.empty() || l[0] == '#') continue;
        size_t eq = l.find('=');
        if (eq == std::string_view::npos) return LineFail(error, line, "expected key=value, found no '='");
        std::string_view key = Trim(l.substr(0, eq));
        std::string_view value = Trim(l.substr(eq + 1));
        if (key.empty()) return LineFail(error, line, "missing key before '='");
        auto [it, fresh] = values.try_emplace(std::string(key), Value{std::string(value), line});
        if (!fresh)
            return LineFail(error, line,
                            "duplicate key '" + std::string(key) + "' (first on line " +
                                std::to_string(it->second.line) + ")");
    }

    // The format first: a future format may have other keys.
    auto fmt = values.find("format");
    if (fmt != values.end() && fmt->second.text != "1")
        return LineFail(error, fmt->second.line, "unsupported format '" + fmt->second.text + "' (this is format 1)");
    for (const auto &[key, v] : values)
        if (!FindKey(key)) return LineFail(error, v.line, "unknown key '" + key + "'");
    std::string missing;
    for (const Key &k : kKeys)
        if (k.kind != Kind::OptionalText && !values.count(k.name))
            missing += missing.empty() ? k.name : std::string(", ") + k.name;
    if (!missing.empty()) return Fail(error, "missing required key(s): " + missing);

    CatalogEntry e;
    for (const Key &k : kKeys) {
        auto it = values.find(k.name);
        if (it == values.end()) continue;
        const std::string &v = it->second.text;
        int ln = it->second.line;
        std::string bad_number = std::string(k.name) + ": '" + v + "' is not a valid ";
        switch (k.kind) {
        case Kind::Format: break;
        case Kind::Text:
            if (v.empty()) return LineFail(error, ln, std::string(k.name) + " is empty");
            if (k.text == &CatalogEntry::name && v.size() > catalog::kMaxNameBytes)
                return LineFail(error, ln, "name is longer than 255 bytes");
            e.*k.text = v;
            break;
        case Kind::OptionalText: e.*k.text = v; break;
        case Kind::Guid:
            if (!ParseGuid(v, &e.provider_id))
                return LineFail(error, ln,
                                "provider_id: '" + v + "' is not a GUID ({xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})");
            if (e.provider_id == GUID{}) return LineFail(error, ln, "provider_id is the nil GUID");
            break;
        case Kind::U32:
            if (!catalog::ParseU32(v, &(e.*k.u32))) return LineFail(error, ln, bad_number + "32-bit unsigned number");
            break;
        case Kind::I32:
            if (!catalog::ParseI32(v, &(e.*k.i32))) return LineFail(error, ln, bad_number + "32-bit signed number");
            break;
        case Kind::Family:
            if (v == "inet") e.address_family = AF_INET;
            else if (v == "inet6") e.address_family = AF_INET6;
            else return LineFail(error, ln, "address_family: '" + v + "' is neither inet nor inet6");
            break;
        }
    }
    if (out) *out = std::move(e);
    return true;
}

bool FormatCatalogEntry(const CatalogEntry &e, std::string *text, std::string *error) {
    if (!CheckText("name", e.name, true, error) || !CheckText("library", e.library, true, error) ||
        !CheckText("description", e.description, false, error))
        return false;
    if (e.name.size() > catalog::kMaxNameBytes) return Fail(error, "name is longer than 255 bytes");
    if (e.provider_id == GUID{}) return Fail(error, "provider_id is the nil GUID");
    if (e.address_family != AF_INET && e.address_family != AF_INET6)
        return Fail(error, "address family " + std::to_string(e.address_family) +
                               " cannot be stored (only AF_INET and AF_INET6)");
    std::string t = "# OpenND provider catalog entry (written by OpenND).\n"
                    "# A relative library path is relative to this directory.\n";
    t += "format=1\nname=" + e.name + "\n";
    if (!e.description.empty()) t += "description=" + e.description + "\n";
    t += "provider_id=" + FormatGuid(e.provider_id) + "\n";
    t += "library=" + e.library + "\n";
    t += "service_flags1=" + Hex32(e.service_flags1) + "\n";
    t += "provider_flags=" + Hex32(e.provider_flags) + "\n";
    t += "version=" + Hex32(static_cast<uint32_t>(e.version)) + "\n";
    t += std::string("address_family=") + (e.address_family == AF_INET ? "inet" : "inet6") + "\n";
    t += "socket_type=" + std::to_string(e.socket_type) + "\n";
    t += "protocol=" + std::to_string(e.protocol) + "\n";
    t += "protocol_max_offset=" + std::to_string(e.protocol_max_offset) + "\n";
    if (text) *text = std::move(t);
    return true;
}

bool IsNdCandidate(const CatalogEntry &e, std::string *why_not) {
    constexpr uint32_t kXp1 = XP1_GUARANTEED_DELIVERY | XP1_GUARANTEED_ORDER | XP1_MESSAGE_ORIENTED | XP1_CONNECT_DATA;
    bool v1 = e.version == 1;
    bool v2 = e.version == 0x20000 || e.version == 2;  // 2: what the SPI docs say (D01)
    if (!v1 && !v2)
        return Fail(why_not, "version " + Hex32(static_cast<uint32_t>(e.version)) +
                                 " is neither 1 (ND v1) nor 0x00020000 (ND v2)");
    if ((e.service_flags1 & kXp1) != kXp1)
        return Fail(why_not, "service_flags1 " + Hex32(e.service_flags1) + " lacks " +
                                 Hex32(kXp1 & ~e.service_flags1) + " (needs all of " + Hex32(kXp1) + ")");
    uint32_t pfl = v1 ? PFL_HIDDEN : PFL_HIDDEN | PFL_NETWORKDIRECT_PROVIDER;
    if ((e.provider_flags & pfl) != pfl)
        return Fail(why_not, "provider_flags " + Hex32(e.provider_flags) + " lacks " + Hex32(pfl & ~e.provider_flags) +
                                 " (needs all of " + Hex32(pfl) + (v1 ? " for ND v1)" : " for ND v2)"));
    if (e.address_family != AF_INET && e.address_family != AF_INET6)
        return Fail(why_not, "address family " + std::to_string(e.address_family) + " is neither AF_INET nor AF_INET6");
    if (e.socket_type != -1) return Fail(why_not, "socket_type is " + std::to_string(e.socket_type) + ", not -1");
    if (e.protocol != 0) return Fail(why_not, "protocol is " + std::to_string(e.protocol) + ", not 0");
    if (e.protocol_max_offset != 0)
        return Fail(why_not, "protocol_max_offset is " + std::to_string(e.protocol_max_offset) + ", not 0");
    if (why_not) why_not->clear();
    return true;
}

}  // namespace opennd
