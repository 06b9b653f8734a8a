// A Node on the software provider at 127.0.0.1 (the build tree's catalog).
#pragma once

#include <gtest/gtest.h>

#include "common/node.h"
#include "ndsupport.h"

namespace client_test {

inline opennd::net::IpAddress Addr(const char *text, uint16_t port = 0) {
    opennd::net::IpAddress a;
    opennd::net::ParseAddress(text, &a);
    opennd::net::SetPort(a.sa(), port);
    return a;
}

class ClientTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(NdStartup(), S_OK);
        auto s = node.Open(Addr("127.0.0.1"));
        ASSERT_TRUE(s.ok()) << s.message();
    }
    void TearDown() override { NdCleanup(); }

    opennd::client::Node node;
};

}  // namespace client_test
