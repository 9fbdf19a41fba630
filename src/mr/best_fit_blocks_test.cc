#include "best_fit_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>
#include <random>

namespace oomguard::mr {
namespace {

TEST(BestFitBlocks, PicksTheSmallestFreeBlockThatFits) {
  BestFitBlocks b;
  b.add_region(0x10000, 4096);
  uintptr_t p1 = *b.allocate(256), p2 = *b.allocate(1024), p3 = *b.allocate(256), p4 = *b.allocate(512),
            p5 = *b.allocate(256);
  EXPECT_EQ(p1, 0x10000u);
  EXPECT_EQ(p4, 0x10000u + 1536);
  ASSERT_TRUE(b.free(p2));  // holes: 1024 at p2, 512 at p4, 1792 at the end
  ASSERT_TRUE(b.free(p4));
  EXPECT_EQ(b.free_block_count(), 3u);
  EXPECT_EQ(*b.allocate(512), p4);   // exact fit, not the first hole
  EXPECT_EQ(*b.allocate(768), p2);   // 1024 is the smallest that fits 768
  EXPECT_EQ(*b.allocate(1792), p5 + 256);
  EXPECT_FALSE(b.allocate(512).has_value());  // only 256 left (rest of p2's hole)
  EXPECT_EQ(b.largest_free_block(), 256u);
  (void)p3;
}

TEST(BestFitBlocks, MergesWithBothNeighbours) {
  BestFitBlocks b;
  b.add_region(0x100000, 3 * 256);
  uintptr_t p = *b.allocate(256), q = *b.allocate(256), r = *b.allocate(256);
  EXPECT_EQ(b.free_bytes(), 0u);
  ASSERT_TRUE(b.free(p));
  ASSERT_TRUE(b.free(r));
  EXPECT_EQ(b.free_block_count(), 2u);
  ASSERT_TRUE(b.free(q));
  EXPECT_EQ(b.free_block_count(), 1u);
  EXPECT_EQ(b.largest_free_block(), 768u);
}

TEST(BestFitBlocks, NeverMergesAcrossRegionsEvenWhenAdjacent) {
  BestFitBlocks b;
  b.add_region(0x1000, 256);
  b.add_region(0x1100, 256);  // starts where the first ends
  EXPECT_EQ(b.free_block_count(), 2u);
  EXPECT_EQ(b.largest_free_block(), 256u);
  EXPECT_FALSE(b.allocate(512).has_value());
  EXPECT_EQ(b.take_free_regions().size(), 2u);
  EXPECT_EQ(b.reserved_bytes(), 0u);
}

TEST(BestFitBlocks, RefusesUnknownPointersAndDoubleFreeWithoutChangingAnything) {
  BestFitBlocks b;
  b.add_region(0x1000, 1024);
  uintptr_t p = *b.allocate(256);
  EXPECT_FALSE(b.free(p + 256).has_value());  // inside a free block
  EXPECT_FALSE(b.free(0x9999).has_value());
  EXPECT_EQ(*b.free(p, 512), 256u);  // wrong size: reported, not freed
  EXPECT_EQ(b.allocated_bytes(), 256u);
  EXPECT_EQ(*b.free(p), 256u);
  EXPECT_FALSE(b.free(p).has_value());
  EXPECT_EQ(b.free_bytes(), 1024u);
  EXPECT_EQ(b.allocated_bytes(), 0u);
}

TEST(BestFitBlocks, TakesOnlyEntirelyFreeRegions) {
  BestFitBlocks b;
  b.add_region(0x10000, 1024);
  b.add_region(0x20000, 2048);
  uintptr_t p = *b.allocate(2048);
  EXPECT_EQ(p, 0x20000u);
  auto taken = b.take_free_regions();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].base, 0x10000u);
  EXPECT_EQ(b.reserved_bytes(), 2048u);
  EXPECT_EQ(b.region_count(), 1u);
}

