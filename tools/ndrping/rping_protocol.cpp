#include "rping_protocol.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace ndrping {

void Encode(const BufferInfo &info, unsigned char out[kInfoBytes]) {
    for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(info.address >> (56 - 8 * i));
    std::memcpy(out + 8, &info.token, 4);  // already in wire order
    for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<unsigned char>(info.size >> (24 - 8 * i));
}

BufferInfo Decode(const unsigned char in[kInfoBytes]) {
    BufferInfo info;
    for (int i = 0; i < 8; ++i) info.address = (info.address << 8) | in[i];
    std::memcpy(&info.token, in + 8, 4);
    for (int i = 0; i < 4; ++i) info.size = (info.size << 8) | in[12 + i];
    return info;
}

void FillPing(char *buf, uint32_t size, uint32_t ping) {
    // Exactly rping_test_client: snprintf may truncate (tiny sizes, huge ping
    // numbers); its return value is where the letters start.
    int cc = std::snprintf(buf, size, "rdma-ping-%d: ", static_cast<int>(ping));
    unsigned char c = static_cast<unsigned char>(65 + ping % 58);
    for (uint32_t i = cc < 0 ? 0 : static_cast<uint32_t>(cc); i < size; ++i) {
        buf[i] = static_cast<char>(c);
        if (++c > 122) c = 65;
    }
    buf[size - 1] = 0;
}

std::string FirstDifference(const char *expected, const char *got, uint32_t size) {
    for (uint32_t i = 0; i < size; ++i) {
        if (expected[i] == got[i]) continue;
        auto show = [](char ch) {
            char b[16];
            unsigned char u = static_cast<unsigned char>(ch);
            if (u >= 32 && u < 127)
                std::snprintf(b, sizeof b, "0x%02x '%c'", u, ch);
            else
                std::snprintf(b, sizeof b, "0x%02x", u);
            return std::string(b);
        };
        return "offset " + std::to_string(i) + ": expected " + show(expected[i]) + ", got " + show(got[i]);
    }
    return {};
}

std::string CheckPing(const char *buf, uint32_t size, uint32_t ping) {
    std::vector<char> want(size);
    FillPing(want.data(), size, ping);
    return FirstDifference(want.data(), buf, size);
}

}  // namespace ndrping
