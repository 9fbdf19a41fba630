// Reading a whole file without trusting it: every file oomguard reads whole
// (a fake-GPU file, /proc and /sys entries, configuration) goes through here.
//
// A path may point at /dev/zero, a FIFO nobody writes, or a file of many
// gigabytes; ReadFileBounded refuses what is not a regular file (without
// blocking on open) and stops after max_bytes instead of reading on.
// Thread safety: stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "oomguard/result.h"

namespace oomguard {

// The default bound: far above any /proc, /sys or configuration file.
inline constexpr uint64_t kMaxReadBytes = 16ull << 20;

// The whole content of `path`. Fails with "<path>: <strerror>", "<path>: not
// a regular file" or "<path>: larger than 16.00 MiB". /proc and /sys entries
// are regular files (of size 0) and are read to their end.
Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes = kMaxReadBytes);

}  // namespace oomguard
