// ndksmbd: options, the client role and small file helpers.
#pragma once

#include <cstdint>
#include <string>

#include "file_protocol.h"
#include "smbd_endpoint.h"

namespace smbd {

struct Options {
    std::string address = "127.0.0.1";  // server: listen here; client: the server's address
    std::string local;                  // client: local address (default: `address`)
    uint16_t port = 0;
    std::string directory = ".";  // server: where files are stored
    std::string file;             // client: the file to copy
    std::string name;             // client: the name on the server (default: the file's)
    uint64_t size = 256ull << 20; // local: size of the generated file
    bool inline_data = false;     // copy through messages instead of RDMA
    bool keep = false;            // local: keep the temporary directory
    int port_fd = -1;             // server: write the bound port here
    Limits limits;
};

bool ParseOptions(int argc, char **argv, Options *o);
int Fail(const char *what, NTSTATUS status);
bool MakeRandomFile(const std::string &path, uint64_t size);
void RemoveTree(const std::string &dir);
// Copies o.file to the server, verifies the server's checksum, reads the file
// back by RDMA and compares it; if `stored_path` is set (same host) also
// checks the stored file. Prints the figures. Exit code.
int RunClient(const Options &o, const std::string &stored_path);

}  // namespace smbd
