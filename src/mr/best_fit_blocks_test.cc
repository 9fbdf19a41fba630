#include "best_fit_blocks.h"

#include <gtest/gtest.h>

#include <map>
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

}  // namespace
}  // namespace oomguard::mr
