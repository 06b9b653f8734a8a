// A tiny streaming JSON writer (no dependency): it tracks nesting and
// commas, escapes strings, and writes non-finite numbers as null.
//
//   JsonWriter w(stdout);
//   w.BeginObject(); w.Key("n"); w.Number(1.5); w.EndObject(); w.Finish();
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace opennd::bench {

class JsonWriter {
public:
    // pretty: one member per line with two-space indent; else compact.
    explicit JsonWriter(std::FILE *out, bool pretty = true) : out_(out), pretty_(pretty) {}

    void BeginObject();
    void EndObject();
    void BeginArray();
    void EndArray();
    void Key(std::string_view key);  // inside an object, before each value

    void String(std::string_view s);
    void Number(double v);  // shortest form that reads back exactly; null if not finite
    void Int(int64_t v);
    void Uint(uint64_t v);
    void Bool(bool v);
    void Null();

    // Key + value in one call.
    template <class T>
    void Field(std::string_view key, const T &value) {
        Key(key);
        Value(value);
    }

    // Ends the document with a newline and flushes.
    void Finish();

    static std::string Escape(std::string_view s);  // with the quotes

private:
    void Value(std::string_view v) { String(v); }
    void Value(const std::string &v) { String(v); }
    void Value(const char *v) { String(v); }
    void Value(double v) { Number(v); }
    void Value(bool v) { Bool(v); }
    void Value(int v) { Int(v); }
    void Value(long v) { Int(v); }
    void Value(long long v) { Int(v); }
    void Value(unsigned v) { Uint(v); }
    void Value(unsigned long v) { Uint(v); }
    void Value(unsigned long long v) { Uint(v); }

    void BeforeValue();
    void Open(char c);
    void Close(char c);
    void Newline();

    struct Level {
        bool object;
        bool empty = true;
    };
    std::FILE *out_;
    bool pretty_;
    bool after_key_ = false;
    std::vector<Level> stack_;
};

}  // namespace opennd::bench
