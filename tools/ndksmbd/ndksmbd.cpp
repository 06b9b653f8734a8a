// ndksmbd: copies a file over SMB Direct on the NDK API and verifies it.
//
//   ndksmbd local [--size BYTES] [--inline] [--keep]
//       makes a file of random bytes, starts a server process, copies the
//       file to it, checks the server's checksum, reads it back by RDMA and
//       compares every byte; prints size, times and the result.
//   ndksmbd server [-a ADDR] [-p PORT] [-d DIR] [--port-fd FD]
//   ndksmbd client [-l LOCAL] -c ADDR -p PORT -f FILE [--name NAME] [--inline]
//       (-l: the local address whose adapter to use; default the server's)
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ndksmbd_util.h"

extern char **environ;

using namespace smbd;

namespace {

int Usage() {
    std::fprintf(stderr,
                 "usage: ndksmbd local [--size BYTES] [--inline] [--keep]\n"
                 "       ndksmbd server [-a ADDR] [-p PORT] [-d DIR] [--port-fd FD]\n"
                 "       ndksmbd client [-l LOCAL] -c ADDR -p PORT -f FILE [--name NAME] [--inline]\n");
    return 2;
}

int RunServer(const Options &o) {
    Endpoint ep;
    if (!ep.Open(o.address)) return Fail("open adapter", ep.status);
    uint16_t port = 0;
    if (!ep.Listen(o.port, &port)) return Fail("listen", ep.status);
    if (o.port_fd >= 0) {
        if (write(o.port_fd, &port, sizeof port) != sizeof port) return Fail("port pipe", STATUS_UNSUCCESSFUL);
        close(o.port_fd);
    } else {
        std::printf("ndksmbd: listening on %s port %u\n", o.address.c_str(), port);
        std::fflush(stdout);
    }
    std::unique_ptr<Connection> c;
    NTSTATUS s = ep.AcceptOne(o.limits, &c, 60000);
    if (!NT_SUCCESS(s)) return Fail("accept/negotiate", s);
    s = ServeFiles(*c, o.directory);
    c.reset();
    return NT_SUCCESS(s) ? 0 : Fail("serve", s);
}

int RunLocal(Options o) {
    char dir_template[] = "/tmp/ndksmbd.XXXXXX";
    if (!mkdtemp(dir_template)) return Fail("mkdtemp", STATUS_UNSUCCESSFUL);
    const std::string dir = dir_template, out = dir + "/out";
    mkdir(out.c_str(), 0755);
    o.file = dir + "/source.bin";
    if (!MakeRandomFile(o.file, o.size)) return Fail("make source file", STATUS_UNSUCCESSFUL);
    int p[2];
    if (pipe(p) != 0) return Fail("pipe", STATUS_UNSUCCESSFUL);
    std::string self = "/proc/self/exe", fd = std::to_string(p[1]);
    std::vector<std::string> args{"ndksmbd", "server", "-a", o.address, "-p", "0", "-d", out, "--port-fd", fd};
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t server = -1;
    if (posix_spawn(&server, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
        return Fail("spawn server", STATUS_UNSUCCESSFUL);
    close(p[1]);
    uint16_t port = 0;
    bool got = read(p[0], &port, sizeof port) == sizeof port;
    close(p[0]);
    int rc = got ? 1 : Fail("server port", STATUS_UNSUCCESSFUL);
    if (got) {
        o.port = port;
        o.name = "copy.bin";
        rc = RunClient(o, out + "/copy.bin");
    }
    int status = 0;
    waitpid(server, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = rc ? rc : Fail("server process", STATUS_UNSUCCESSFUL);
    if (!o.keep) RemoveTree(dir);
    return rc;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return Usage();
    Options o;
    if (!ParseOptions(argc - 2, argv + 2, &o)) return Usage();
    std::string mode = argv[1];
    if (mode == "server") return RunServer(o);
    if (mode == "client") return o.file.empty() ? Usage() : RunClient(o, "");
    if (mode == "local") return RunLocal(o);
    return Usage();
}
