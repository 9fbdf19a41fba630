#include "oomguard/mr/growth.h"

#include <algorithm>

namespace oomguard::mr {

uint64_t NextRegionBytes(uint64_t needed, uint64_t reserved, uint64_t limit, uint64_t initial,
                         double growth_factor, uint64_t granule) {
  uint64_t headroom = limit > reserved ? limit - reserved : 0;
  if (needed > headroom) return 0;
  uint64_t target = reserved == 0 ? initial : static_cast<uint64_t>(static_cast<double>(reserved) * growth_factor);
  target = RoundUp(std::max(target, needed), granule);
  return std::min(target, RoundDown(headroom, granule) < needed ? headroom : RoundDown(headroom, granule));
}

std::vector<uint64_t> BackoffSizes(uint64_t first, uint64_t needed, double factor, uint64_t granule) {
  std::vector<uint64_t> sizes;
  uint64_t size = first;
  while (size > needed) {
    sizes.push_back(size);
    uint64_t next = RoundDown(static_cast<uint64_t>(static_cast<double>(size) * factor), granule);
    if (next >= size) next = size - 1;  // never stall: strictly decreasing
    size = next;
  }
  sizes.push_back(needed);
  return sizes;
}

}  // namespace oomguard::mr
