// The drop-in file format: GUIDs, numbers, parse/format round trip, every
// kind of bad content, and the ND candidate predicate.
#include <gtest/gtest.h>

#include "catalog/catalog_test_util.h"
#include "opennd/catalog.h"

using namespace catalog_test;
using opennd::CatalogEntry;
using namespace std::string_literals;

namespace {

bool Parse(const std::string &text, CatalogEntry *e = nullptr, std::string *error = nullptr) {
    CatalogEntry scratch;
    std::string err;
    bool ok = opennd::ParseCatalogEntry(text, e ? e : &scratch, &err);
    if (error) *error = err;
    return ok;
}

// Replaces the first line starting with `prefix` by `line` ("" deletes it).
std::string Edit(std::string text, const std::string &prefix, const std::string &line) {
    size_t at = text.find("\n" + prefix);
    EXPECT_NE(at, std::string::npos) << prefix;
    size_t end = text.find('\n', at + 1);
    text.replace(at + 1, end - at, line.empty() ? "" : line + "\n");
    return text;
}

}  // namespace

TEST(CatalogGuid, ParsesWithAndWithoutBracesAnyCase) {
    GUID g{};
    ASSERT_TRUE(opennd::ParseGuid("{49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E}", &g));
    EXPECT_EQ(g.Data1, 0x49EAE6C1u);
    EXPECT_EQ(g.Data2, 0x76C4);
    EXPECT_EQ(g.Data3, 0x46D0);
    const uint8_t d4[8] = {0x80, 0x03, 0x5C, 0x2E, 0xAA, 0x2C, 0x9A, 0x8E};
    EXPECT_EQ(memcmp(g.Data4, d4, 8), 0);
    GUID h{};
    ASSERT_TRUE(opennd::ParseGuid("49eae6c1-76c4-46d0-8003-5c2eaa2c9a8e", &h));
    EXPECT_EQ(g, h);
    EXPECT_EQ(opennd::FormatGuid(h), "{49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E}");
}

TEST(CatalogGuid, RejectsMalformed) {
    for (const char *bad : {"", "{}", "49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8", "{49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E",
                            "49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E}", "{49EAE6C1+76C4-46D0-8003-5C2EAA2C9A8E}",
                            "{49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8G}", "{49EAE6C1-76C4-46D0-80035-C2EAA2C9A8E}",
                            " {49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E}", "(49EAE6C1-76C4-46D0-8003-5C2EAA2C9A8E)"}) {
        GUID g{};
        EXPECT_FALSE(opennd::ParseGuid(bad, &g)) << bad;
    }
}

TEST(CatalogFormat, RoundTrip) {
    CatalogEntry e;
    e.name = "röund-trip provider";
    e.description = "text with = and # inside";
    e.provider_id = TestGuid(7);
    e.library = "../lib/opennd/libx.so";
    e.service_flags1 = 0xFFFFFFFF;
    e.provider_flags = 0x4;
    e.version = 1;
    e.address_family = AF_INET;
    e.socket_type = -2147483647 - 1;
    e.protocol = 2147483647;
    e.protocol_max_offset = -1;
    std::string text, error;
    ASSERT_TRUE(opennd::FormatCatalogEntry(e, &text, &error)) << error;
    CatalogEntry back;
    ASSERT_TRUE(Parse(text, &back, &error)) << error << "\n" << text;
    EXPECT_EQ(back.name, e.name);
    EXPECT_EQ(back.description, e.description);
    EXPECT_EQ(back.provider_id, e.provider_id);
    EXPECT_EQ(back.library, e.library);
    EXPECT_EQ(back.service_flags1, e.service_flags1);
    EXPECT_EQ(back.provider_flags, e.provider_flags);
    EXPECT_EQ(back.version, e.version);
    EXPECT_EQ(back.address_family, e.address_family);
    EXPECT_EQ(back.socket_type, e.socket_type);
    EXPECT_EQ(back.protocol, e.protocol);
    EXPECT_EQ(back.protocol_max_offset, e.protocol_max_offset);
    // Formatting again gives the same text.
    std::string again;
    ASSERT_TRUE(opennd::FormatCatalogEntry(back, &again, &error));
    EXPECT_EQ(again, text);
}

