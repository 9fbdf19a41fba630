#include "oomguard/feed/byte_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace oomguard::feed {
namespace {

using namespace std::chrono_literals;

// Waits (without a timing assumption) until n reservations are waiting.
void AwaitWaiters(const ByteBudget& b, size_t n) {
  while (b.waiting() < n) std::this_thread::sleep_for(1ms);
}

TEST(ByteBudget, ReserveAndReleaseTrackInUseAndPeak) {
  ByteBudget b(100);
  ASSERT_TRUE(b.Reserve(60));
  ASSERT_TRUE(b.Reserve(40));
  EXPECT_EQ(b.in_use(), 100u);
  EXPECT_FALSE(b.TryReserve(1));
  b.Release(70);
  EXPECT_EQ(b.in_use(), 30u);
  EXPECT_TRUE(b.TryReserve(70));
  EXPECT_EQ(b.peak(), 100u);
  b.Release(100);
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_EQ(b.peak(), 100u);
}

TEST(ByteBudget, RequestLargerThanTheWholeBudgetFailsAtOnce) {
  ByteBudget b(1024);
  Status s = b.Reserve(4096);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(),
            "needs 4.00 KiB (4096 bytes), more than the whole budget of 1.00 KiB (1024 bytes)");
  EXPECT_EQ(b.in_use(), 0u);
  EXPECT_TRUE(b.Reserve(1024));  // exactly the capacity is fine
}

TEST(ByteBudget, ReserveBlocksUntilReleased) {
  ByteBudget b(100);
  ASSERT_TRUE(b.Reserve(80));
  std::atomic<bool> got{false};
  std::thread t([&] {
    ASSERT_TRUE(b.Reserve(50));
    got = true;
  });
  AwaitWaiters(b, 1);
  EXPECT_FALSE(got.load());
  EXPECT_TRUE(b.Stalled());
  b.Release(80);
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(b.in_use(), 50u);
  EXPECT_EQ(b.waits(), 1u);
}

TEST(ByteBudget, HysteresisHoldsAWaiterUntilSlackIsFree) {
  ByteBudget b(100, /*resume_slack=*/30);
  ASSERT_TRUE(b.Reserve(90));
  std::atomic<bool> got{false};
  std::thread t([&] {
    ASSERT_TRUE(b.Reserve(20));
    got = true;
  });
  AwaitWaiters(b, 1);
  b.Release(20);  // 70 in use: 20 fits, but not with 30 to spare
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(got.load());
  EXPECT_FALSE(b.Stalled());  // it would fit without hysteresis
  b.Release(30);  // 40 in use: 40 + 20 + 30 <= 100
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(b.in_use(), 60u);
}

TEST(ByteBudget, ResumeWaitersIgnoresTheSlack) {
  ByteBudget b(100, 30);
  ASSERT_TRUE(b.Reserve(90));
  std::atomic<bool> got{false};
  std::thread t([&] {
    ASSERT_TRUE(b.Reserve(20));
    got = true;
  });
  AwaitWaiters(b, 1);
  b.Release(20);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(got.load());
  b.ResumeWaiters();
  t.join();
  EXPECT_EQ(b.in_use(), 90u);
}

TEST(ByteBudget, SlackIsCappedSoABigRequestFitsAnEmptyBudget) {
  ByteBudget b(100, 50);
  ASSERT_TRUE(b.Reserve(10));
  std::thread t([&] { ASSERT_TRUE(b.Reserve(95)); });
  std::this_thread::sleep_for(20ms);
  b.Release(10);
  t.join();
  EXPECT_EQ(b.in_use(), 95u);
}

TEST(ByteBudget, WaitersAreServedInArrivalOrder) {
  ByteBudget b(100);
  ASSERT_TRUE(b.Reserve(100));
  std::thread big([&] { ASSERT_TRUE(b.Reserve(80)); });
  AwaitWaiters(b, 1);
  std::thread small([&] { ASSERT_TRUE(b.Reserve(10)); });
  AwaitWaiters(b, 2);
  EXPECT_FALSE(b.TryReserve(1));  // someone is waiting: no overtaking
  b.Release(30);  // 70 in use: the small one would fit, but the big one is first
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(b.waiting(), 2u);
  EXPECT_EQ(b.in_use(), 70u);
  b.Release(70);  // 0 in use: the big one, then the small one
  big.join();
  small.join();
  EXPECT_EQ(b.waiting(), 0u);
  EXPECT_EQ(b.in_use(), 90u);
}

TEST(ByteBudget, CloseWakesWaitersWithAnError) {
  ByteBudget b(10);
  ASSERT_TRUE(b.Reserve(10));
  Status result;
  std::thread t([&] { result = b.Reserve(5); });
  AwaitWaiters(b, 1);
  b.Close();
  t.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), "the budget is closed");
  EXPECT_FALSE(b.Reserve(1));
}

// Many threads reserve and release random amounts; the budget is never
// exceeded and ends empty.
TEST(ByteBudget, ConcurrentReserversNeverExceedCapacity) {
  constexpr uint64_t kCapacity = 1000;
  ByteBudget b(kCapacity, 100);
  std::atomic<uint64_t> live{0};
  std::atomic<bool> exceeded{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 2000; ++i) {
        uint64_t n = 1 + rng() % 400;
        ASSERT_TRUE(b.Reserve(n));
        if (live.fetch_add(n) + n > kCapacity) exceeded = true;
        live.fetch_sub(n);
        b.Release(n);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(exceeded.load());
  EXPECT_LE(b.peak(), kCapacity);
  EXPECT_EQ(b.in_use(), 0u);
}

}  // namespace
}  // namespace oomguard::feed
