// Test support: a private catalog directory with loopback provider entries,
// selected through OPENND_CATALOG for the lifetime of the fixture.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../loopback/loopback.h"
#include "opennd/ip_address.h"

namespace testing_support {

inline std::string BuildDir() {
    const char *d = getenv("OPENND_TEST_BUILD_DIR");
    return d ? d : OPENND_TEST_BUILD_DIR_DEFAULT;
}
inline std::string LoopbackLibrary() { return BuildDir() + "/test-providers/libndloopback.so"; }
inline std::string NoUnloadLibrary() { return BuildDir() + "/test-providers/libndnounload.so"; }

inline std::string GuidText(const GUID &g) {
    char s[40];
    snprintf(s, sizeof s, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g.Data1, g.Data2, g.Data3, g.Data4[0],
             g.Data4[1], g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
    return s;
}

class TempCatalog {
public:
    TempCatalog() {
        char tmpl[] = "/tmp/opennd-catalog-XXXXXX";
        dir_ = mkdtemp(tmpl);
        chmod(dir_.c_str(), 0755);
        const char *old = getenv("OPENND_CATALOG");
        had_old_ = old != nullptr;
        if (old) old_ = old;
        setenv("OPENND_CATALOG", dir_.c_str(), 1);
    }
    ~TempCatalog() {
        if (had_old_)
            setenv("OPENND_CATALOG", old_.c_str(), 1);
        else
            unsetenv("OPENND_CATALOG");
        std::filesystem::remove_all(dir_);
    }
    const std::string &dir() const { return dir_; }

    // Adds an entry; `order` sets its place in catalog order (file name).
    void Add(int order, const std::string &name, const GUID &id, const std::string &library,
             const std::string &version = "0x00020000") {
        char file[64];
        snprintf(file, sizeof file, "%02d-%s.conf", order, name.c_str());
        std::ofstream f(dir_ + "/" + file);
        f << "format=1\nname=" << name << "\nprovider_id=" << GuidText(id) << "\nlibrary=" << library
          << "\nservice_flags1=0x8e\nprovider_flags=0x14\nversion=" << version
          << "\naddress_family=inet6\nsocket_type=-1\nprotocol=0\nprotocol_max_offset=0\n";
    }
    void AddLoopback(int order, uint8_t mode, const std::string &library = LoopbackLibrary()) {
        Add(order, "loopback" + std::to_string(mode), loopback::ProviderGuid(mode), library);
    }

private:
    std::string dir_, old_;
    bool had_old_ = false;
};

inline opennd::net::IpAddress Ip(const char *text) {
    opennd::net::IpAddress a;
    EXPECT_TRUE(opennd::net::ParseAddress(text, &a)) << text;
    return a;
}

}  // namespace testing_support
