// BestFitBlocks: the blocks of an arena's regions, free and allocated.
//
// Blocks live in one slab and are linked to their address neighbours inside
// their region (prev/next), so merging on free is two pointer checks and
// regions never merge with each other (each goes back to the upstream whole).
// Allocated blocks are found by address in an open-addressing hash table.
// Free blocks are indexed by size in two tiers:
//   - below kSmallLimit (1 MiB), one list per exact size in 256-byte granules,
//     with a two-level bitmap over the lists: the smallest non-empty list at
//     or above a size is found with two count-trailing-zeros;
//   - from kSmallLimit up, an ordered set keyed by (size, address).
// Either way allocate() takes the smallest free block that fits (best fit),
// in constant time for the small sizes that make up most training-step
// requests and O(log n) for the large ones.
//
// Not thread safe: the arena holds a lock around every call.
// Sizes and addresses are already rounded by the caller to kGranule.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace oomguard::mr {

class BestFitBlocks {
 public:
  static constexpr uint64_t kGranule = 256;
  static constexpr uint64_t kSmallLimit = 1ull << 20;  // sizes below this use exact-size lists

  struct Region {
    uintptr_t base;
    uint64_t bytes;
  };

  BestFitBlocks();

  // Adds a region as one free block. A region that `grows_at_end`
  // (extend_region) keeps its free end out of the size index: that block is
  // used only when no other free block fits (dlmalloc's "wilderness"), so
  // holes are reused before the end is cut into and the region grows as
  // little as it can. At most one such region.
  void add_region(uintptr_t base, uint64_t bytes, bool grows_at_end = false);

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

  // Grows the region at `base` by `bytes` at its end (an expandable region
  // whose next pages were just mapped): the end merges with a free last block.
  // REQUIRES: `base` is a region.
  void extend_region(uintptr_t base, uint64_t bytes);
  // Bytes free at the end of the region at `base` (0 when its last block is allocated).
  uint64_t free_tail(uintptr_t base) const;
  // Cuts `bytes` off the end of the region at `base` (pages about to be
  // unmapped); cutting the whole region removes it.
  // REQUIRES: bytes <= free_tail(base).
  void trim_region(uintptr_t base, uint64_t bytes);

  uint64_t free_bytes() const { return free_bytes_; }
  uint64_t allocated_bytes() const { return allocated_bytes_; }
  uint64_t reserved_bytes() const { return reserved_bytes_; }
  uint64_t largest_free_block() const;
  std::size_t free_block_count() const { return free_count_; }
  std::size_t allocated_block_count() const { return allocated_count_; }
  std::size_t region_count() const { return region_by_base_.size(); }
  // Every region, in address order.
  std::vector<Region> regions() const;

  // Calls f(address, bytes) for every allocated block, in address order.
  template <typename F>
  void for_each_allocated(F f) const {
    for (const auto& [base, id] : region_by_base_) {
      for (uint32_t i = regions_[id].first; i != kNil; i = blocks_[i].next) {
        if (!blocks_[i].free) f(blocks_[i].addr, blocks_[i].bytes);
      }
    }
  }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  static constexpr uint32_t kSmallLists = kSmallLimit / kGranule;  // list g holds blocks of g granules
  static constexpr uint32_t kWords = kSmallLists / 64;

  struct Block {
    uintptr_t addr;
    uint64_t bytes;
    uint32_t prev, next;            // address neighbours in the same region, or kNil
    uint32_t prev_free, next_free;  // links in a small-size list while free
    uint32_t region;                // index in regions_
    bool free;
  };

  // Address -> slab index of an allocated block. Linear probing, deletion by
  // backward shift; addresses are never 0, so 0 marks an empty slot.
  class AddressTable {
   public:
    static constexpr std::size_t kAbsent = SIZE_MAX;
    AddressTable();
    // The slot holding `addr`, or kAbsent; the slot stays valid until the next insert or erase.
    std::size_t locate(uintptr_t addr) const;
    uint32_t at(std::size_t slot) const { return slots_[slot].second; }
    void insert(uintptr_t addr, uint32_t index);
    void erase_slot(std::size_t slot);

   private:
    std::size_t slot(uintptr_t addr) const { return (addr >> 8) * 0x9E3779B97F4A7C15ull >> shift_; }
    void grow();
    std::vector<std::pair<uintptr_t, uint32_t>> slots_;
    std::size_t size_ = 0;
    unsigned shift_;
  };

  uint32_t new_block(const Block& b);
  void drop_block(uint32_t i) { spare_.push_back(i); }
  // A new block of `bytes` (not yet in the free index) right after block i, in its region.
  uint32_t insert_after(uint32_t i, uint64_t bytes);
  // Merges the block after `keep` into it. REQUIRES: neither is in the free index.
  void absorb_next(uint32_t keep);
  // Forgets a region that is one block, out of the free index. Returns the next region.
  std::map<uintptr_t, uint32_t>::iterator remove_region(std::map<uintptr_t, uint32_t>::iterator it);
  void insert_free(uint32_t i);
  void erase_free(uint32_t i);
  // The free block that best fits `bytes`, or kNil.
  uint32_t find_fit(uint64_t bytes) const;
  uint32_t first_small_list_at_or_above(uint32_t granules) const;  // kSmallLists when none

  std::vector<Block> blocks_;
  std::vector<uint32_t> spare_;  // reusable slab slots
  AddressTable allocated_;
  std::vector<uint32_t> small_head_;   // kSmallLists list heads
  uint64_t small_bits_[kWords] = {};   // bit g: list g is not empty
  uint64_t small_summary_ = 0;         // bit w: small_bits_[w] != 0
  std::map<std::pair<uint64_t, uintptr_t>, uint32_t> large_;  // (bytes, addr) -> slab index, free >= kSmallLimit
  struct RegionInfo {
    uintptr_t base;
    uint64_t bytes;
    uint32_t first;  // slab index of the block at the base (never merged away)
    uint32_t last;   // slab index of the block at the end
  };
  std::vector<RegionInfo> regions_;          // slots reused through spare_regions_
  std::vector<uint32_t> spare_regions_;
  uint32_t growing_region_ = kNil;  // the region that grows at its end
  uint32_t wilderness_ = kNil;      // its free last block, kept out of the size index
  std::map<uintptr_t, uint32_t> region_by_base_;  // base -> index in regions_, address order
  uint64_t free_bytes_ = 0, allocated_bytes_ = 0, reserved_bytes_ = 0;
  std::size_t allocated_count_ = 0, free_count_ = 0;
};

}  // namespace oomguard::mr
