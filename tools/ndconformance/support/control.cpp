#include "support/control.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "support/util.h"

namespace ndc {

namespace {

std::string Escape(const std::string &v) {
    std::string out;
    for (char c : v) {
        if (c == ' ' || c == '%' || c == '=' || c == '\n' || c == '\r' || c == '\t') {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

std::string Unescape(const std::string &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '%' && i + 2 < v.size()) {
            out += static_cast<char>(std::strtoul(v.substr(i + 1, 2).c_str(), nullptr, 16));
            i += 2;
        } else {
            out += v[i];
        }
    }
    return out;
}

}  // namespace

Msg &Msg::Set(const std::string &key, const std::string &value) {
    for (auto &f : fields_)
        if (f.first == key) {
            f.second = value;
            return *this;
        }
    fields_.emplace_back(key, value);
    return *this;
}

Msg &Msg::SetHex(const std::string &key, uint64_t value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
    return Set(key, buf);
}

bool Msg::Has(const std::string &key) const {
    for (const auto &f : fields_)
        if (f.first == key) return true;
    return false;
}

std::string Msg::Str(const std::string &key, const std::string &def) const {
    for (const auto &f : fields_)
        if (f.first == key) return f.second;
    return def;
}

uint64_t Msg::U64(const std::string &key, uint64_t def) const {
    if (!Has(key)) return def;
    return std::strtoull(Str(key).c_str(), nullptr, 0);
}

int64_t Msg::I64(const std::string &key, int64_t def) const {
    if (!Has(key)) return def;
    return std::strtoll(Str(key).c_str(), nullptr, 0);
}

std::string Msg::Encode() const {
    std::string s = Escape(verb_);
    for (const auto &f : fields_) s += " " + Escape(f.first) + "=" + Escape(f.second);
    return s;
}

Msg Msg::Decode(const std::string &text) {
    Msg m;
    size_t i = 0;
    auto word = [&] {
        size_t j = text.find(' ', i);
        std::string w = text.substr(i, j == std::string::npos ? std::string::npos : j - i);
        i = j == std::string::npos ? text.size() : j + 1;
        return w;
    };
    m.verb_ = Unescape(word());
    while (i < text.size()) {
        std::string w = word();
        if (w.empty()) continue;
        size_t eq = w.find('=');
        if (eq == std::string::npos)
            m.fields_.emplace_back(Unescape(w), "");
        else
            m.fields_.emplace_back(Unescape(w.substr(0, eq)), Unescape(w.substr(eq + 1)));
    }
    return m;
}

Msg Ok() { return Msg("ok"); }
Msg Err(const std::string &what) { return Msg("err").Set("what", what); }

Channel::~Channel() { Close(); }

void Channel::Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

bool Channel::Send(const Msg &m) {
    std::string body = m.Encode();
    uint32_t len = static_cast<uint32_t>(body.size());
    std::string frame(reinterpret_cast<const char *>(&len), 4);
    frame += body;
    size_t done = 0;
    while (done < frame.size()) {
        ssize_t n = write(fd_, frame.data() + done, frame.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

bool Channel::ReadAll(void *p, size_t n) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd_, static_cast<char *>(p) + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        done += static_cast<size_t>(r);
    }
    return true;
}

bool Channel::Ready() {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

bool Channel::Recv(Msg *m, uint64_t ms, const std::function<void()> &idle, bool *closed) {
    if (closed) *closed = false;
    Deadline d(ms);
    for (;;) {
        pollfd p{fd_, POLLIN, 0};
        int r = poll(&p, 1, idle ? 0 : 20);
        if (r > 0) break;
        if (d.Expired()) return false;
        if (idle) {
            idle();
            pollfd q{fd_, POLLIN, 0};
            if (poll(&q, 1, 1) > 0) break;
        }
    }
    uint32_t len = 0;
    if (!ReadAll(&len, 4) || len > (64u << 20)) {
        if (closed) *closed = true;
        return false;
    }
    std::string body(len, '\0');
    if (len && !ReadAll(body.data(), len)) {
        if (closed) *closed = true;
        return false;
    }
    *m = Msg::Decode(body);
    return true;
}

}  // namespace ndc
