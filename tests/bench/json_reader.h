// A small JSON reader for the benchmark tests: enough to check what
// ndbaseline writes. Throws std::runtime_error on malformed input.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench_test {

struct Json {
    enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Json> array;
    std::map<std::string, Json> object;

    bool Has(const std::string &k) const { return type == kObject && object.count(k) > 0; }
    const Json &operator[](const std::string &k) const {
        auto it = object.find(k);
        if (type != kObject || it == object.end()) throw std::runtime_error("missing key '" + k + "'");
        return it->second;
    }
};

class JsonReader {
public:
    static Json Parse(const std::string &text) {
        JsonReader r(text);
        Json v = r.Value();
        r.Space();
        if (r.pos_ != text.size()) r.Fail("trailing characters");
        return v;
    }

private:
    explicit JsonReader(const std::string &t) : t_(t) {}

    [[noreturn]] void Fail(const std::string &why) const {
        throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(pos_));
    }
    void Space() {
        while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\t' || t_[pos_] == '\r')) ++pos_;
    }
    char Peek() {
        Space();
        if (pos_ >= t_.size()) Fail("unexpected end");
        return t_[pos_];
    }
    void Expect(char c) {
        if (Peek() != c) Fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    bool Literal(const char *word) {
        std::string w(word);
        if (t_.compare(pos_, w.size(), w) != 0) return false;
        pos_ += w.size();
        return true;
    }

    Json Value() {
        Json v;
        char c = Peek();
        if (c == '{') {
            v.type = Json::kObject;
            ++pos_;
            if (Peek() == '}') return ++pos_, v;
            for (;;) {
                std::string key = String();
                Expect(':');
                v.object[key] = Value();
                if (Peek() == ',') {
                    ++pos_;
                    continue;
                }
                Expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.type = Json::kArray;
            ++pos_;
            if (Peek() == ']') return ++pos_, v;
            for (;;) {
                v.array.push_back(Value());
                if (Peek() == ',') {
                    ++pos_;
                    continue;
                }
                Expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.type = Json::kString;
            v.string = String();
            return v;
        }
        if (Literal("true") || Literal("false")) {
            v.type = Json::kBool;
            v.boolean = t_[pos_ - 1] == 'e' && t_[pos_ - 4] == 't';  // "true" vs "false"
            return v;
        }
        if (Literal("null")) return v;
        const char *start = t_.c_str() + pos_;
        char *end = nullptr;
        v.number = std::strtod(start, &end);
        if (end == start) Fail("bad value");
        pos_ += static_cast<std::size_t>(end - start);
        v.type = Json::kNumber;
        return v;
    }

    std::string String() {
        Expect('"');
        std::string s;
        while (pos_ < t_.size() && t_[pos_] != '"') {
            char c = t_[pos_++];
            if (c != '\\') {
                s += c;
                continue;
            }
            if (pos_ >= t_.size()) Fail("bad escape");
            char e = t_[pos_++];
            switch (e) {
            case 'n': s += '\n'; break;
            case 't': s += '\t'; break;
            case 'r': s += '\r'; break;
            case 'b': s += '\b'; break;
            case 'f': s += '\f'; break;
            case 'u': {
                if (pos_ + 4 > t_.size()) Fail("bad \\u escape");
                unsigned code = static_cast<unsigned>(std::stoul(t_.substr(pos_, 4), nullptr, 16));
                pos_ += 4;
                if (code >= 0x80) Fail("non-ASCII \\u escape not supported here");
                s += static_cast<char>(code);
                break;
            }
            default: s += e;
            }
        }
        if (pos_ >= t_.size()) Fail("unterminated string");
        ++pos_;
        return s;
    }

    const std::string &t_;
    std::size_t pos_ = 0;
};

}  // namespace bench_test