// Against a tiny model: a byte map of which granules are allocated.
TEST(BestFitBlocks, RandomOperationsMatchAModel) {
  constexpr uint64_t kGranule = 256, kRegion = 64 * kGranule;
  BestFitBlocks b;
  b.add_region(0x100000, kRegion);
  b.add_region(0x200000, kRegion);
  std::map<uintptr_t, uint64_t> live;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2) {
      uint64_t bytes = (1 + rng() % 16) * kGranule;
      auto p = b.allocate(bytes);
      if (!p) {
        EXPECT_LT(b.largest_free_block(), bytes);
        continue;
      }
      auto next = live.lower_bound(*p);
      if (next != live.end()) {
        EXPECT_LE(*p + bytes, next->first) << "overlap";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        EXPECT_LE(prev->first + prev->second, *p) << "overlap";
      }
      live[*p] = bytes;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      EXPECT_EQ(*b.free(it->first), it->second);
      live.erase(it);
    }
    uint64_t total = 0;
    for (auto& [p, n] : live) total += n;
    ASSERT_EQ(b.allocated_bytes(), total);
    ASSERT_EQ(b.free_bytes(), 2 * kRegion - total);
  }
  for (auto& [p, n] : live) b.free(p);
  EXPECT_EQ(b.free_block_count(), 2u);  // everything merged back into the two regions
}

// Best fit on both tiers (exact-size lists below 1 MiB, the ordered set above):
// the chosen block must lie in the smallest free hole that fits, computed
// from the model of live blocks; and the hole is used from its start.
TEST(BestFitBlocks, ChoosesTheSmallestHoleAcrossBothSizeTiers) {
  constexpr uint64_t kGranule = 256;
  const std::vector<std::pair<uintptr_t, uint64_t>> regions = {{0x10000000, 24ull << 20}, {0x40000000, 8ull << 20}};
  BestFitBlocks b;
  for (auto [base, bytes] : regions) b.add_region(base, bytes);
  std::map<uintptr_t, uint64_t> live;
  auto holes = [&] {  // (start, size) of every free run, from the model
    std::vector<std::pair<uintptr_t, uint64_t>> out;
    for (auto [base, bytes] : regions) {
      uintptr_t at = base;
      for (auto it = live.lower_bound(base); it != live.end() && it->first < base + bytes; ++it) {
        if (it->first > at) out.push_back({at, it->first - at});
        at = it->first + it->second;
      }
      if (at < base + bytes) out.push_back({at, base + bytes - at});
    }
    return out;
  };
  std::mt19937_64 rng(3);
  int large_allocations = 0;
  for (int step = 0; step < 6000; ++step) {
    if (live.empty() || rng() % 5 < 3) {
      // Small (up to 64 KiB), around the 1 MiB boundary, or large (up to 6 MiB).
      uint64_t granules = rng() % 3 == 0   ? 1 + rng() % 256
                          : rng() % 2 == 0 ? 4096 - 8 + rng() % 16
                                           : 1 + rng() % (6 * 4096);
      uint64_t bytes = granules * kGranule;
      auto h = holes();
      uint64_t best = UINT64_MAX;
      for (auto [start, size] : h) {
        if (size >= bytes) best = std::min(best, size);
      }
      auto p = b.allocate(bytes);
      if (best == UINT64_MAX) {
        ASSERT_FALSE(p.has_value());
        EXPECT_LT(b.largest_free_block(), bytes);
        continue;
      }
      ASSERT_TRUE(p.has_value());
      auto hole = std::find_if(h.begin(), h.end(), [&](auto x) { return x.first == *p; });
      ASSERT_NE(hole, h.end()) << "not at the start of a free hole";
      EXPECT_EQ(hole->second, best) << "not the best fit for " << bytes;
      live[*p] = bytes;
      large_allocations += bytes >= BestFitBlocks::kSmallLimit;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      ASSERT_EQ(*b.free(it->first), it->second);
      live.erase(it);
    }
    auto h = holes();
    ASSERT_EQ(b.free_block_count(), h.size());
    uint64_t largest = 0;
    for (auto [start, size] : h) largest = std::max(largest, size);
    ASSERT_EQ(b.largest_free_block(), largest);
  }
  EXPECT_GT(large_allocations, 100);
  for (auto [p, n] : live) ASSERT_TRUE(b.free(p));
  EXPECT_EQ(b.take_free_regions().size(), 2u);
}

