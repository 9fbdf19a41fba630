#include "best_fit_blocks.h"

#include <algorithm>
#include <bit>

namespace oomguard::mr {

BestFitBlocks::AddressTable::AddressTable() : slots_(64, {0, 0}), shift_(64 - 6) {}

std::size_t BestFitBlocks::AddressTable::locate(uintptr_t addr) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = slot(addr);; s = (s + 1) & mask) {
    if (slots_[s].first == addr) return s;
    if (slots_[s].first == 0) return kAbsent;
  }
}

void BestFitBlocks::AddressTable::insert(uintptr_t addr, uint32_t index) {
  if (2 * (size_ + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t s = slot(addr);
  while (slots_[s].first != 0) s = (s + 1) & mask;
  slots_[s] = {addr, index};
  ++size_;
}

void BestFitBlocks::AddressTable::erase_slot(std::size_t hole) {
  const std::size_t mask = slots_.size() - 1;
  // Backward shift: move later entries of the probe run into the hole when
  // their home slot does not lie (cyclically) between the hole and them.
  for (std::size_t s = (hole + 1) & mask; slots_[s].first != 0; s = (s + 1) & mask) {
    const std::size_t home = slot(slots_[s].first);
    if (((s - home) & mask) >= ((s - hole) & mask)) {
      slots_[hole] = slots_[s];
      hole = s;
    }
  }
  slots_[hole] = {0, 0};
  --size_;
}

void BestFitBlocks::AddressTable::grow() {
  std::vector<std::pair<uintptr_t, uint32_t>> old(2 * slots_.size(), {0, 0});
  old.swap(slots_);
  --shift_;
  size_ = 0;
  for (const auto& [addr, index] : old) {
    if (addr != 0) insert(addr, index);
  }
}

BestFitBlocks::BestFitBlocks() : small_head_(kSmallLists, kNil) {}

uint32_t BestFitBlocks::new_block(const Block& b) {
  if (spare_.empty()) {
    blocks_.push_back(b);
    return static_cast<uint32_t>(blocks_.size() - 1);
  }
  uint32_t i = spare_.back();
  spare_.pop_back();
  blocks_[i] = b;
  return i;
}

uint32_t BestFitBlocks::insert_after(uint32_t i, uint64_t bytes) {
  const Block& b = blocks_[i];
  const uint32_t j = new_block({b.addr + b.bytes, bytes, i, b.next, kNil, kNil, b.region, false});
  Block& before = blocks_[i];  // new_block may have moved the slab
  if (before.next != kNil) {
    blocks_[before.next].prev = j;
  } else {
    regions_[before.region].last = j;
  }
  before.next = j;
  return j;
}

void BestFitBlocks::absorb_next(uint32_t keep) {
  Block& k = blocks_[keep];
  const Block& gone = blocks_[k.next];
  const uint32_t n = k.next;
  k.bytes += gone.bytes;
  k.next = gone.next;
  if (k.next != kNil) {
    blocks_[k.next].prev = keep;
  } else {
    regions_[k.region].last = keep;
  }
  drop_block(n);
}

std::map<uintptr_t, uint32_t>::iterator BestFitBlocks::remove_region(std::map<uintptr_t, uint32_t>::iterator it) {
  drop_block(regions_[it->second].first);
  if (growing_region_ == it->second) growing_region_ = kNil;
  spare_regions_.push_back(it->second);
  return region_by_base_.erase(it);
}

void BestFitBlocks::insert_free(uint32_t i) {
  Block& b = blocks_[i];
  b.free = true;
  ++free_count_;
  if (b.next == kNil && b.region == growing_region_) {
    wilderness_ = i;
    return;
  }
  if (b.bytes >= kSmallLimit) {
    large_.emplace(std::pair{b.bytes, b.addr}, i);
    return;
  }
  const uint32_t g = static_cast<uint32_t>(b.bytes / kGranule);
  b.prev_free = kNil;
  b.next_free = small_head_[g];
  if (b.next_free != kNil) blocks_[b.next_free].prev_free = i;
  small_head_[g] = i;
  small_bits_[g / 64] |= 1ull << (g % 64);
  small_summary_ |= 1ull << (g / 64);
}

void BestFitBlocks::erase_free(uint32_t i) {
  Block& b = blocks_[i];
  b.free = false;
  --free_count_;
  if (i == wilderness_) {
    wilderness_ = kNil;
    return;
  }
  if (b.bytes >= kSmallLimit) {
    large_.erase(std::pair{b.bytes, b.addr});
    return;
  }
  const uint32_t g = static_cast<uint32_t>(b.bytes / kGranule);
  if (b.prev_free != kNil) {
    blocks_[b.prev_free].next_free = b.next_free;
  } else {
    small_head_[g] = b.next_free;
  }
  if (b.next_free != kNil) blocks_[b.next_free].prev_free = b.prev_free;
  if (small_head_[g] == kNil) {
    small_bits_[g / 64] &= ~(1ull << (g % 64));
    if (small_bits_[g / 64] == 0) small_summary_ &= ~(1ull << (g / 64));
  }
}

uint32_t BestFitBlocks::first_small_list_at_or_above(uint32_t g) const {
  uint32_t w = g / 64;
  uint64_t bits = small_bits_[w] & (~0ull << (g % 64));
  if (bits == 0) {
    const uint64_t words = w + 1 < kWords ? small_summary_ & (~0ull << (w + 1)) : 0;
    if (words == 0) return kSmallLists;
    w = static_cast<uint32_t>(std::countr_zero(words));
    bits = small_bits_[w];
  }
  return w * 64 + static_cast<uint32_t>(std::countr_zero(bits));
}

uint32_t BestFitBlocks::find_fit(uint64_t bytes) const {
  if (bytes < kSmallLimit) {
    const uint32_t g = first_small_list_at_or_above(static_cast<uint32_t>(bytes / kGranule));
    if (g < kSmallLists) return small_head_[g];
  }
  auto it = large_.lower_bound({bytes, 0});
  if (it != large_.end()) return it->second;
  return wilderness_ != kNil && blocks_[wilderness_].bytes >= bytes ? wilderness_ : kNil;
}

void BestFitBlocks::add_region(uintptr_t base, uint64_t bytes, bool grows_at_end) {
  uint32_t r;
  if (spare_regions_.empty()) {
    r = static_cast<uint32_t>(regions_.size());
    regions_.push_back({});
  } else {
    r = spare_regions_.back();
    spare_regions_.pop_back();
  }
  const uint32_t i = new_block({base, bytes, kNil, kNil, kNil, kNil, r, false});
  regions_[r] = {base, bytes, i, i};
  region_by_base_.emplace(base, r);
  if (grows_at_end) growing_region_ = r;
  insert_free(i);
  free_bytes_ += bytes;
  reserved_bytes_ += bytes;
}

std::optional<uintptr_t> BestFitBlocks::allocate(uint64_t bytes) {
  const uint32_t i = find_fit(bytes);
  if (i == kNil) return std::nullopt;
  erase_free(i);
  if (const uint64_t rest = blocks_[i].bytes - bytes; rest > 0) {
    blocks_[i].bytes = bytes;
    insert_free(insert_after(i, rest));
  }
  const uintptr_t addr = blocks_[i].addr;
  allocated_.insert(addr, i);
  free_bytes_ -= bytes;
  allocated_bytes_ += bytes;
  ++allocated_count_;
  return addr;
}

std::optional<uint64_t> BestFitBlocks::free(uintptr_t addr, std::optional<uint64_t> expected_bytes) {
  const std::size_t slot = allocated_.locate(addr);
  if (slot == AddressTable::kAbsent) return std::nullopt;
  uint32_t i = allocated_.at(slot);
  const uint64_t bytes = blocks_[i].bytes;
  if (expected_bytes && *expected_bytes != bytes) return bytes;
  allocated_.erase_slot(slot);
  free_bytes_ += bytes;
  allocated_bytes_ -= bytes;
  --allocated_count_;
  // Merge with the next block, then into the previous one.
  if (const uint32_t n = blocks_[i].next; n != kNil && blocks_[n].free) {
    erase_free(n);
    absorb_next(i);
  }
  if (const uint32_t p = blocks_[i].prev; p != kNil && blocks_[p].free) {
    erase_free(p);
    absorb_next(p);
    i = p;
  }
  insert_free(i);
  return bytes;
}

std::optional<uint64_t> BestFitBlocks::allocated_size(uintptr_t addr) const {
  const std::size_t slot = allocated_.locate(addr);
  if (slot == AddressTable::kAbsent) return std::nullopt;
  return blocks_[allocated_.at(slot)].bytes;
}

uint64_t BestFitBlocks::largest_free_block() const {
  uint64_t largest = wilderness_ != kNil ? blocks_[wilderness_].bytes : 0;
  if (!large_.empty()) return std::max(largest, large_.rbegin()->first.first);
  if (small_summary_ == 0) return largest;
  const int w = 63 - std::countl_zero(small_summary_);
  const int bit = 63 - std::countl_zero(small_bits_[w]);
  return std::max(largest, static_cast<uint64_t>(w * 64 + bit) * kGranule);
}

std::vector<BestFitBlocks::Region> BestFitBlocks::regions() const {
  std::vector<Region> out;
  out.reserve(region_by_base_.size());
  for (const auto& [base, r] : region_by_base_) out.push_back({base, regions_[r].bytes});
  return out;
}

std::vector<BestFitBlocks::Region> BestFitBlocks::take_free_regions() {
  std::vector<Region> taken;
  for (auto it = region_by_base_.begin(); it != region_by_base_.end();) {
    const RegionInfo& r = regions_[it->second];
    const uint32_t i = r.first;
    if (blocks_[i].free && blocks_[i].bytes == r.bytes) {
      erase_free(i);
      free_bytes_ -= r.bytes;
      reserved_bytes_ -= r.bytes;
      taken.push_back({r.base, r.bytes});
      it = remove_region(it);
    } else {
      ++it;
    }
  }
  return taken;
}

void BestFitBlocks::extend_region(uintptr_t base, uint64_t bytes) {
  RegionInfo& r = regions_[region_by_base_.at(base)];
  const uint32_t last = r.last;
  if (blocks_[last].free) {
    erase_free(last);
    blocks_[last].bytes += bytes;
    insert_free(last);
  } else {
    insert_free(insert_after(last, bytes));
  }
  r.bytes += bytes;
  free_bytes_ += bytes;
  reserved_bytes_ += bytes;
}

uint64_t BestFitBlocks::free_tail(uintptr_t base) const {
  auto it = region_by_base_.find(base);
  if (it == region_by_base_.end()) return 0;
  const Block& last = blocks_[regions_[it->second].last];
  return last.free ? last.bytes : 0;
}

void BestFitBlocks::trim_region(uintptr_t base, uint64_t bytes) {
  auto it = region_by_base_.find(base);
  RegionInfo& r = regions_[it->second];
  const uint32_t last = r.last;
  erase_free(last);
  free_bytes_ -= bytes;
  reserved_bytes_ -= bytes;
  r.bytes -= bytes;
  if (blocks_[last].bytes > bytes) {
    blocks_[last].bytes -= bytes;
    insert_free(last);
  } else if (r.bytes == 0) {
    remove_region(it);
  } else {
    const uint32_t prev = blocks_[last].prev;
    blocks_[prev].next = kNil;
    r.last = prev;
    drop_block(last);
  }
}

}  // namespace oomguard::mr
