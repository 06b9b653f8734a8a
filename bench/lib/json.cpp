#include "opennd/bench/json.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <stdexcept>

namespace opennd::bench {

std::string JsonWriter::Escape(std::string_view s) {
    std::string r;
    r.reserve(s.size() + 2);
    r += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': r += "\\\""; break;
        case '\\': r += "\\\\"; break;
        case '\n': r += "\\n"; break;
        case '\r': r += "\\r"; break;
        case '\t': r += "\\t"; break;
        case '\b': r += "\\b"; break;
        case '\f': r += "\\f"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                r += buf;
            } else {
                r += static_cast<char>(c);  // UTF-8 passes through
            }
        }
    }
    r += '"';
    return r;
}

void JsonWriter::Newline() {
    if (!pretty_) return;
    std::fputc('\n', out_);
    for (std::size_t i = 0; i < stack_.size(); ++i) std::fputs("  ", out_);
}

void JsonWriter::BeforeValue() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty()) return;
    if (stack_.back().object) throw std::logic_error("JsonWriter: value in an object without Key()");
    if (!stack_.back().empty) std::fputc(',', out_);
    stack_.back().empty = false;
    Newline();
}

void JsonWriter::Key(std::string_view key) {
    if (stack_.empty() || !stack_.back().object || after_key_) throw std::logic_error("JsonWriter: misplaced Key()");
    if (!stack_.back().empty) std::fputc(',', out_);
    stack_.back().empty = false;
    Newline();
    std::fputs(Escape(key).c_str(), out_);
    std::fputs(pretty_ ? ": " : ":", out_);
    after_key_ = true;
}

void JsonWriter::Open(char c) {
    BeforeValue();
    std::fputc(c, out_);
    stack_.push_back(Level{c == '{'});
}

void JsonWriter::Close(char c) {
    bool object = c == '}';
    if (stack_.empty() || stack_.back().object != object || after_key_)
        throw std::logic_error("JsonWriter: unbalanced close");
    bool empty = stack_.back().empty;
    stack_.pop_back();
    if (!empty) Newline();
    std::fputc(c, out_);
}

void JsonWriter::BeginObject() { Open('{'); }
void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::BeginArray() { Open('['); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::String(std::string_view s) {
    BeforeValue();
    std::fputs(Escape(s).c_str(), out_);
}

void JsonWriter::Number(double v) {
    BeforeValue();
    if (!std::isfinite(v)) {
        std::fputs("null", out_);
        return;
    }
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    std::fwrite(buf, 1, static_cast<std::size_t>(r.ptr - buf), out_);
}

void JsonWriter::Int(int64_t v) {
    BeforeValue();
    std::fprintf(out_, "%" PRId64, v);
}

void JsonWriter::Uint(uint64_t v) {
    BeforeValue();
    std::fprintf(out_, "%" PRIu64, v);
}

void JsonWriter::Bool(bool v) {
    BeforeValue();
    std::fputs(v ? "true" : "false", out_);
}

void JsonWriter::Null() {
    BeforeValue();
    std::fputs("null", out_);
}

void JsonWriter::Finish() {
    if (!stack_.empty() || after_key_) throw std::logic_error("JsonWriter: unfinished document");
    std::fputc('\n', out_);
    std::fflush(out_);
}

}  // namespace opennd::bench
