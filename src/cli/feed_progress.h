// The status line of `oomguard feed`'s progress bar: which epoch, how long is
// left, the speed, and the bytes in flight against the budget. A pure function
// so it is tested without a terminal.
#pragma once

#include <cstdint>
#include <string>

namespace oomguard::cli {

struct FeedProgress {
  uint64_t done = 0;   // images delivered or skipped so far, all epochs
  uint64_t total = 0;  // images to deliver over all epochs (0: unknown)
  uint32_t epoch = 1;  // the epoch being read, 1-based
  uint32_t epochs = 1;
  double seconds = 0;  // since the feed started
  uint64_t images = 0;
  uint64_t file_bytes_read = 0;
  uint64_t in_flight_bytes = 0;  // the budget's bytes in use now
  uint64_t budget_bytes = 0;
};

// "1:05", "42 s", "1:02:03"; "--" when not finite or negative.
std::string FormatEta(double seconds);

// "epoch 2 of 3 · ETA 0:42 · 412 img/s, 38.1 MB/s · in flight 310.00 MiB of 512.00 MiB (61 %)"
std::string FeedStatus(const FeedProgress& p);

}  // namespace oomguard::cli
