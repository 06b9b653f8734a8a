// Helpers of the catalog tests: private temp directories, drop-in text, files.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "opennd/catalog.h"

namespace catalog_test {

// A fresh directory (mkdtemp, 0700) removed with everything in it at the end.
class TempDir {
public:
    TempDir() {
        const char *t = getenv("TMPDIR");
        std::string tmpl = std::string(t && *t ? t : "/tmp") + "/opennd-catalog-test-XXXXXX";
        if (!mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed";
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }
    std::string operator/(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const std::string &value) : name_(name) {
        const char *old = getenv(name);
        had_ = old != nullptr;
        if (old) old_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had_)
            setenv(name_, old_.c_str(), 1);
        else
            unsetenv(name_);
    }

private:
    const char *name_;
    std::string old_;
    bool had_ = false;
};

inline GUID TestGuid(uint32_t n) {
    return GUID{0x0DC0FFEE, 0x1234, static_cast<uint16_t>(n), {1, 2, 3, 4, 5, 6, 7, 8}};
}

// A good drop-in file, as cmake/provider.conf.in makes them.
inline std::string GoodText(const std::string &name, const GUID &id, const std::string &library = "/opt/nd/libx.so",
                            const std::string &version = "0x00020000") {
    return "# OpenND provider catalog entry, installed with the provider.\n"
           "format=1\n"
           "name=" + name + "\n"
           "description=A test provider\n"
           "provider_id=" + opennd::FormatGuid(id) + "\n"
           "library=" + library + "\n"
           "service_flags1=0x0000008e\n"
           "provider_flags=0x00000014\n"
           "version=" + version + "\n"
           "address_family=inet6\n"
           "socket_type=-1\n"
           "protocol=0\n"
           "protocol_max_offset=0\n";
}

inline void WriteFile(const std::string &path, const std::string &text, mode_t mode = 0644) {
    {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f << text;
        ASSERT_TRUE(f.good()) << path;
    }
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
}

inline std::string ReadFile(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// The names in dir, sorted (hidden ones too).
inline std::vector<std::string> DirNames(const std::string &dir) {
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

inline std::string Names(const opennd::CatalogListing &l) {
    std::string s;
    for (const auto &e : l.entries) s += (s.empty() ? "" : ",") + e.name;
    return s;
}

inline std::string Problems(const opennd::CatalogListing &l) {
    std::string s;
    for (const auto &p : l.problems) s += p.file + ": " + p.reason + "\n";
    return s;
}

inline std::string Basename(const std::string &p) { return std::filesystem::path(p).filename().string(); }

}  // namespace catalog_test
