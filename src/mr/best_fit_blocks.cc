#include "best_fit_blocks.h"

namespace oomguard::mr {

void BestFitBlocks::add_region(uintptr_t base, uint64_t bytes) {
  regions_.emplace(base, bytes);
  auto [it, inserted] = by_addr_.emplace(base, Block{bytes, base, true, {}});
  insert_free(it);
  free_bytes_ += bytes;
  reserved_bytes_ += bytes;
}

std::optional<uintptr_t> BestFitBlocks::allocate(uint64_t bytes) {
  auto fit = by_size_.lower_bound({bytes, 0});
  if (fit == by_size_.end()) return std::nullopt;
  // Reuse the set node for the remainder instead of allocating a new one.
  auto node = by_size_.extract(fit);
  uintptr_t addr = node.value().second;
  auto it = by_addr_.find(addr);
  Block& block = it->second;
  if (block.bytes > bytes) {
    uint64_t rest = block.bytes - bytes;
    auto rest_it = by_addr_.emplace_hint(std::next(it), addr + bytes, Block{rest, block.region, true, {}});
    node.value() = {rest, rest_it->first};
    rest_it->second.in_size_set = by_size_.insert(std::move(node)).position;
    block.bytes = bytes;
  }
  block.free = false;
  free_bytes_ -= bytes;
  allocated_bytes_ += bytes;
  ++allocated_count_;
  return addr;
}

std::optional<uint64_t> BestFitBlocks::free(uintptr_t addr, std::optional<uint64_t> expected_bytes) {
  auto it = by_addr_.find(addr);
  if (it == by_addr_.end() || it->second.free) return std::nullopt;
  const uint64_t bytes = it->second.bytes;
  if (expected_bytes && *expected_bytes != bytes) return bytes;
  it->second.free = true;
  free_bytes_ += bytes;
  allocated_bytes_ -= bytes;
  --allocated_count_;
  // Merge with the next block.
  auto next = std::next(it);
  if (next != by_addr_.end() && next->second.free && next->second.region == it->second.region &&
      it->first + it->second.bytes == next->first) {
    erase_free(next);
    it->second.bytes += next->second.bytes;
    by_addr_.erase(next);
  }
  // Merge with the previous block.
  if (it != by_addr_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.free && prev->second.region == it->second.region &&
        prev->first + prev->second.bytes == it->first) {
      erase_free(prev);
      prev->second.bytes += it->second.bytes;
      by_addr_.erase(it);
      it = prev;
    }
  }
  insert_free(it);
  return bytes;
}

std::optional<uint64_t> BestFitBlocks::allocated_size(uintptr_t addr) const {
  auto it = by_addr_.find(addr);
  if (it == by_addr_.end() || it->second.free) return std::nullopt;
  return it->second.bytes;
}

std::vector<BestFitBlocks::Region> BestFitBlocks::take_free_regions() {
  std::vector<Region> taken;
  for (auto r = regions_.begin(); r != regions_.end();) {
    auto it = by_addr_.find(r->first);
    if (it != by_addr_.end() && it->second.free && it->second.bytes == r->second) {
      erase_free(it);
      by_addr_.erase(it);
      free_bytes_ -= r->second;
      reserved_bytes_ -= r->second;
      taken.push_back({r->first, r->second});
      r = regions_.erase(r);
    } else {
      ++r;
    }
  }
  return taken;
}

}  // namespace oomguard::mr
