#include "oomguard/mr/growth.h"

#include <gtest/gtest.h>

namespace oomguard::mr {
namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;

TEST(NextRegionBytes, FirstRegionIsTheInitialSizeOrTheRequestIfLarger) {
  EXPECT_EQ(NextRegionBytes(256, 0, 8 * GiB, 2 * MiB, 1.0), 2 * MiB);
  EXPECT_EQ(NextRegionBytes(3 * MiB, 0, 8 * GiB, 2 * MiB, 1.0), 3 * MiB);
}

TEST(NextRegionBytes, LaterRegionsDoubleTheTotal) {
  EXPECT_EQ(NextRegionBytes(256, 2 * MiB, 8 * GiB, 2 * MiB, 1.0), 2 * MiB);
  EXPECT_EQ(NextRegionBytes(256, 6 * MiB, 8 * GiB, 2 * MiB, 1.0), 6 * MiB);
  EXPECT_EQ(NextRegionBytes(10 * MiB, 6 * MiB, 8 * GiB, 2 * MiB, 1.0), 10 * MiB);  // the request wins
  EXPECT_EQ(NextRegionBytes(256, 8 * MiB, 8 * GiB, 2 * MiB, 0.125), 1 * MiB);      // gentler growth
}

TEST(NextRegionBytes, NeverPassesTheLimit) {
  EXPECT_EQ(NextRegionBytes(256, 5 * GiB, 8 * GiB, 2 * MiB, 1.0), 3 * GiB);
  EXPECT_EQ(NextRegionBytes(3 * GiB, 5 * GiB, 8 * GiB, 2 * MiB, 1.0), 3 * GiB);
  EXPECT_EQ(NextRegionBytes(3 * GiB + 256, 5 * GiB, 8 * GiB, 2 * MiB, 1.0), 0u);  // does not fit
  EXPECT_EQ(NextRegionBytes(9 * GiB, 0, 8 * GiB, 2 * MiB, 1.0), 0u);
}

TEST(NextRegionBytes, RoundsToTheGranule) {
  EXPECT_EQ(NextRegionBytes(256, 1000, kNoLimit, 1000, 1.0), 1024u);
}

TEST(BackoffSizes, TensorFlowPinnedSequenceAlwaysTerminatesAtTheRequest) {
  // The article: TensorFlow asked cuMemHostAlloc for 8589934592 bytes and backed off by 0.9x.
  std::vector<uint64_t> sizes = BackoffSizes(8589934592ull, 1ull << 30, 0.9);
  ASSERT_GE(sizes.size(), 4u);
  EXPECT_EQ(sizes[0], 8589934592ull);
  EXPECT_EQ(sizes[1], 7730940928ull);  // the article's second request
  // Computed independently: floor(prev * 0.9 / 256) * 256.
  EXPECT_EQ(sizes[2], 6957846784ull);
  EXPECT_EQ(sizes[3], 6262062080ull);
  EXPECT_EQ(sizes.back(), 1ull << 30);
  EXPECT_EQ(sizes.size(), 21u);  // 8 GiB * 0.9^19 > 1 GiB > 8 GiB * 0.9^20
  for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_LT(sizes[i], sizes[i - 1]);
}

TEST(BackoffSizes, SmallSizesStillTerminate) {
  // Rounding to 256 bytes makes small steps stall in a naive loop; here the sequence still ends.
  std::vector<uint64_t> sizes = BackoffSizes(300, 1, 0.9);
  EXPECT_EQ(sizes, (std::vector<uint64_t>{300, 256, 1}));
  EXPECT_EQ(BackoffSizes(512, 512, 0.9), std::vector<uint64_t>{512});
  EXPECT_EQ(BackoffSizes(100, 512, 0.9), std::vector<uint64_t>{512});
}

TEST(BackoffSizes, HalvingForDevices) {
  EXPECT_EQ(BackoffSizes(8 * MiB, 3 * MiB, 0.5), (std::vector<uint64_t>{8 * MiB, 4 * MiB, 3 * MiB}));
}

}  // namespace
}  // namespace oomguard::mr
