#include "oomguard/doctor/growth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace oomguard::doctor {
namespace {

constexpr double kMiB = 1 << 20;

TEST(TheilSen, ExactOnALine) {
  std::vector<MemoryPoint> p;
  for (int i = 0; i < 20; ++i) p.push_back({i * 0.5, 5 + 3.0 * i * 0.5});
  EXPECT_DOUBLE_EQ(TheilSenSlope(p), 3.0);
  EXPECT_EQ(TheilSenSlope({}), 0);
  EXPECT_EQ(TheilSenSlope({{1, 5}}), 0);
  EXPECT_EQ(TheilSenSlope({{1, 5}, {1, 9}}), 0);  // no time between them
}

TEST(TheilSen, SpikesDoNotMoveIt) {
  std::vector<MemoryPoint> p;
  for (int i = 0; i < 30; ++i) p.push_back({double(i), 100 + 2.0 * i});
  p[7].bytes += 1e6;
  p[19].bytes -= 1e6;
  p[25].bytes += 5e5;
  EXPECT_NEAR(TheilSenSlope(p), 2.0, 0.05);
}

Growth Feed(const std::function<double(double)>& bytes, double seconds, double interval, GrowthOptions o = {}) {
  GrowthDetector d(o);
  for (double t = 0; t <= seconds + 1e-9; t += interval) d.Add(t, bytes(t));
  return d.Assess();
}

TEST(GrowthDetector, SteadyLeakIsSustainedWithItsRate) {
  Growth g = Feed([](double t) { return 500 * kMiB + 10 * kMiB * t; }, 30, 1);
  EXPECT_TRUE(g.sustained);
  EXPECT_NEAR(g.bytes_per_second, 10 * kMiB, 1);
}

TEST(GrowthDetector, StaircaseLeakIsSustained) {
  // +64 MiB every 5 s (one training step leaks a batch), sampled every second.
  Growth g = Feed([](double t) { return 1000 * kMiB + 64 * kMiB * std::floor(t / 5); }, 60, 1);
  EXPECT_TRUE(g.sustained);
  EXPECT_NEAR(g.bytes_per_second, 64 * kMiB / 5, 64 * kMiB / 5 * 0.25);
}

TEST(GrowthDetector, WarmUpThenPlateauIsNotALeak) {
  auto warm = [](double t) { return 200 * kMiB + 100 * kMiB * std::min(t, 15.0); };  // 1.5 GiB of warm-up
  EXPECT_FALSE(Feed(warm, 45, 1).sustained);
  // While it still climbs it is growth: the detector is not blind.
  EXPECT_TRUE(Feed(warm, 14, 1).sustained);
}

TEST(GrowthDetector, SawtoothIsNotALeak) {
  // Rises 300 MiB over 4 s, then frees it all: a cache that is flushed.
  auto saw = [](double t) { return 1000 * kMiB + 75 * kMiB * std::fmod(t, 5.0); };
  for (double end : {30.0, 31.0, 32.5, 34.0, 60.0}) EXPECT_FALSE(Feed(saw, end, 0.5).sustained) << end;
}

TEST(GrowthDetector, SawtoothOnALeakIsALeak) {
  auto saw = [](double t) { return 1000 * kMiB + 75 * kMiB * std::fmod(t, 5.0) + 20 * kMiB * t; };
  Growth g = Feed(saw, 60, 0.5);
  EXPECT_TRUE(g.sustained);
}

TEST(GrowthDetector, NoiseOnAFlatLineIsNotALeak) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-2 * kMiB, 2 * kMiB);
  GrowthDetector d;
  for (int i = 0; i < 60; ++i) d.Add(i, 800 * kMiB + noise(rng));
  EXPECT_FALSE(d.Assess().sustained);
}

TEST(GrowthDetector, SlowGrowthBelowTheNoiseFloorIsIgnored) {
  // 1 KiB/s over a minute is 60 KiB: below min_rise_bytes (4 MiB).
  EXPECT_FALSE(Feed([](double t) { return 100 * kMiB + 1024 * t; }, 60, 1).sustained);
}

TEST(GrowthDetector, NoVerdictBeforeMinSamples) {
  GrowthOptions o;
  o.min_samples = 10;
  Growth g = Feed([](double t) { return 100 * kMiB * (1 + t); }, 8, 1, o);  // 9 samples
  EXPECT_EQ(g.samples, 9u);
  EXPECT_FALSE(g.sustained);
  EXPECT_GT(g.bytes_per_second, 0);  // the rate is still reported
}

TEST(GrowthDetector, WindowForgetsOldSamples) {
  GrowthOptions o;
  o.window_seconds = 20;
  // Leaked for 30 s, then flat for 25 s: the window holds only the flat part.
  Growth g = Feed([](double t) { return 100 * kMiB + 10 * kMiB * std::min(t, 30.0); }, 55, 1, o);
  EXPECT_FALSE(g.sustained);
  EXPECT_EQ(g.samples, 21u);
  EXPECT_DOUBLE_EQ(g.bytes_per_second, 0);
}

TEST(SecondsToLimit, Cases) {
  EXPECT_DOUBLE_EQ(*SecondsToLimit(100, 400, 10), 30);
  EXPECT_DOUBLE_EQ(*SecondsToLimit(500, 400, 10), 0);
  EXPECT_FALSE(SecondsToLimit(100, 400, 0).has_value());
  EXPECT_FALSE(SecondsToLimit(100, 400, -5).has_value());
}

}  // namespace
}  // namespace oomguard::doctor
