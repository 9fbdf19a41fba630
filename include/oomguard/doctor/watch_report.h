// The files `oomguard watch` writes at the end: the raw samples as CSV and an
// SVG timeline of every series with the limits drawn and the prediction
// marked. Pure functions of a WatchSummary; thread-safe.
#pragma once

#include <string>

#include "oomguard/doctor/watcher.h"

namespace oomguard::doctor {

// Header: seconds,rss_bytes,swap_bytes,locked_bytes,pinned_bytes,host_bytes,
// host_limit_bytes,gpu_bytes,gpu_limit_bytes,processes; one line per sample.
std::string SamplesCsv(const WatchSummary& summary);

// A self-contained SVG (no scripts, no external references).
std::string TimelineSvg(const WatchSummary& summary);

}  // namespace oomguard::doctor
