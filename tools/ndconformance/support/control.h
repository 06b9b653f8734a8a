// ndconformance support: the out-of-band control channel between the test
// process and its peer process (a socketpair): length-framed messages, each
// a verb and key=value fields ("send c=0 size=4096 seed=7").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ndc {

class Msg {
public:
    Msg() = default;
    explicit Msg(std::string verb) : verb_(std::move(verb)) {}

    const std::string &verb() const { return verb_; }
    Msg &Set(const std::string &key, const std::string &value);
    Msg &Set(const std::string &key, const char *value) { return Set(key, std::string(value)); }
    Msg &Set(const std::string &key, uint64_t value) { return Set(key, std::to_string(value)); }
    Msg &Set(const std::string &key, int64_t value) { return Set(key, std::to_string(value)); }
    Msg &Set(const std::string &key, int value) { return Set(key, std::to_string(value)); }
    Msg &Set(const std::string &key, unsigned value) { return Set(key, std::to_string(value)); }
    Msg &SetHex(const std::string &key, uint64_t value);

    bool Has(const std::string &key) const;
    std::string Str(const std::string &key, const std::string &def = "") const;
    uint64_t U64(const std::string &key, uint64_t def = 0) const;  // decimal or 0x hex
    int64_t I64(const std::string &key, int64_t def = 0) const;

    std::string Encode() const;
    static Msg Decode(const std::string &text);
    std::string Text() const { return Encode(); }  // for messages to humans

    // Replies: "ok ..." or "err what=...".
    bool ok() const { return verb_ == "ok"; }
    std::string error() const { return verb_ == "ok" ? "" : Str("what", verb_); }

private:
    std::string verb_;
    std::vector<std::pair<std::string, std::string>> fields_;
};

Msg Ok();
Msg Err(const std::string &what);

class Channel {
public:
    explicit Channel(int fd = -1) : fd_(fd) {}
    ~Channel();
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    int fd() const { return fd_; }
    void Attach(int fd) {
        Close();
        fd_ = fd;
    }
    void Close();
    bool Send(const Msg &m);
    // Waits up to ms for a message, calling idle() between polls (the
    // caller's progress). false on timeout or a closed channel (*closed).
    bool Recv(Msg *m, uint64_t ms, const std::function<void()> &idle = nullptr, bool *closed = nullptr);
    // Non-blocking: a message is ready to read.
    bool Ready();

private:
    bool ReadAll(void *p, size_t n);
    int fd_ = -1;
};

}  // namespace ndc
