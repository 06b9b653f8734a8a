// Text helpers of the catalog: GUIDs, numbers, UTF-8 and file-name-safe names.
#include <cstdio>
#include <cstring>

#include "catalog/catalog_internal.h"

namespace opennd {
namespace {

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// n hex digits at s (no sign, no prefix).
bool HexField(std::string_view s, size_t n, uint64_t *out) {
    if (s.size() != n) return false;
    uint64_t v = 0;
    for (char c : s) {
        int d = HexDigit(c);
        if (d < 0) return false;
        v = v << 4 | static_cast<uint64_t>(d);
    }
    *out = v;
    return true;
}

}  // namespace

bool ParseGuid(std::string_view s, GUID *out) {
    if (s.size() == 38) {
        if (s.front() != '{' || s.back() != '}') return false;
        s = s.substr(1, 36);
    }
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return false;
    uint64_t d1, d2, d3, d4, d5;
    if (!HexField(s.substr(0, 8), 8, &d1) || !HexField(s.substr(9, 4), 4, &d2) || !HexField(s.substr(14, 4), 4, &d3) ||
        !HexField(s.substr(19, 4), 4, &d4) || !HexField(s.substr(24, 12), 12, &d5))
        return false;
    GUID g;
    g.Data1 = static_cast<uint32_t>(d1);
    g.Data2 = static_cast<uint16_t>(d2);
    g.Data3 = static_cast<uint16_t>(d3);
    g.Data4[0] = static_cast<uint8_t>(d4 >> 8);
    g.Data4[1] = static_cast<uint8_t>(d4);
    for (int i = 0; i < 6; ++i) g.Data4[2 + i] = static_cast<uint8_t>(d5 >> (8 * (5 - i)));
    if (out) *out = g;
    return true;
}

std::string FormatGuid(const GUID &g) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g.Data1, g.Data2, g.Data3,
                  g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
    return buf;
}

namespace catalog {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
    while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
    while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
    return s;
}

bool ParseU32(std::string_view s, uint32_t *out) {
    uint64_t v = 0;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s.remove_prefix(2);
        if (s.size() > 8) return false;
        return HexField(s, s.size(), &v) && (*out = static_cast<uint32_t>(v), true);
    }
    if (s.empty() || s.size() > 10) return false;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (v > 0xFFFFFFFFu) return false;
    *out = static_cast<uint32_t>(v);
    return true;
}

bool ParseI32(std::string_view s, int32_t *out) {
    bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    uint32_t u;
    if (!ParseU32(s, &u)) return false;
    if (hex) {
        if (neg) return false;
        *out = static_cast<int32_t>(u);
        return true;
    }
    if (neg ? u > 0x80000000u : u > 0x7FFFFFFFu) return false;
    *out = neg ? static_cast<int32_t>(-static_cast<int64_t>(u)) : static_cast<int32_t>(u);
    return true;
}

std::string Hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length, 0 if invalid.
size_t DecodeUtf8(std::string_view s, size_t i, char32_t *cp) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned c = b(i);
    size_t len;
    char32_t v, min;
    if (c < 0x80) { *cp = c; return 1; }
    if ((c & 0xE0) == 0xC0) { len = 2; v = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; v = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    if (i + len > s.size()) return 0;
    for (size_t k = 1; k < len; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        v = v << 6 | (b(i + k) & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

}  // namespace

bool ValidUtf8(std::string_view s, size_t *bad) {
    for (size_t i = 0; i < s.size();) {
        char32_t cp;
        size_t n = DecodeUtf8(s, i, &cp);
        if (n == 0 || cp == 0) {
            if (bad) *bad = i;
            return false;
        }
        i += n;
    }
    return true;
}

bool Utf8ToWide(std::string_view s, std::wstring *out) {
    out->clear();
    for (size_t i = 0; i < s.size();) {
        char32_t cp;
        size_t n = DecodeUtf8(s, i, &cp);
        if (n == 0) return false;
        out->push_back(static_cast<wchar_t>(cp));
        i += n;
    }
    return true;
}

bool WideToUtf8(std::wstring_view s, std::string *out) {
    static_assert(sizeof(wchar_t) == 4, "wchar_t is UTF-32 on Linux");
    out->clear();
    for (wchar_t w : s) {
        auto v = static_cast<uint32_t>(w);
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
        if (v < 0x80) {
            out->push_back(static_cast<char>(v));
        } else if (v < 0x800) {
            out->push_back(static_cast<char>(0xC0 | v >> 6));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
        } else if (v < 0x10000) {
            out->push_back(static_cast<char>(0xE0 | v >> 12));
            out->push_back(static_cast<char>(0x80 | (v >> 6 & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
        } else {
            out->push_back(static_cast<char>(0xF0 | v >> 18));
            out->push_back(static_cast<char>(0x80 | (v >> 12 & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (v >> 6 & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (v & 0x3F)));
        }
    }
    return true;
}

std::string SanitizeName(std::string_view name) {
    std::string out;
    for (char c : name) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '.' || c == '-';
        out.push_back(ok ? c : '_');
        if (out.size() == 100) break;  // leaves room for "NN-", "-KK" and ".conf" in a file name
    }
    return out.empty() ? "provider" : out;
}

std::string ErrnoText(int err) {
    char buf[256];
    return strerror_r(err, buf, sizeof buf);  // GNU strerror_r returns the text
}

}  // namespace catalog
}  // namespace opennd
