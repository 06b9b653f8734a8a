// The shared mappings a peer hands over must not be able to shrink under
// us (a shrunk memfd faults the mapper with SIGBUS).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "mr_table.h"
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

// A peer gets the memory-region table read-only. It must not be able to
// make it writable: memfds are mode 0777, so reopening the descriptor
// through /proc works, but no writable mapping or write(2) may follow (a
// writer could forge entries and have the copy path place data anywhere).
TEST(MrTable, APeerCannotMakeTheTableWritable) {
    MrTable table;
    ASSERT_TRUE(table.ok());
    const int ro = table.ReadOnlyFd();
    ASSERT_GE(ro, 0);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", ro);
    const int rw = open(path, O_RDWR | O_CLOEXEC);
    ASSERT_GE(rw, 0) << "reopening is expected to work; the seals must stop what follows";
    EXPECT_EQ(mmap(nullptr, kMrTableBytes, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0), MAP_FAILED);
    const char byte = 1;
    EXPECT_EQ(pwrite(rw, &byte, 1, 4096), -1);
    void *peer = mmap(nullptr, kMrTableBytes, PROT_READ, MAP_SHARED, ro, 0);
    ASSERT_NE(peer, MAP_FAILED);
    EXPECT_NE(mprotect(peer, kMrTableBytes, PROT_READ | PROT_WRITE), 0);
    // The owner still writes it, and a peer's mapping sees the entries.
    uint32_t token = table.Add(MrView{1, 0x1000, 64, 0});
    ASSERT_NE(token, 0u);
    MrView seen;
    EXPECT_TRUE(MrTableView(peer, kMrTableBytes).Lookup(token, &seen));
    EXPECT_EQ(seen.address, 0x1000u);
    munmap(peer, kMrTableBytes);
    close(rw);
    close(ro);
}

}  // namespace
}  // namespace soft
