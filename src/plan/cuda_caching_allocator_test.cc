// The caching-allocator model against the rules of c10/cuda/CUDACachingAllocator.cpp.
#include "cuda_caching_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace oomguard::plan {
namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

TEST(CudaCachingAllocator, RoundSizeIsKMinBlockSizeMultiples) {
  EXPECT_EQ(CudaRoundSize(0), 0u);
  EXPECT_EQ(CudaRoundSize(1), 512u);
  EXPECT_EQ(CudaRoundSize(512), 512u);
  EXPECT_EQ(CudaRoundSize(513), 1024u);
  EXPECT_EQ(CudaRoundSize(10 * kMiB + 1), 10 * kMiB + 512);  // no 2 MiB rounding of the request
}

TEST(CudaCachingAllocator, SegmentSizesFollowGetAllocationSize) {
  EXPECT_EQ(CudaAllocationSize(512), kSmallBuffer);
  EXPECT_EQ(CudaAllocationSize(kSmallSize), kSmallBuffer);
  EXPECT_EQ(CudaAllocationSize(kSmallSize + 512), kLargeBuffer);
  EXPECT_EQ(CudaAllocationSize(kMinLargeAlloc - 512), kLargeBuffer);
  EXPECT_EQ(CudaAllocationSize(kMinLargeAlloc), 10 * kMiB);
  EXPECT_EQ(CudaAllocationSize(kMinLargeAlloc + 512), 12 * kMiB);
}

TEST(CudaCachingAllocator, SmallRequestsShareA2MiBSegment) {
  CudaCachingAllocator a;
  a.Malloc(1000);
  a.Malloc(1000);
  EXPECT_EQ(a.stats().allocated_bytes, 2048u);
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kMiB);
  for (int i = 0; i < 2046; ++i) a.Malloc(1000);  // 2048 blocks of 1 KiB fill the segment exactly
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kMiB);
  a.Malloc(1);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * kMiB);
  EXPECT_EQ(a.stats().segments, 2u);
}

TEST(CudaCachingAllocator, MidSizedRequestsSplitA20MiBSegment) {
  CudaCachingAllocator a;
  for (int i = 0; i < 4; ++i) a.Malloc(5 * kMiB);  // 4 x 5 MiB: one 20 MiB segment, the last takes the rest
  EXPECT_EQ(a.stats().reserved_bytes, kLargeBuffer);
  EXPECT_EQ(a.stats().allocated_bytes, 20 * kMiB);
  a.Malloc(5 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kLargeBuffer);
}

TEST(CudaCachingAllocator, LargeRequestKeepsTheRemainderOnlyWhenAbove1MiB) {
  // 11 MiB: a 12 MiB segment; the 1 MiB remainder is not above kSmallSize, so the
  // whole 12 MiB block is allocated (and counted by max_memory_allocated).
  CudaCachingAllocator a;
  int64_t h = a.Malloc(11 * kMiB);
  EXPECT_EQ(a.BlockSize(h), 12 * kMiB);
  EXPECT_EQ(a.stats().allocated_bytes, 12 * kMiB);
  // 10.5 MiB: also a 12 MiB segment, but the 1.5 MiB remainder is split off.
  CudaCachingAllocator b;
  int64_t g = b.Malloc(10 * kMiB + 512 * kKiB);
  EXPECT_EQ(b.BlockSize(g), 10 * kMiB + 512 * kKiB);
  EXPECT_EQ(b.stats().allocated_bytes, 10 * kMiB + 512 * kKiB);
  EXPECT_EQ(b.stats().reserved_bytes, 12 * kMiB);
  // The remainder serves a later large request without a new segment.
  b.Malloc(1 * kMiB + 512 * kKiB);
  EXPECT_EQ(b.stats().reserved_bytes, 12 * kMiB);
  EXPECT_EQ(b.stats().segments, 1u);
}

TEST(CudaCachingAllocator, FreedNeighboursMergeAndAreReused) {
  CudaCachingAllocator a;
  int64_t x = a.Malloc(5 * kMiB), y = a.Malloc(5 * kMiB);
  a.Malloc(5 * kMiB);
  a.Free(y);
  a.Free(x);
  EXPECT_EQ(a.stats().allocated_bytes, 5 * kMiB);
  int64_t z = a.Malloc(10 * kMiB);  // the merged 10 MiB block, no new segment
  EXPECT_EQ(a.BlockSize(z), 10 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, kLargeBuffer);
}

