#include "buffer_cache.h"

#include <gtest/gtest.h>

#include <thread>

#include "feed_test_util.h"

namespace oomguard::feed {
namespace {

using testing::CountingStaging;

TEST(BufferCache, ReusesAnExactSizeAndKeepsItCharged) {
  ByteBudget budget(1000);
  CountingStaging staging;
  BufferCache cache(budget, staging);
  uint8_t* a = nullptr;
  ASSERT_TRUE(cache.Acquire(300, &a));
  EXPECT_EQ(budget.in_use(), 300u);
  cache.Return(a, 300);
  EXPECT_EQ(budget.in_use(), 300u);  // cached bytes still count
  EXPECT_EQ(cache.cached_bytes(), 300u);
  uint8_t* b = nullptr;
  ASSERT_TRUE(cache.Acquire(300, &b));
  EXPECT_EQ(b, a);
  EXPECT_EQ(budget.in_use(), 300u);
  uint8_t* c = nullptr;
  cache.Return(b, 300);
  ASSERT_TRUE(cache.Acquire(200, &c));  // another size: a fresh buffer
  EXPECT_NE(c, a);
  EXPECT_EQ(budget.in_use(), 500u);
  EXPECT_EQ(staging.live(), 500u);
  cache.Return(c, 200);
  cache.Close();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(staging.live(), 0u);
}

TEST(BufferCache, EvictsCachedBuffersInsteadOfWaiting) {
  ByteBudget budget(1000);
  CountingStaging staging;
  BufferCache cache(budget, staging);
  uint8_t* a = nullptr;
  ASSERT_TRUE(cache.Acquire(600, &a));
  cache.Return(a, 600);
  ASSERT_TRUE(cache.Reserve(700));  // only fits once the cached 600 are freed
  EXPECT_EQ(budget.in_use(), 700u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  EXPECT_EQ(staging.live(), 0u);
  EXPECT_EQ(cache.waits(), 0u);
  budget.Release(700);
}

TEST(BufferCache, WaitsForABufferReturnedWhileWaiting) {
  ByteBudget budget(1000);
  CountingStaging staging;
  BufferCache cache(budget, staging);
  uint8_t* a = nullptr;
  ASSERT_TRUE(cache.Acquire(900, &a));
  std::thread t([&] {
    while (budget.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cache.Return(a, 900);  // lands in the cache, still charged
  });
  uint8_t* b = nullptr;
  ASSERT_TRUE(cache.Acquire(500, &b));  // must evict the returned buffer, not hang
  t.join();
  EXPECT_EQ(cache.waits(), 1u);
  EXPECT_EQ(budget.in_use(), 500u);
  cache.Return(b, 500);
}

TEST(BufferCache, FullOrClosedCacheFreesAtOnce) {
  ByteBudget budget(1000);
  CountingStaging staging;
  BufferCache cache(budget, staging, /*max_buffers=*/1);
  uint8_t *a = nullptr, *b = nullptr;
  ASSERT_TRUE(cache.Acquire(100, &a));
  ASSERT_TRUE(cache.Acquire(100, &b));
  cache.Return(a, 100);
  cache.Return(b, 100);  // the cache holds one already
  EXPECT_EQ(cache.cached_bytes(), 100u);
  EXPECT_EQ(budget.in_use(), 100u);
  cache.Close();
  uint8_t* c = nullptr;
  ASSERT_TRUE(cache.Acquire(100, &c));
  cache.Return(c, 100);
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(staging.live(), 0u);
}

}  // namespace
}  // namespace oomguard::feed
