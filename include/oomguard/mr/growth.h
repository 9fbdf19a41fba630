// Growth and back-off: small pure functions that decide how much an arena asks
// its upstream for. No state, no I/O; unit-tested without a GPU.
#pragma once

#include <cstdint>
#include <vector>

namespace oomguard::mr {

inline constexpr uint64_t kNoLimit = UINT64_MAX;

inline constexpr uint64_t RoundUp(uint64_t bytes, uint64_t granule) {
  return (bytes + granule - 1) / granule * granule;
}
inline constexpr uint64_t RoundDown(uint64_t bytes, uint64_t granule) { return bytes / granule * granule; }

// Size of the next region an on-demand arena asks for, given that `needed`
// bytes (already rounded) did not fit in what it holds. The first region is
// max(needed, initial); later ones grow the total by `growth_factor`
// (1.0 = double: next = reserved), never below `needed`, never past `limit`.
// Returns 0 when `needed` does not fit under the limit at all.
// REQUIRES: reserved <= limit, growth_factor >= 0.
uint64_t NextRegionBytes(uint64_t needed, uint64_t reserved, uint64_t limit, uint64_t initial,
                         double growth_factor, uint64_t granule = 256);

// The sizes to try when the upstream refuses `first`: first, first*factor,
// first*factor^2, ... (each rounded down to `granule`) while above `needed`,
// then `needed` itself, then stop. Always finite: strictly decreasing, ends at
// `needed`. With first = 8589934592, factor 0.9: 8589934592, 7730940928, ...
// (TensorFlow's pinned pool back-off, which here always terminates).
// REQUIRES: 0 < factor < 1, needed > 0. If first <= needed: {needed}.
std::vector<uint64_t> BackoffSizes(uint64_t first, uint64_t needed, double factor, uint64_t granule = 256);

}  // namespace oomguard::mr