// The address table grows and shrinks through many live blocks without losing one.
TEST(BestFitBlocks, ThousandsOfLiveBlocksAreAllFound) {
  BestFitBlocks b;
  b.add_region(0x100000000, 64ull << 20);
  std::vector<uintptr_t> p;
  for (int i = 0; i < 20000; ++i) p.push_back(*b.allocate(256 * (1 + i % 7)));
  for (int i = 0; i < 20000; i += 2) ASSERT_EQ(*b.free(p[i]), 256u * (1 + i % 7));
  for (int i = 0; i < 20000; ++i) {
    if (i % 2) {
      ASSERT_EQ(*b.allocated_size(p[i]), 256u * (1 + i % 7));
    } else {
      ASSERT_FALSE(b.allocated_size(p[i]).has_value());
    }
  }
  for (int i = 1; i < 20000; i += 2) ASSERT_TRUE(b.free(p[i]));
  EXPECT_EQ(b.free_block_count(), 1u);
  EXPECT_EQ(b.allocated_block_count(), 0u);
}

// An expandable region grows at its end and gives back only its free tail.
TEST(BestFitBlocks, ExpandableRegionGrowsAndTrimsAtItsEnd) {
  BestFitBlocks b;
  const uintptr_t base = 0x7000000;
  b.add_region(base, 1024);
  uintptr_t p = *b.allocate(512), q = *b.allocate(512);
  EXPECT_EQ(b.free_tail(base), 0u);
  b.extend_region(base, 2048);  // last block allocated: a new free block after it
  EXPECT_EQ(b.free_tail(base), 2048u);
  EXPECT_EQ(b.reserved_bytes(), 3072u);
  uintptr_t r = *b.allocate(2048);
  EXPECT_EQ(r, base + 1024);
  ASSERT_TRUE(b.free(q));  // merges with nothing after it (r is live)
  b.extend_region(base, 256);
  ASSERT_TRUE(b.free(r));  // q's hole + r + the new 256 are one free tail
  EXPECT_EQ(b.free_tail(base), 512u + 2048 + 256);
  EXPECT_EQ(b.free_block_count(), 1u);
  b.trim_region(base, 2048 + 256);
  EXPECT_EQ(b.reserved_bytes(), 1024u);
  EXPECT_EQ(b.free_tail(base), 512u);
  EXPECT_EQ(*b.allocate(512), q);
  EXPECT_FALSE(b.allocate(256).has_value());
  ASSERT_TRUE(b.free(q));
  b.trim_region(base, 512);  // the tail block goes; p is the region's last block now
  EXPECT_EQ(b.free_tail(base), 0u);
  b.extend_region(base, 512);
  EXPECT_EQ(*b.allocate(512), base + 512);
  ASSERT_TRUE(b.free(base + 512));
  ASSERT_TRUE(b.free(p));
  b.trim_region(base, 1024);  // the whole region
  EXPECT_EQ(b.region_count(), 0u);
  EXPECT_EQ(b.reserved_bytes(), 0u);
  EXPECT_EQ(b.free_block_count(), 0u);
}

// A region that grows at its end cuts into its free end only when no hole fits,
// even when the end is the best fit by size.
TEST(BestFitBlocks, TheFreeEndOfAGrowingRegionIsTheLastResort) {
  BestFitBlocks b;
  const uintptr_t base = 0x9000000;
  b.add_region(base, 4096, /*grows_at_end=*/true);
  uintptr_t p = *b.allocate(1024), q = *b.allocate(256);
  ASSERT_TRUE(b.free(p));  // holes: 1024 at the start; free end: 2816
  b.trim_region(base, 2816 - 512);  // free end is 512 now, smaller than the hole
  EXPECT_EQ(b.largest_free_block(), 1024u);
  EXPECT_EQ(*b.allocate(512), p);  // the 1024 hole, not the exactly-fitting end
  EXPECT_EQ(*b.allocate(512), p + 512);
  EXPECT_EQ(*b.allocate(512), q + 256);  // no hole left: now the end
  EXPECT_FALSE(b.allocate(256).has_value());
  b.extend_region(base, 256);
  EXPECT_EQ(*b.allocate(256), q + 768);
  EXPECT_EQ(b.free_block_count(), 0u);
}

}  // namespace
}  // namespace oomguard::mr
