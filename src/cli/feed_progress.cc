#include "feed_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "oomguard/units.h"

namespace oomguard::cli {

std::string FormatEta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e8) return "--";
  const long long s = std::llround(seconds);
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%lld s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  }
  return buf;
}

std::string FeedStatus(const FeedProgress& p) {
  const double secs = std::max(p.seconds, 1e-9);
  const double rate = static_cast<double>(p.done) / secs;  // images and skips per second
  std::string eta = "--";
  if (p.total > 0 && p.done >= p.total) {
    eta = "0 s";
  } else if (p.total > 0 && p.done > 0 && rate > 0) {
    eta = FormatEta(static_cast<double>(p.total - p.done) / rate);
  }
  char speed[96];
  std::snprintf(speed, sizeof speed, "%.0f img/s, %.1f MB/s", static_cast<double>(p.images) / secs,
                static_cast<double>(p.file_bytes_read) / 1e6 / secs);
  const double share =
      p.budget_bytes ? 100.0 * static_cast<double>(p.in_flight_bytes) / static_cast<double>(p.budget_bytes) : 0;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.0f %%", share);
  return "epoch " + std::to_string(p.epoch) + " of " + std::to_string(p.epochs) + " · ETA " + eta + " · " + speed +
         " · in flight " + FormatBytes(p.in_flight_bytes) + " of " + FormatBytes(p.budget_bytes) + " (" + budget + ")";
}

}  // namespace oomguard::cli
