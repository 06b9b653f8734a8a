// The shared mappings a peer hands over must not be able to shrink under
// us (a shrunk memfd faults the mapper with SIGBUS).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "sealed_memfd.h"

namespace soft {
namespace {

TEST(SealedMemfd, CannotShrinkOrGrow) {
    std::string error;
    const int fd = CreateSealedMemfd("opennd-test", 65536, &error);
    ASSERT_GE(fd, 0) << error;
    EXPECT_NE(ftruncate(fd, 4096), 0);
    EXPECT_NE(ftruncate(fd, 1 << 20), 0);
    EXPECT_TRUE(SealedAtSize(fd, 65536, "channel", &error)) << error;
    // Its content stays writable.
    void *p = mmap(nullptr, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(p, MAP_FAILED);
    static_cast<char *>(p)[65535] = 1;
    munmap(p, 65536);
    close(fd);
}

TEST(SealedMemfd, UnsealedOrWrongSizedFilesAreRefused) {
    std::string error;
    const int plain = memfd_create("opennd-test", MFD_CLOEXEC);
    ASSERT_GE(plain, 0);
    ASSERT_EQ(ftruncate(plain, 65536), 0);
    EXPECT_FALSE(SealedAtSize(plain, 65536, "channel", &error));
    EXPECT_NE(error.find("not sealed"), std::string::npos) << error;
    close(plain);
    const int sealed = CreateSealedMemfd("opennd-test", 65536, &error);
    ASSERT_GE(sealed, 0);
    EXPECT_FALSE(SealedAtSize(sealed, 131072, "channel", &error));
    EXPECT_NE(error.find("wrong size"), std::string::npos) << error;
    close(sealed);
    EXPECT_FALSE(SealedAtSize(-1, 65536, "channel", &error));
}

}  // namespace
}  // namespace soft
