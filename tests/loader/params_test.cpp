// The tunables table (opennd/params.h): a listed variable reads as set, a
// name the table does not hold reads as unset whatever the environment
// says, and numbers are read strictly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "opennd/params.h"

namespace {

TEST(Params, EveryEntryIsNamedDocumentedAndUnique) {
    size_t n = 0;
    const opennd::Param *p = opennd::Params(&n);
    ASSERT_GT(n, 15u);
    std::set<std::string> names;
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(std::strncmp(p[i].name, "OPENND_", 7), 0) << p[i].name;
        EXPECT_TRUE(names.insert(p[i].name).second) << p[i].name << " twice";
        EXPECT_GT(std::strlen(p[i].help), 20u) << p[i].name;
        EXPECT_NE(p[i].default_value, nullptr);
    }
}

TEST(Params, OnlyListedVariablesAreRead) {
    setenv("OPENND_SOFT_PARK_MS", "42", 1);
    setenv("OPENND_NOT_A_TUNABLE", "1", 1);
    EXPECT_STREQ(opennd::ParamText("OPENND_SOFT_PARK_MS"), "42");
    EXPECT_EQ(opennd::ParamLong("OPENND_SOFT_PARK_MS", 1), 42);
    EXPECT_EQ(opennd::ParamText("OPENND_NOT_A_TUNABLE"), nullptr);
    EXPECT_EQ(opennd::ParamLong("OPENND_NOT_A_TUNABLE", 5), 5);
    EXPECT_EQ(opennd::ParamText(nullptr), nullptr);
    unsetenv("OPENND_NOT_A_TUNABLE");
    // Empty is unset; a value that is not a number gives the default.
    setenv("OPENND_SOFT_PARK_MS", "", 1);
    EXPECT_EQ(opennd::ParamText("OPENND_SOFT_PARK_MS"), nullptr);
    setenv("OPENND_SOFT_PARK_MS", "12ms", 1);
    EXPECT_EQ(opennd::ParamLong("OPENND_SOFT_PARK_MS", 1), 1);
    unsetenv("OPENND_SOFT_PARK_MS");
    EXPECT_EQ(opennd::ParamLong("OPENND_SOFT_PARK_MS", 1), 1);
}

}  // namespace