TEST(CudaCachingAllocator, BestFitTakesTheSmallestBlockThatHolds) {
  CudaCachingAllocator a;
  int64_t big = a.Malloc(16 * kMiB);   // 16 MiB segment, block 16 MiB
  int64_t mid = a.Malloc(12 * kMiB);   // 12 MiB segment
  a.Free(big);
  a.Free(mid);
  int64_t h = a.Malloc(11 * kMiB);  // takes the 12 MiB block whole (remainder 1 MiB is not split)
  EXPECT_EQ(a.BlockSize(h), 12 * kMiB);
  int64_t k = a.Malloc(4 * kMiB);  // splits the 16 MiB block (remainder 12 MiB)
  EXPECT_EQ(a.BlockSize(k), 4 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 28 * kMiB);
}

TEST(CudaCachingAllocator, MaxSplitSizeKeepsOversizeBlocksWhole) {
  CudaCachingAllocator a({.max_split_size = 4 * kMiB});
  int64_t h = a.Malloc(5 * kMiB);  // at or above max_split_size: never split
  EXPECT_EQ(a.BlockSize(h), kLargeBuffer);
  a.Free(h);
  a.Malloc(3 * kMiB);  // below max_split_size: may not take the oversize 20 MiB block
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kLargeBuffer);
  // An oversize request takes the best fit (the 17 MiB left of the second
  // segment, within kLargeBuffer of the request) whole.
  int64_t g = a.Malloc(6 * kMiB);
  EXPECT_EQ(a.BlockSize(g), 17 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kLargeBuffer);
}

TEST(CudaCachingAllocator, ExpandableSegmentsGrowInPages) {
  CudaCachingAllocator a({.expandable_segments = true});
  int64_t h = a.Malloc(5 * kMiB);
  EXPECT_EQ(a.BlockSize(h), 5 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, kLargeBuffer);
  a.Malloc(30 * kMiB);  // 15 MiB free at the end: one more 20 MiB page
  EXPECT_EQ(a.stats().reserved_bytes, 2 * kLargeBuffer);
  EXPECT_EQ(a.stats().allocated_bytes, 35 * kMiB);
  a.Malloc(11 * kMiB);  // 11 MiB with only 5 MiB left: every block is 512-rounded, nothing whole
  EXPECT_EQ(a.stats().allocated_bytes, 46 * kMiB);
  EXPECT_EQ(a.stats().reserved_bytes, 3 * kLargeBuffer);
  a.Malloc(1000);
  EXPECT_EQ(a.stats().reserved_bytes, 3 * kLargeBuffer + kSmallBuffer);
}

TEST(CudaCachingAllocator, ExpandableSegmentsReuseFreedSpaceBeforeGrowing) {
  CudaCachingAllocator a({.expandable_segments = true});
  int64_t x = a.Malloc(8 * kMiB);
  a.Malloc(8 * kMiB);
  a.Free(x);
  a.Malloc(6 * kMiB);  // fits the freed 8 MiB at the start, not the 4 MiB tail
  a.Malloc(4 * kMiB);  // the tail
  EXPECT_EQ(a.stats().reserved_bytes, kLargeBuffer);
}

// Random traffic: the books balance (allocated is the sum of live blocks, a
// block holds its request, everything freed leaves nothing allocated).
TEST(CudaCachingAllocator, RandomTrafficKeepsTheBooks) {
  for (bool expandable : {false, true}) {
    CudaCachingAllocator a({.expandable_segments = expandable});
    std::mt19937_64 rng(7);
    std::vector<std::pair<int64_t, uint64_t>> live;
    for (int i = 0; i < 20000; ++i) {
      if (live.empty() || rng() % 3 != 0) {
        uint64_t size = 1 + rng() % (rng() % 2 ? kSmallSize : 40 * kMiB);
        int64_t h = a.Malloc(size);
        ASSERT_GE(a.BlockSize(h), CudaRoundSize(size));
        live.emplace_back(h, size);
      } else {
        size_t k = rng() % live.size();
        a.Free(live[k].first);
        live[k] = live.back();
        live.pop_back();
      }
      if (i % 997 == 0) {
        uint64_t sum = 0;
        for (auto& [h, s] : live) sum += a.BlockSize(h);
        ASSERT_EQ(sum, a.stats().allocated_bytes);
        ASSERT_LE(a.stats().allocated_bytes, a.stats().reserved_bytes);
      }
    }
    for (auto& [h, s] : live) a.Free(h);
    EXPECT_EQ(a.stats().allocated_bytes, 0u);
  }
}


