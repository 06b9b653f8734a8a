// The shared mappings a peer hands over must not be able to shrink under
// us (a shrunk memfd faults the mapper with SIGBUS).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <algorithm>
#include <map>
#include <set>
#include <vector>

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

// A slot is reused as late as possible and never with its last token: a
// stale token cannot name the next registration in its slot. (Filling the
// table leaves one slot free, so the reuse is forced.)
TEST(MrTable, AReusedSlotNeverGetsItsStaleToken) {
    MrTable table;
    ASSERT_TRUE(table.ok());
    const uint32_t first = table.Add(MrView{1, 0x1000, 64, 0});
    ASSERT_NE(first, 0u);
    table.Remove(first);
    const uint32_t second = table.Add(MrView{1, 0x2000, 64, 0});
    EXPECT_NE(second & 0xFFFF, first & 0xFFFF) << "a freed slot came back at once";
    std::vector<uint32_t> tokens{second};
    while (uint32_t t = table.Add(MrView{1, 0x3000, 64, 0})) tokens.push_back(t);
    ASSERT_EQ(tokens.size(), kMrTableEntries - 1);  // full
    // Slots are not handed out in order.
    bool ascending = true;
    for (size_t i = 1; i < 16; ++i) ascending = ascending && (tokens[i] & 0xFFFF) == (tokens[i - 1] & 0xFFFF) + 1;
    EXPECT_FALSE(ascending);
    for (int round = 0; round < 64; ++round) {
        const uint32_t stale = tokens[round];
        table.Remove(stale);
        const uint32_t again = table.Add(MrView{1, 0x4000, 64, 0});
        ASSERT_EQ(again & 0xFFFF, stale & 0xFFFF);  // the only free slot
        EXPECT_NE(again, stale);
        MrView v;
        EXPECT_FALSE(table.Lookup(stale, &v));
        EXPECT_TRUE(table.Lookup(again, &v));
        tokens[round] = again;
    }
}

// A memo of the last region found saves the table read on the data path,
// and must never outlive the region: after Remove the same SGE fails, even
// though the memo still names the token (a Send or a receive from
// deregistered memory is an access violation, not a copy).
TEST(MrTable, AMemoDoesNotOutliveItsRegion) {
    MrTable table;
    ASSERT_TRUE(table.ok());
    alignas(64) static char buffer[256];
    const uint64_t base = reinterpret_cast<uint64_t>(buffer);
    const uint32_t token = table.Add(MrView{kRightLocalWrite, base, sizeof buffer, 0});
    const uint32_t other = table.Add(MrView{kRightLocalWrite, base, 64, 0});
    ASSERT_NE(token, 0u);
    ASSERT_NE(other, 0u);
    ND2_SGE sge{buffer + 8, 8, token};
    MrMemo memo;
    uint64_t total = 0;
    ASSERT_TRUE(table.LocalSgesValid(&sge, 1, kRightLocalWrite, &total, &memo));
    EXPECT_EQ(total, 8u);
    EXPECT_EQ(memo.token, token);
    EXPECT_TRUE(table.LocalSgesValid(&sge, 1, kRightLocalWrite, &total, &memo));  // from the memo
    // The memo's region is still range-checked and rights-checked.
    ND2_SGE past{buffer + 250, 8, token};
    EXPECT_FALSE(table.LocalSgesValid(&past, 1, kRightLocalWrite, nullptr, &memo));
    EXPECT_FALSE(table.LocalSgesValid(&sge, 1, kRightReadSink, nullptr, &memo));
    // Removing another region makes the memo stale too; it is looked up again.
    table.Remove(other);
    EXPECT_TRUE(table.LocalSgesValid(&sge, 1, kRightLocalWrite, nullptr, &memo));
    table.Remove(token);
    EXPECT_FALSE(table.LocalSgesValid(&sge, 1, kRightLocalWrite, nullptr, &memo));
    EXPECT_FALSE(table.LocalSgesValid(&sge, 1, 0, nullptr, &memo));
    // A window is no local region: refused, and never remembered.
    const uint32_t window = table.Add(MrView{kRightLocalWrite | kIsWindow, base, sizeof buffer, 7});
    ND2_SGE through{buffer, 8, window};
    MrMemo fresh;
    EXPECT_FALSE(table.LocalSgesValid(&through, 1, 0, nullptr, &fresh));
    EXPECT_EQ(fresh.token, 0u);
    EXPECT_FALSE(table.LocalSgesValid(&through, 1, 0, nullptr, &fresh));
}

// Tokens are not guessable from the ones a peer has seen: both halves look
// random. Over a few thousand registrations the random half repeats about
// as often as chance says (a counter or a fixed seed would show), slots
// follow no simple order, and two tables (two processes) hand out
// different sequences.
TEST(MrTable, TokensLookRandom) {
    constexpr size_t kN = 4000;
    MrTable a, b;
    ASSERT_TRUE(a.ok() && b.ok());
    std::vector<uint32_t> ta, tb;
    for (size_t i = 0; i < kN; ++i) {
        ta.push_back(a.Add(MrView{1, 0x1000 + i, 64, 0}));
        tb.push_back(b.Add(MrView{1, 0x1000 + i, 64, 0}));
        ASSERT_NE(ta.back(), 0u);
        ASSERT_NE(tb.back(), 0u);
    }
    std::set<uint32_t> tokens(ta.begin(), ta.end()), tags;
    EXPECT_EQ(tokens.size(), kN) << "a live token was handed out twice";
    for (uint32_t t : ta) tags.insert(t >> 16);
    // 4000 draws from 65535 values: ~118 repeats expected (sd ~11). More
    // than 300 would take a broken generator, fewer than 30 a counter.
    const size_t repeats = kN - tags.size();
    EXPECT_LT(repeats, 300u) << "the random half repeats too often";
    EXPECT_GT(repeats, 30u) << "the random half never repeats: a counter, not chance";
    std::map<uint32_t, size_t> deltas;  // between consecutive random halves
    for (size_t i = 1; i < kN; ++i) ++deltas[((ta[i] >> 16) - (ta[i - 1] >> 16)) & 0xFFFF];
    size_t top = 0;
    for (const auto &[d, n] : deltas) top = std::max(top, n);
    EXPECT_LT(top, kN / 20) << "consecutive tokens' random halves follow a pattern";
    auto stride = [&](size_t i) { return ((ta[i] & 0xFFFF) - (ta[i - 1] & 0xFFFF)) & 0xFFFF; };
    size_t steps = 0, same = 0;
    for (size_t i = 2; i < kN; ++i) steps += stride(i) == stride(1);  // a constant stride

    for (size_t i = 0; i < kN; ++i) same += ta[i] == tb[i];
    EXPECT_LT(steps, kN / 20) << "slots are handed out with a constant stride";
    EXPECT_LT(same, 5u) << "two tables hand out the same tokens";
}

}  // namespace
}  // namespace soft