TEST(CatalogFormat, DefaultsAreAnNdV2Entry) {
    CatalogEntry e;
    e.name = "x";
    e.provider_id = TestGuid(1);
    e.library = "/x.so";
    std::string text, why;
    ASSERT_TRUE(opennd::FormatCatalogEntry(e, &text, &why));
    EXPECT_NE(text.find("version=0x00020000\n"), std::string::npos) << text;
    EXPECT_NE(text.find("address_family=inet6\n"), std::string::npos) << text;
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;
}

TEST(CatalogFormat, AcceptsTemplateTextCrLfSpacesAndDecimal) {
    CatalogEntry e;
    std::string error;
    ASSERT_TRUE(Parse(GoodText("a", TestGuid(1)), &e, &error)) << error;
    EXPECT_EQ(e.name, "a");
    EXPECT_EQ(e.description, "A test provider");
    EXPECT_EQ(e.version, 0x20000);
    EXPECT_EQ(e.address_family, AF_INET6);
    EXPECT_EQ(e.socket_type, -1);

    std::string text =
        "\xEF\xBB\xBF  # comment\n\n" + Edit(GoodText("b", TestGuid(2)), "version=", " version = 131072 ");
    text = Edit(text, "socket_type=", "socket_type=0xFFFFFFFF");
    text = Edit(text, "description=", "");
    text = Edit(text, "provider_id=", "provider_id=0dc0ffee-1234-0002-0102-030405060708");
    std::string crlf;
    for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    ASSERT_TRUE(Parse(crlf, &e, &error)) << error;
    EXPECT_EQ(e.version, 0x20000);
    EXPECT_EQ(e.socket_type, -1);
    EXPECT_EQ(e.description, "");
    EXPECT_EQ(e.provider_id, TestGuid(2));
}

TEST(CatalogFormat, EveryKindOfBadContentIsRejectedWithItsLine) {
    const std::string good = GoodText("p", TestGuid(3));
    struct Case {
        std::string text;
        std::string reason;
    };
    const Case cases[] = {
        {"\x7f" "ELF\x02\x01\xff\xfe garbage\n", "line 1: not valid UTF-8"},
        {"format=1\nname=a\0b\n"s, "line 2: not valid UTF-8"},
        {"just some words\n", "line 1: expected key=value"},
        {"", "missing required key(s): format, name, provider_id, library"},
        {good.substr(0, good.find("provider_id=") + 20), "line 5: no newline at end of file"},
        {good.substr(0, good.size() - 1), "line 13: no newline at end of file"},
        {good.substr(0, good.rfind("protocol_max_offset")), "missing required key(s): protocol_max_offset"},
        {Edit(good, "library=", ""), "missing required key(s): library"},
        {Edit(good, "provider_id=", "provider_id={0DC0FFEE-1234-0003-0102-03040506070}"), "line 5: provider_id:"},
        {Edit(good, "provider_id=", "provider_id={00000000-0000-0000-0000-000000000000}"),
         "line 5: provider_id is the nil GUID"},
        {Edit(good, "service_flags1=", "service_flags1=0x8g"), "line 7: service_flags1: '0x8g' is not a valid"},
        {Edit(good, "provider_flags=", "provider_flags=-1"), "line 8: provider_flags"},
        {Edit(good, "version=", "version=0x100000000"), "line 9: version"},
        {Edit(good, "version=", "version=2147483648"), "line 9: version"},
        {Edit(good, "socket_type=", "socket_type=--1"), "line 11: socket_type"},
        {Edit(good, "protocol=", "protocol="), "line 12: protocol"},
        {Edit(good, "address_family=", "address_family=23"), "line 10: address_family: '23' is neither"},
        {Edit(good, "format=", "format=2"), "line 2: unsupported format '2'"},
        {Edit(good, "name=", "name="), "line 3: name is empty"},
        {Edit(good, "name=", "name=" + std::string(256, 'n')), "line 3: name is longer than 255 bytes"},
        {good + "libary=/typo.so\n", "line 14: unknown key 'libary'"},
        {good + "version=1\n", "line 14: duplicate key 'version' (first on line 9)"},
        {good + "=value\n", "line 14: missing key before '='"},
        {good + std::string(70 * 1024, '#') + "\n", "larger than 65536 bytes"},
    };
    for (const Case &c : cases) {
        std::string error;
        EXPECT_FALSE(Parse(c.text, nullptr, &error)) << c.reason;
        EXPECT_NE(error.find(c.reason), std::string::npos) << "expected '" << c.reason << "', got '" << error << "'";
    }
}