// The rules once more, as plainly as possible (every block in one list, best
// fit by a linear scan; without expandable segments), against the model's
// indexed pools on random traffic: the same block sizes, peaks and segments
// after every call.
class PlainAllocator {
 public:
  explicit PlainAllocator(uint64_t max_split) : max_split_(max_split) {}
  int Malloc(uint64_t requested) {
    const uint64_t size = CudaRoundSize(requested);
    const bool small = size <= kSmallSize;
    int best = -1;
    for (int i = 0; i < static_cast<int>(blocks_.size()); ++i) {
      const B& b = blocks_[i];
      if (b.gone || b.allocated || b.small != small || b.size < size) continue;
      if (best < 0 || b.size < blocks_[best].size || (b.size == blocks_[best].size && b.addr < blocks_[best].addr)) best = i;
    }
    if (best >= 0) {
      const uint64_t found = blocks_[best].size;
      if ((size < max_split_ && found >= max_split_) || (size >= max_split_ && found >= size + kLargeBuffer)) best = -1;
    }
    if (best < 0) {
      const uint64_t seg = CudaAllocationSize(size);
      blocks_.push_back({next_addr_, seg, small, false, false, segments_++});
      next_addr_ += seg;
      reserved_ += seg;
      peak_reserved_ = std::max(peak_reserved_, reserved_);
      best = static_cast<int>(blocks_.size()) - 1;
    }
    const uint64_t rest = blocks_[best].size - size;
    if (small ? rest >= kMinBlockSize : (size < max_split_ && rest > kSmallSize)) {
      B r = blocks_[best];
      r.addr += size;
      r.size = rest;
      blocks_[best].size = size;
      blocks_.push_back(r);
    }
    blocks_[best].allocated = true;
    allocated_ += blocks_[best].size;
    peak_allocated_ = std::max(peak_allocated_, allocated_);
    return best;
  }
  void Free(int h) {
    B& b = blocks_[h];
    b.allocated = false;
    allocated_ -= b.size;
    for (B& o : blocks_) {  // merge the free address neighbours of the same segment
      if (o.gone || o.allocated || &o == &b || o.segment != b.segment) continue;
      if (o.addr + o.size == b.addr) {
        b.addr = o.addr;
        b.size += o.size;
        o.gone = true;
      } else if (b.addr + b.size == o.addr) {
        b.size += o.size;
        o.gone = true;
      }
    }
  }
  uint64_t BlockSize(int h) const { return blocks_[h].size; }
  uint64_t allocated_ = 0, peak_allocated_ = 0, reserved_ = 0, peak_reserved_ = 0, segments_ = 0;

 private:
  struct B {
    uint64_t addr, size;
    bool small, allocated, gone;
    uint64_t segment;
  };
  uint64_t max_split_;
  uint64_t next_addr_ = 0;
  std::vector<B> blocks_;
};

TEST(CudaCachingAllocator, EqualsThePlainRulesOnRandomTraffic) {
  for (uint64_t max_split : {std::numeric_limits<uint64_t>::max(), 6 * kMiB, 64 * kMiB}) {
    CudaCachingAllocator a({.max_split_size = max_split});
    PlainAllocator plain(max_split);
    std::mt19937_64 rng(11);
    std::vector<std::pair<int64_t, int>> live;
    for (int i = 0; i < 6000; ++i) {
      if (live.empty() || rng() % 5 < 3) {
        const uint64_t cap = rng() % 4 == 0 ? 48 * kMiB : rng() % 2 ? kSmallSize : 64 * kKiB;
        const uint64_t size = 1 + rng() % cap;
        const int64_t h = a.Malloc(size);
        const int p = plain.Malloc(size);
        ASSERT_EQ(a.BlockSize(h), plain.BlockSize(p)) << "call " << i << " size " << size;
        live.emplace_back(h, p);
      } else {
        const size_t k = rng() % live.size();
        a.Free(live[k].first);
        plain.Free(live[k].second);
        live[k] = live.back();
        live.pop_back();
      }
      ASSERT_EQ(a.stats().allocated_bytes, plain.allocated_) << "call " << i;
      ASSERT_EQ(a.stats().reserved_bytes, plain.reserved_) << "call " << i;
      ASSERT_EQ(a.stats().peak_allocated_bytes, plain.peak_allocated_) << "call " << i;
      ASSERT_EQ(a.stats().peak_reserved_bytes, plain.peak_reserved_) << "call " << i;
      ASSERT_EQ(a.stats().segments, plain.segments_) << "call " << i;
    }
  }
}

