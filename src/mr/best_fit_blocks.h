// BestFitBlocks: the blocks of an arena's regions, free and allocated.
//
// Every block is indexed by address (a std::map, so address neighbours are one
// step away); free blocks are also indexed by (size, address) in a std::set, so
// best fit is one lower_bound. Allocation splits the chosen block; freeing
// merges with both address neighbours of the same region. Regions are never
// merged with each other (each goes back to the upstream whole).
//
// Not thread safe: the arena holds a lock around every call.
// Sizes and addresses are already rounded by the caller.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace oomguard::mr {

class BestFitBlocks {
 public:
  struct Region {
    uintptr_t base;
    uint64_t bytes;
  };

  // Adds a region as one free block.
  void add_region(uintptr_t base, uint64_t bytes);

  // Best fit: the smallest free block of at least `bytes`, split so that the
  // allocation is exactly `bytes`. Returns its address, or nullopt.
  std::optional<uintptr_t> allocate(uint64_t bytes);

  // Frees the allocated block starting at `addr`, merging with free neighbours.
  // Returns the block's size, or nullopt when `addr` is not the start of an
  // allocated block (unknown pointer or double free); nothing changes then.
  // With `expected_bytes`, a block of another size is not freed either (the
  // size is returned so the caller can say what it was).
  std::optional<uint64_t> free(uintptr_t addr, std::optional<uint64_t> expected_bytes = std::nullopt);

  // Size of the allocated block at `addr`, or nullopt.
  std::optional<uint64_t> allocated_size(uintptr_t addr) const;

  // Removes every region that is entirely free and returns them.
  std::vector<Region> take_free_regions();

  uint64_t free_bytes() const { return free_bytes_; }
  uint64_t allocated_bytes() const { return allocated_bytes_; }
  uint64_t reserved_bytes() const { return reserved_bytes_; }
  uint64_t largest_free_block() const { return by_size_.empty() ? 0 : by_size_.rbegin()->first; }
  std::size_t free_block_count() const { return by_size_.size(); }
  std::size_t allocated_block_count() const { return allocated_count_; }
  std::size_t region_count() const { return regions_.size(); }
  const std::map<uintptr_t, uint64_t>& regions() const { return regions_; }

  // Calls f(address, bytes) for every allocated block, in address order.
  template <typename F>
  void for_each_allocated(F f) const {
    for (const auto& [addr, block] : by_addr_) {
      if (!block.free) f(addr, block.bytes);
    }
  }

 private:
  using SizeSet = std::pmr::set<std::pair<uint64_t, uintptr_t>>;
  struct Block {
    uint64_t bytes;
    uintptr_t region;  // base address of the region this block belongs to
    bool free;
    SizeSet::iterator in_size_set;  // valid while free: erasing needs no search
  };
  using AddrMap = std::pmr::map<uintptr_t, Block>;

  void insert_free(AddrMap::iterator it) {
    it->second.in_size_set = by_size_.emplace(it->second.bytes, it->first).first;
  }
  void erase_free(AddrMap::iterator it) { by_size_.erase(it->second.in_size_set); }

  // Tree nodes come from a pool, not malloc: most of an arena call is node churn.
  std::pmr::unsynchronized_pool_resource node_pool_;
  AddrMap by_addr_{&node_pool_};
  SizeSet by_size_{&node_pool_};  // free blocks only
  std::map<uintptr_t, uint64_t> regions_;             // base -> bytes
  uint64_t free_bytes_ = 0, allocated_bytes_ = 0, reserved_bytes_ = 0;
  std::size_t allocated_count_ = 0;
};

}  // namespace oomguard::mr
