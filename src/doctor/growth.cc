#include "oomguard/doctor/growth.h"

#include <algorithm>
#include <cmath>

namespace oomguard::doctor {

double TheilSenSlope(const std::vector<MemoryPoint>& points) {
  std::vector<double> slopes;
  slopes.reserve(points.size() * (points.size() - (points.empty() ? 0 : 1)) / 2);
  for (size_t i = 0; i < points.size(); ++i) {
    for (size_t j = i + 1; j < points.size(); ++j) {
      double dt = points[j].seconds - points[i].seconds;
      if (dt > 0) slopes.push_back((points[j].bytes - points[i].bytes) / dt);
    }
  }
  if (slopes.empty()) return 0;
  size_t mid = slopes.size() / 2;
  std::nth_element(slopes.begin(), slopes.begin() + mid, slopes.end());
  double upper = slopes[mid];
  if (slopes.size() % 2 == 1) return upper;
  double lower = *std::max_element(slopes.begin(), slopes.begin() + mid);
  return (lower + upper) / 2;
}

void GrowthDetector::Add(double seconds, double bytes) {
  window_.push_back({seconds, bytes});
  while (window_.size() > options_.max_samples ||
         (window_.size() > 1 && seconds - window_.front().seconds > options_.window_seconds)) {
    window_.pop_front();
  }
}

Growth GrowthDetector::Assess() const {
  Growth g;
  g.samples = window_.size();
  if (window_.empty()) return g;
  g.current_bytes = window_.back().bytes;
  std::vector<MemoryPoint> all(window_.begin(), window_.end());
  g.bytes_per_second = TheilSenSlope(all);
  if (all.size() < std::max<size_t>(options_.min_samples, 3)) return g;

  size_t third = all.size() / 3;
  std::vector<MemoryPoint> first(all.begin(), all.begin() + third);
  std::vector<MemoryPoint> last(all.end() - third, all.end());
  g.recent_bytes_per_second = TheilSenSlope(last);

  double span = all.back().seconds - all.front().seconds;
  double rise = g.bytes_per_second * span;
  double needed = std::max(options_.min_rise_bytes, options_.min_rise_fraction * std::fabs(g.current_bytes));
  auto min_of = [](const std::vector<MemoryPoint>& v) {
    double m = v.front().bytes;
    for (const MemoryPoint& p : v) m = std::min(m, p.bytes);
    return m;
  };
  auto mid_time = [](const std::vector<MemoryPoint>& v) { return (v.front().seconds + v.back().seconds) / 2; };
  double baseline_rise = min_of(last) - min_of(first);
  double expected_rise = g.bytes_per_second * (mid_time(last) - mid_time(first));
  g.sustained = g.bytes_per_second > 0 && rise > needed && baseline_rise >= 0.5 * expected_rise &&
                g.recent_bytes_per_second >= 0.3 * g.bytes_per_second;
  return g;
}

std::optional<double> SecondsToLimit(double current, double limit, double bytes_per_second) {
  if (current >= limit) return 0.0;
  if (bytes_per_second <= 0) return std::nullopt;
  return (limit - current) / bytes_per_second;
}

}  // namespace oomguard::doctor