TEST(CatalogFormat, EveryTruncationOfAGoodFileIsRejected) {
    const std::string good = GoodText("p", TestGuid(3));
    ASSERT_TRUE(Parse(good));
    for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(Parse(good.substr(0, n))) << "prefix of " << n << " bytes";
}

TEST(CatalogFormat, RefusesFieldsThatCannotBeStored) {
    CatalogEntry good;
    good.name = "n";
    good.provider_id = TestGuid(1);
    good.library = "/l.so";
    std::string text, error;
    ASSERT_TRUE(opennd::FormatCatalogEntry(good, &text, &error)) << error;
    auto refused = [&](CatalogEntry e, const std::string &why) {
        EXPECT_FALSE(opennd::FormatCatalogEntry(e, &text, &error)) << why;
        EXPECT_NE(error.find(why), std::string::npos) << error;
    };
    CatalogEntry e = good;
    e.name = "two\nlines";
    refused(e, "name contains a line break");
    e = good;
    e.name = "";
    refused(e, "name is empty");
    e = good;
    e.library = " /l.so";
    refused(e, "library has leading or trailing spaces");
    e = good;
    e.description = "bad \xff utf-8";
    refused(e, "description is not valid UTF-8");
    e = good;
    e.provider_id = GUID{};
    refused(e, "nil GUID");
    e = good;
    e.address_family = 23;
    refused(e, "address family 23 cannot be stored");
}

TEST(CatalogCandidate, AppliesTheSpecPredicate) {
    CatalogEntry v2;
    v2.name = "v2";
    v2.provider_id = TestGuid(1);
    v2.library = "/l.so";
    std::string why;
    EXPECT_TRUE(opennd::IsNdCandidate(v2, &why)) << why;
    EXPECT_EQ(why, "");

    CatalogEntry e = v2;
    e.service_flags1 = 0xFFFF;  // extra bits are fine
    e.provider_flags = 0x17;
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;
    e = v2;
    e.version = 2;  // what the SPI docs say (D01)
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;
    e = v2;
    e.version = 1;
    e.provider_flags = 0x4;  // v1 needs PFL_HIDDEN only
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;
    e.address_family = AF_INET;
    EXPECT_TRUE(opennd::IsNdCandidate(e, &why)) << why;

    struct Bad {
        void (*edit)(CatalogEntry &);
        const char *reason;
    };
    const Bad bad[] = {
        {[](CatalogEntry &x) { x.version = 0x10000; }, "version 0x00010000"},
        {[](CatalogEntry &x) { x.version = 3; }, "neither 1 (ND v1) nor 0x00020000"},
        {[](CatalogEntry &x) { x.service_flags1 = 0x0E; }, "service_flags1 0x0000000e lacks 0x00000080"},
        {[](CatalogEntry &x) { x.provider_flags = 0x04; }, "provider_flags 0x00000004 lacks 0x00000010"},
        {[](CatalogEntry &x) { x.provider_flags = 0x10; }, "lacks 0x00000004"},
        {[](CatalogEntry &x) { x.version = 1, x.provider_flags = 0x10; }, "for ND v1"},
        {[](CatalogEntry &x) { x.address_family = AF_UNIX; }, "address family 1"},
        {[](CatalogEntry &x) { x.socket_type = 1; }, "socket_type is 1"},
        {[](CatalogEntry &x) { x.protocol = 6; }, "protocol is 6"},
        {[](CatalogEntry &x) { x.protocol_max_offset = 1; }, "protocol_max_offset is 1"},
    };
    for (const Bad &b : bad) {
        e = v2;
        b.edit(e);
        EXPECT_FALSE(opennd::IsNdCandidate(e, &why)) << b.reason;
        EXPECT_NE(why.find(b.reason), std::string::npos) << "expected '" << b.reason << "', got '" << why << "'";
    }
    e.protocol_max_offset = 1;
    EXPECT_FALSE(opennd::IsNdCandidate(e, nullptr));
}
