// SelfStatusBytes: this process's memory figures from /proc/self/status, for
// commands and benchmarks that report their own footprint.
#pragma once

#include <cstdint>
#include <string_view>

namespace oomguard {

// The value of a "VmHWM:   123 kB" line of /proc/self/status, in bytes; 0 when
// the key is absent or /proc is not mounted. Keys: VmRSS (resident now),
// VmHWM (peak resident), VmSwap, VmLck...
uint64_t SelfStatusBytes(std::string_view key);

}  // namespace oomguard