// The two pools share no block: a step's reserved bytes are the small pool's requests replayed alone
// plus the large pool's replayed alone (what a search's replay at a batch whose small requests it saw
// already relies on), the small part is small_reserved_bytes, and the allocated peak never exceeds the
// reserved one.
TEST(CudaCachingAllocator, ThePoolsAreIndependent) {
  for (const CudaAllocatorConfig config : {CudaAllocatorConfig{}, CudaAllocatorConfig{.max_split_size = 6 * kMiB},
                                           CudaAllocatorConfig{.expandable_segments = true}}) {
    std::mt19937_64 rng(5);
    std::vector<AllocationEvent> events;
    std::vector<int> live;
    int buffers = 0;
    size_t step_begin = 0;
    for (int i = 0; i < 5000; ++i) {
      if (i == 300) step_begin = events.size();
      const int kind = static_cast<int>(rng() % 10);
      if (live.empty() || kind < 5) {
        const uint64_t cap = rng() % 3 == 0 ? 48 * kMiB : rng() % 2 ? 2 * kSmallSize : 64 * kKiB;
        events.push_back({AllocationEvent::kAlloc, buffers, 1 + rng() % cap});
        live.push_back(buffers++);
      } else if (kind < 7) {
        events.push_back({AllocationEvent::kTemporary, -1, 1 + rng() % (8 * kMiB)});
      } else {
        const size_t k = rng() % live.size();
        events.push_back({AllocationEvent::kFree, live[k], 0});
        live[k] = live.back();
        live.pop_back();
      }
    }
    std::vector<bool> small_buffer(static_cast<size_t>(buffers));
    for (const AllocationEvent& e : events) {
      if (e.kind == AllocationEvent::kAlloc) small_buffer[e.buffer] = CudaRoundSize(e.bytes) <= kSmallSize;
    }
    std::vector<AllocationEvent> pool_events[2];
    size_t pool_step_begin[2] = {0, 0};
    for (size_t i = 0; i < events.size(); ++i) {
      const AllocationEvent& e = events[i];
      const bool small = e.kind == AllocationEvent::kFree ? small_buffer[e.buffer] : CudaRoundSize(e.bytes) <= kSmallSize;
      if (i == step_begin) pool_step_begin[0] = pool_events[0].size(), pool_step_begin[1] = pool_events[1].size();
      pool_events[small ? 1 : 0].push_back(e);
    }
    const ReplayResult whole = ReplayTrainingStep(events, step_begin, static_cast<size_t>(buffers), config);
    const ReplayResult large = ReplayTrainingStep(pool_events[0], pool_step_begin[0], static_cast<size_t>(buffers), config);
    const ReplayResult small = ReplayTrainingStep(pool_events[1], pool_step_begin[1], static_cast<size_t>(buffers), config);
    EXPECT_GT(small.peak_reserved_bytes, 0u);
    EXPECT_GT(large.peak_reserved_bytes, 0u);
    EXPECT_EQ(small.small_reserved_bytes, small.peak_reserved_bytes);
    EXPECT_EQ(large.small_reserved_bytes, 0u);
    EXPECT_EQ(whole.small_reserved_bytes, small.peak_reserved_bytes);
    EXPECT_EQ(whole.peak_reserved_bytes, small.peak_reserved_bytes + large.peak_reserved_bytes);
    EXPECT_LE(whole.peak_allocated_bytes, whole.peak_reserved_bytes);
  }
}

}  // namespace
}  // namespace oomguard::plan
