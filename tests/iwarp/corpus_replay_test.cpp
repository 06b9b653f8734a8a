// Replays the fuzzing corpus (fuzz/corpus) through the fuzz driver under the
// normal build, plus deterministic mutations of every entry, so CI exercises
// the decoders and the engine's hostile-input paths without libFuzzer. The
// driver aborts on any broken invariant.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "iwarp_fuzz_driver.h"

namespace {

std::vector<std::vector<uint8_t>> Corpus() {
    std::vector<std::vector<uint8_t>> out;
    for (const auto &e : std::filesystem::directory_iterator(OPENND_IWARP_CORPUS_DIR)) {
        if (!e.is_regular_file()) continue;
        std::ifstream f(e.path(), std::ios::binary);
        out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    return out;
}

TEST(FuzzCorpus, EveryEntryRuns) {
    const auto corpus = Corpus();
    ASSERT_GE(corpus.size(), 10u) << "corpus missing at " << OPENND_IWARP_CORPUS_DIR;
    for (const auto &input : corpus) iwarp_fuzz::RunOne(input.data(), input.size());
}

TEST(FuzzCorpus, MutationsRun) {
    std::mt19937 rng(20240601);
    for (const auto &input : Corpus()) {
        for (int i = 0; i < 40; ++i) {
            std::vector<uint8_t> m = input;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < edits && !m.empty(); ++k) {
                const size_t at = rng() % m.size();
                switch (rng() % 4) {
                case 0: m[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
                case 1: m[at] = static_cast<uint8_t>(rng()); break;
                case 2: m.resize(at); break;
                default: m.insert(m.begin() + static_cast<ptrdiff_t>(at), static_cast<uint8_t>(rng())); break;
                }
            }
            iwarp_fuzz::RunOne(m.data(), m.size());
        }
    }
}

TEST(FuzzCorpus, EmptyAndTinyInputs) {
    iwarp_fuzz::RunOne(nullptr, 0);
    for (unsigned b = 0; b < 256; ++b) {
        const uint8_t one[1] = {static_cast<uint8_t>(b)};
        iwarp_fuzz::RunOne(one, 1);
    }
}

}  // namespace
