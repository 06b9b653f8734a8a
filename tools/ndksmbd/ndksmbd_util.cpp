#include "ndksmbd_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace smbd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunk = 4u << 20;  // file I/O granularity of the client

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

uint64_t ParseSize(const char *s) {
    char *end = nullptr;
    uint64_t v = std::strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    if (*end == 'M' || *end == 'm') v <<= 20;
    if (*end == 'G' || *end == 'g') v <<= 30;
    return v;
}

// Reads exactly n bytes at `at` (false at EOF or error).
bool ReadAt(int fd, uint8_t *p, size_t n, uint64_t at) {
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(fd, p + done, n - done, off_t(at + done));
        if (r <= 0) return false;
        done += size_t(r);
    }
    return true;
}

}  // namespace

bool ParseOptions(int argc, char **argv, Options *o) {
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
        const char *v = nullptr;
        if (a == "--inline") o->inline_data = true;
        else if (a == "--keep") o->keep = true;
        else if ((a == "-a" || a == "-c") && (v = next())) o->address = v;
        else if (a == "-l" && (v = next())) o->local = v;
        else if (a == "-p" && (v = next())) o->port = static_cast<uint16_t>(std::atoi(v));
        else if (a == "-d" && (v = next())) o->directory = v;
        else if (a == "-f" && (v = next())) o->file = v;
        else if (a == "--name" && (v = next())) o->name = v;
        else if (a == "--size" && (v = next())) o->size = ParseSize(v);
        else if (a == "--port-fd" && (v = next())) o->port_fd = std::atoi(v);
        else return false;
    }
    return true;
}

int Fail(const char *what, NTSTATUS status) {
    std::fprintf(stderr, "ndksmbd: %s failed: 0x%08X\n", what, static_cast<unsigned>(status));
    return 1;
}

bool MakeRandomFile(const std::string &path, uint64_t size) {
    int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    std::vector<uint64_t> block(kChunk / 8);
    uint64_t x = 0x9E3779B97F4A7C15ull ^ uint64_t(getpid());
    bool ok = true;
    for (uint64_t at = 0; ok && at < size; at += kChunk) {
        for (uint64_t &w : block) {  // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w = x;
        }
        size_t n = size_t(std::min<uint64_t>(kChunk, size - at));
        ok = write(fd, block.data(), n) == ssize_t(n);
    }
    return close(fd) == 0 && ok;
}

void RemoveTree(const std::string &dir) {
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            std::string path = dir + "/" + name;
            struct stat st;
            if (lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                RemoveTree(path);
            else
                unlink(path.c_str());
        }
        closedir(d);
    }
    rmdir(dir.c_str());
}

int RunClient(const Options &o, const std::string &stored_path) {
    int fd = open(o.file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return Fail("open source file", STATUS_NOT_FOUND);
    const uint64_t size = uint64_t(st.st_size);
    std::string name = o.name.empty() ? o.file.substr(o.file.find_last_of('/') + 1) : o.name;
    Endpoint ep;
    if (!ep.Open(o.local.empty() ? o.address : o.local)) return Fail("open adapter", ep.status);
    std::unique_ptr<Connection> c;
    NTSTATUS s = ep.Connect(o.address, o.port, o.limits, &c);
    if (!NT_SUCCESS(s)) return Fail("connect/negotiate", s);
    FileClient client(*c);
    std::vector<uint8_t> chunk(kChunk), back(kChunk);
    uint64_t sum = Checksum(nullptr, 0);
    const auto start = Clock::now();
    s = client.Create(name, size);
    for (uint64_t at = 0; NT_SUCCESS(s) && at < size; at += kChunk) {
        size_t n = size_t(std::min<uint64_t>(kChunk, size - at));
        if (!ReadAt(fd, chunk.data(), n, at)) s = STATUS_UNSUCCESSFUL;
        sum = Checksum(chunk.data(), n, sum);
        if (NT_SUCCESS(s)) s = client.Write(at, chunk.data(), n, o.inline_data);
    }
    const double copy_s = Seconds(start);
    const auto flush_start = Clock::now();
    uint64_t server_sum = 0;
    if (NT_SUCCESS(s)) s = client.Close(&server_sum);  // the server fsyncs and checksums the stored file
    const double flush_s = Seconds(flush_start);
    if (!NT_SUCCESS(s)) return Fail("copy", s);
    // Read everything back by RDMA and compare with the source.
    const auto read_start = Clock::now();
    uint64_t mismatches = 0;
    for (uint64_t at = 0; NT_SUCCESS(s) && at < size; at += kChunk) {
        size_t n = size_t(std::min<uint64_t>(kChunk, size - at));
        s = client.Read(at, back.data(), n);
        if (NT_SUCCESS(s) && (!ReadAt(fd, chunk.data(), n, at) || std::memcmp(chunk.data(), back.data(), n) != 0))
            ++mismatches;
    }
    const double read_s = Seconds(read_start);
    close(fd);
    if (!NT_SUCCESS(s)) return Fail("read back", s);
    bool stored_ok = true;
    if (!stored_path.empty()) {  // same host: the file the server wrote
        int sfd = open(stored_path.c_str(), O_RDONLY | O_CLOEXEC);
        uint64_t stored = Checksum(nullptr, 0);
        for (uint64_t at = 0; sfd >= 0 && at < size; at += kChunk) {
            size_t n = size_t(std::min<uint64_t>(kChunk, size - at));
            stored_ok = stored_ok && ReadAt(sfd, chunk.data(), n, at);
            stored = Checksum(chunk.data(), n, stored);
        }
        stored_ok = sfd >= 0 && stored_ok && stored == sum;
        if (sfd >= 0) close(sfd);
    }
    const bool ok = server_sum == sum && mismatches == 0 && stored_ok;
    const double mib = double(size) / (1 << 20);
    std::printf("ndksmbd: %.1f MiB copied in %.3f s (%.0f MiB/s, %s; server fsync+checksum %.3f s), "
                "read back in %.3f s (%.0f MiB/s, RDMA Write)\n",
                mib, copy_s, mib / copy_s, o.inline_data ? "inline messages" : "RDMA Read", flush_s, read_s,
                mib / read_s);
    std::printf("ndksmbd: checksum %016" PRIx64 " client, %016" PRIx64 " server%s; read-back %s; %" PRIu64
                " messages sent, %" PRIu64 " buffers fast-registered over %" PRIu64 " MRs, %" PRIu64
                " invalidated by the server; %s\n",
                sum, server_sum, stored_path.empty() ? "" : (stored_ok ? ", stored file ok" : ", stored file BAD"),
                mismatches ? "MISMATCH" : "identical", c->messages_sent(), c->fast_registrations(), c->fast_mrs_made(),
                c->peer_invalidations(), ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}

}  // namespace smbd
