// Is memory growing for good, and when will it reach the limit?
//
// GrowthDetector keeps a sliding window of (seconds, bytes) samples and
// estimates the growth rate with the Theil–Sen estimator (the median of the
// slopes between every pair of samples), which a few spikes cannot move.
// Growth counts as "sustained" only when all three hold:
//   1. the window's robust slope adds more than max(min_rise_bytes,
//      min_rise_fraction x current level) over the window;
//   2. the baseline rises: the minimum of the last third of the window is
//      above the minimum of the first third by at least half of what the
//      slope predicts (a periodic sawtooth has flat minima: not a leak);
//   3. it is still growing: the slope of the last third is at least 30% of
//      the window's (warm-up followed by a plateau: not a leak).
// Pure and deterministic; not thread-safe (one detector per series).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace oomguard::doctor {

struct MemoryPoint {
  double seconds = 0;
  double bytes = 0;
};

// Median of pairwise slopes (bytes per second); 0 with fewer than 2 points or
// when all points share one time. O(n^2 log n).
double TheilSenSlope(const std::vector<MemoryPoint>& points);

struct GrowthOptions {
  double window_seconds = 60;    // samples older than this leave the window
  size_t max_samples = 240;      // and at most this many (bounds the O(n^2) cost)
  size_t min_samples = 10;       // no verdict before this many samples
  double min_rise_bytes = 4 << 20;
  double min_rise_fraction = 0.02;
};

struct Growth {
  bool sustained = false;
  double bytes_per_second = 0;   // Theil–Sen slope over the window
  double recent_bytes_per_second = 0;  // over the last third
  size_t samples = 0;            // in the window
  double current_bytes = 0;
};

class GrowthDetector {
 public:
  explicit GrowthDetector(GrowthOptions options = {}) : options_(options) {}
  // REQUIRES: seconds does not decrease between calls.
  void Add(double seconds, double bytes);
  Growth Assess() const;

 private:
  GrowthOptions options_;
  std::deque<MemoryPoint> window_;
};

// Seconds until `current` reaches `limit` at `bytes_per_second`; 0 when
// already there, nullopt when not growing.
std::optional<double> SecondsToLimit(double current, double limit, double bytes_per_second);

}  // namespace oomguard::doctor
