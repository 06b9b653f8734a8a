#include "file_protocol.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace smbd {
namespace {

constexpr size_t kRequestHeader = 16;
constexpr size_t kResponseSize = 16;

struct Request {
    FileOp op;
    uint32_t channel = 0;
    uint16_t descriptors = 0;
    uint32_t length = 0;
    uint64_t offset = 0;
};

void Put(uint8_t *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint64_t Get(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}

std::vector<uint8_t> Response(FileOp op, NTSTATUS status, uint64_t value) {
    std::vector<uint8_t> r(kResponseSize, 0);
    r[0] = uint8_t(op);
    Put(&r[4], uint32_t(status), 4);
    Put(&r[8], value, 8);
    return r;
}

}  // namespace

uint64_t Checksum(const void *data, size_t length, uint64_t seed) {
    const auto *p = static_cast<const uint8_t *>(data);
    uint64_t h = seed;
    for (size_t i = 0; i < length; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

// ---- client ----

FileClient::FileClient(Connection &connection, size_t buffer)
    : c_(connection), memory_(std::max<size_t>(buffer, connection.negotiated().max_read_write_size)) {
    c_.Register(memory_.data(), memory_.size(), &buffer_);
}

FileClient::~FileClient() { c_.Deregister(&buffer_); }

NTSTATUS FileClient::Call(FileOp op, uint32_t channel, uint64_t offset, uint32_t length, const Window *window,
                          const uint8_t *payload, size_t payload_length, uint64_t *value) {
    std::vector<uint8_t> req(kRequestHeader + (window ? kBufferDescriptorSize : 0) + payload_length);
    req[0] = uint8_t(op);
    req[1] = uint8_t(channel);
    Put(&req[2], window ? 1 : 0, 2);
    Put(&req[4], length, 4);
    Put(&req[8], offset, 8);
    if (window) Encode(window->descriptor, &req[kRequestHeader]);
    if (payload_length) std::memcpy(&req[req.size() - payload_length], payload, payload_length);
    NTSTATUS s = c_.Send(req.data(), req.size());
    std::vector<uint8_t> resp;
    if (NT_SUCCESS(s)) s = c_.Receive(&resp, 30000);
    if (!NT_SUCCESS(s)) return s;
    if (resp.size() < kResponseSize || resp[0] != uint8_t(op)) return STATUS_INVALID_PARAMETER;
    if (value) *value = Get(&resp[8], 8);
    return static_cast<NTSTATUS>(Get(&resp[4], 4));
}

NTSTATUS FileClient::Create(const std::string &name, uint64_t size) {
    return Call(FileOp::Create, 0, size, uint32_t(name.size()), nullptr,
                reinterpret_cast<const uint8_t *>(name.data()), name.size(), nullptr);
}

NTSTATUS FileClient::Write(uint64_t offset, const uint8_t *data, size_t length, bool inline_data) {
    if (!buffer_.mr) return STATUS_INSUFFICIENT_RESOURCES;
    const size_t chunk = inline_data ? c_.negotiated().max_fragmented_send_size - kRequestHeader
                                     : std::min<size_t>(c_.negotiated().max_read_write_size, memory_.size());
    for (size_t at = 0; at < length;) {
        const size_t n = std::min(chunk, length - at);
        NTSTATUS s;
        if (inline_data) {
            s = Call(FileOp::WriteInline, 0, offset + at, uint32_t(n), nullptr, data + at, n, nullptr);
        } else {
            std::memcpy(memory_.data(), data + at, n);
            Window w;
            s = c_.Expose(&buffer_, 0, n, false, &w);  // the server reads it
            if (!NT_SUCCESS(s)) return s;
            s = Call(FileOp::Write, kChannelRdmaV1, offset + at, uint32_t(n), &w, nullptr, 0, nullptr);
            NTSTATUS revoked = c_.Revoke(&w);
            if (NT_SUCCESS(s)) s = revoked;
        }
        if (!NT_SUCCESS(s)) return s;
        at += n;
    }
    return STATUS_SUCCESS;
}

NTSTATUS FileClient::Read(uint64_t offset, uint8_t *data, size_t length) {
    if (!buffer_.mr) return STATUS_INSUFFICIENT_RESOURCES;
    const size_t chunk = std::min<size_t>(c_.negotiated().max_read_write_size, memory_.size());
    for (size_t at = 0; at < length;) {
        const size_t n = std::min(chunk, length - at);
        Window w;
        NTSTATUS s = c_.Expose(&buffer_, 0, n, true, &w);  // the server writes it
        if (!NT_SUCCESS(s)) return s;
        s = Call(FileOp::Read, kChannelRdmaV1Invalidate, offset + at, uint32_t(n), &w, nullptr, 0, nullptr);
        NTSTATUS revoked = c_.Revoke(&w);
        if (NT_SUCCESS(s)) s = revoked;
        if (!NT_SUCCESS(s)) return s;
        std::memcpy(data + at, memory_.data(), n);
        at += n;
    }
    return STATUS_SUCCESS;
}

NTSTATUS FileClient::Close(uint64_t *checksum) { return Call(FileOp::Close, 0, 0, 0, nullptr, nullptr, 0, checksum); }

// ---- server ----

namespace {

struct Server {
    Connection &c;
    std::string directory;
    std::vector<uint8_t> memory;
    Registration staging;
    int fd = -1;

    // One request; returns the response to send and sets *token for READ with
    // the invalidate channel.
    std::vector<uint8_t> Handle(const std::vector<uint8_t> &m, uint32_t *token) {
        if (m.size() < kRequestHeader) return Response(FileOp(0), STATUS_INVALID_PARAMETER, 0);
        Request q{FileOp(m[0]), m[1], uint16_t(Get(&m[2], 2)), uint32_t(Get(&m[4], 4)), Get(&m[8], 8)};
        const size_t payload = kRequestHeader + q.descriptors * kBufferDescriptorSize;
        if (m.size() < payload) return Response(q.op, STATUS_INVALID_PARAMETER, 0);
        std::vector<BufferDescriptor> d(q.descriptors);
        size_t total = 0;
        for (size_t i = 0; i < d.size(); ++i) {
            Decode(&m[kRequestHeader + i * kBufferDescriptorSize], &d[i]);
            total += d[i].length;
        }
        switch (q.op) {
        case FileOp::Create: {
            std::string name(m.begin() + payload, m.end());
            if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
                return Response(q.op, STATUS_INVALID_PARAMETER, 0);
            if (fd >= 0) close(fd);
            fd = open((directory + "/" + name).c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
            if (fd < 0 || ftruncate(fd, off_t(q.offset)) != 0) return Response(q.op, STATUS_ACCESS_VIOLATION, 0);
            return Response(q.op, STATUS_SUCCESS, 0);
        }
        case FileOp::Write:
        case FileOp::Read: {
            if (fd < 0 || d.empty() || total != q.length || total > memory.size())
                return Response(q.op, STATUS_INVALID_PARAMETER, 0);
            NTSTATUS s = STATUS_SUCCESS;
            if (q.op == FileOp::Write) {
                s = c.RdmaRead(&staging, memory.data(), d.data(), d.size());
                if (NT_SUCCESS(s) && pwrite(fd, memory.data(), total, off_t(q.offset)) != ssize_t(total))
                    s = STATUS_UNSUCCESSFUL;
            } else {
                if (pread(fd, memory.data(), total, off_t(q.offset)) != ssize_t(total)) s = STATUS_UNSUCCESSFUL;
                if (NT_SUCCESS(s)) s = c.RdmaWrite(&staging, memory.data(), d.data(), d.size());
                if (q.channel == kChannelRdmaV1Invalidate) *token = d[0].token;
            }
            return Response(q.op, s, NT_SUCCESS(s) ? total : 0);
        }
        case FileOp::WriteInline: {
            if (fd < 0 || m.size() - payload != q.length) return Response(q.op, STATUS_INVALID_PARAMETER, 0);
            bool ok = pwrite(fd, m.data() + payload, q.length, off_t(q.offset)) == ssize_t(q.length);
            return Response(q.op, ok ? STATUS_SUCCESS : STATUS_UNSUCCESSFUL, q.length);
        }
        case FileOp::Close: {
            if (fd < 0) return Response(q.op, STATUS_INVALID_DEVICE_STATE, 0);
            fsync(fd);
            uint64_t sum = Checksum(nullptr, 0);
            std::vector<uint8_t> chunk(1u << 20);
            ssize_t n;
            for (off_t at = 0; (n = pread(fd, chunk.data(), chunk.size(), at)) > 0; at += n)
                sum = Checksum(chunk.data(), size_t(n), sum);
            return Response(q.op, STATUS_SUCCESS, sum);  // still readable until the connection ends
        }
        }
        return Response(q.op, STATUS_NOT_SUPPORTED, 0);
    }
};

}  // namespace

NTSTATUS ServeFiles(Connection &connection, const std::string &directory, int idle_timeout_ms) {
    Server s{connection, directory, std::vector<uint8_t>(connection.negotiated().max_read_write_size), {}, -1};
    NTSTATUS status = connection.Register(s.memory.data(), s.memory.size(), &s.staging);
    bool closed = false;
    while (NT_SUCCESS(status)) {
        std::vector<uint8_t> request;
        status = connection.Receive(&request, idle_timeout_ms);
        if (!NT_SUCCESS(status)) break;
        uint32_t token = 0;
        std::vector<uint8_t> response = s.Handle(request, &token);
        closed = closed || (response[0] == uint8_t(FileOp::Close) && Get(&response[4], 4) == 0);
        status = connection.Send(response.data(), response.size(), token);
    }
    if (s.fd >= 0) close(s.fd);
    connection.Deregister(&s.staging);
    // The client leaving after it closed the file is the normal end.
    return closed && status == STATUS_CONNECTION_DISCONNECTED ? STATUS_SUCCESS : status;
}

}  // namespace smbd
