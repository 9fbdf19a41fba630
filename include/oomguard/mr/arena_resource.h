// ArenaResource: a best-fit, coalescing pool over an upstream resource, with a
// hard limit and on-demand or up-front growth (TensorFlow's allow_growth and
// per_process_gpu_memory_fraction, made explicit).
//
// Every request is rounded up to 256 bytes and served from the smallest free
// block that fits (split; merged back with both neighbours on free).
//
// Growth, when no block fits:
//   kExpandable (default) over an upstream with virtual memory (a CUDA device,
//     the simulated device): the arena reserves an address range as large as
//     its limit once and maps more of it at its end, just what the request
//     still needs (rounded to the device's granularity, at least
//     expand_step_bytes). Everything stays one contiguous region, so memory
//     freed anywhere can serve any later request: peak reserved stays close
//     to peak live (PyTorch's expandable_segments). release_unused() unmaps
//     the free end. Over an upstream without virtual memory, or when the
//     address range cannot be reserved, the arena uses kOnDemand instead
//     (stats().expandable says which).
//   kOnDemand: the arena asks the upstream for a new region (NextRegionBytes);
//     if the upstream refuses, it retries smaller (BackoffSizes, down to what
//     the request needs).
// If growing fails, the arena returns its entirely free regions (or its free
// end) to the upstream and tries once more; then it throws OutOfMemory with a
// report.
//
// Ownership: holds a reference to the upstream (must outlive the arena) and
// owns the regions; the destructor returns all regions to the upstream.
// REQUIRES: no live allocations at destruction (their memory goes away).
// Thread safety: safe from many threads (one mutex). A listener is called with
// the mutex held and must not call back into the arena.
// Streams: the arena is not stream-ordered; a block freed on one stream can be
// handed out on another. Synchronize before freeing memory used by another stream.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "oomguard/mr/memory_resource.h"
#include "oomguard/mr/out_of_memory.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

class BestFitBlocks;

enum class Growth {
  kExpandable,   // one address range, mapped as requests need; kOnDemand without virtual memory
  kOnDemand,     // start with initial_region_bytes, add regions as requests need (allow_growth)
  kPreallocate,  // take the whole limit at construction
};

// "expandable", "regions" (kOnDemand) or "preallocated": the words of
// OOMGUARD_ALLOC_CONF's growth= and of the plug-in's statistics.
const char* GrowthName(Growth growth);

struct ArenaOptions {
  Growth growth = Growth::kExpandable;
  // The cap. limit_bytes wins when set; otherwise limit_fraction of the
  // upstream device's total memory; with neither, the device's total memory,
  // or no cap for an upstream that is not a device.
  uint64_t limit_bytes = 0;
  double limit_fraction = 0.0;
  // First region for kOnDemand. Small keeps idle processes small; each later
  // region grows the total by growth_factor (1.0 doubles it), never less than
  // the request. A smaller factor wastes less memory, asks the upstream more often.
  uint64_t initial_region_bytes = 2ull << 20;
  double growth_factor = 1.0;
  // When the upstream refuses a region, retry at this factor of the last size,
  // down to what the request needs (0.5 for devices; the pinned pool uses 0.9).
  double backoff_factor = 0.5;
  // kExpandable: map at least this much at a time (fewer driver calls; the
  // free end goes back with release_unused()).
  uint64_t expand_step_bytes = 2ull << 20;
};

struct ArenaStats {
  uint64_t allocated_bytes = 0;  // live, rounded to 256 bytes
  uint64_t reserved_bytes = 0;   // held from the upstream
  uint64_t peak_allocated_bytes = 0;
  uint64_t peak_reserved_bytes = 0;
  uint64_t free_in_pool_bytes = 0;
  uint64_t largest_free_block_bytes = 0;
  uint64_t limit_bytes = 0;  // kNoLimit when uncapped
  uint64_t live_allocations = 0;
  uint64_t regions = 0;
  uint64_t allocations = 0, deallocations = 0;  // calls
  uint64_t grows = 0, releases = 0, out_of_memory = 0;
  bool expandable = false;  // growing one mapped address range (kExpandable in effect)
  // 1 - largest free block / free in pool (0 when nothing is free).
  double fragmentation() const;
};

// Told when the arena takes a region from its upstream or gives one back.
class ArenaListener {
 public:
  virtual ~ArenaListener() = default;
  virtual void on_grow(uint64_t bytes) = 0;
  virtual void on_release(uint64_t bytes) = 0;
};

class ArenaResource final : public MemoryResource {
 public:
  // Throws std::invalid_argument for a limit_fraction outside (0, 1] or a
  // fraction over an upstream that is not a device; throws OutOfMemory when
  // kPreallocate cannot get the whole limit.
  ArenaResource(MemoryResource& upstream, ArenaOptions options = {});
  ~ArenaResource() override;
  ArenaResource(const ArenaResource&) = delete;
  ArenaResource& operator=(const ArenaResource&) = delete;

  std::string name() const override;
  std::optional<DeviceMemory> device_memory() const override { return upstream_.device_memory(); }

  // Returns entirely free regions to the upstream; returns the bytes released.
  uint64_t release_unused();

  ArenaStats stats() const;
  uint64_t limit_bytes() const { return limit_; }
  // The growth in effect: kOnDemand where kExpandable was asked for but the
  // upstream has no virtual memory.
  Growth growth() const { return options_.growth; }
  // The OOM report the arena would give now for a request of `bytes`.
  OomReport report_for(uint64_t bytes) const;

  void set_listener(ArenaListener* listener);

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  bool grow_locked(uint64_t needed, Stream stream, std::string* upstream_error) REQUIRES(mu_);
  bool expand_locked(uint64_t needed, std::string* upstream_error) REQUIRES(mu_);
  uint64_t release_locked() REQUIRES(mu_);
  // Counts a region (or mapping) taken from or given back to the upstream, and tells the listener.
  void grew_locked(uint64_t bytes) REQUIRES(mu_);
  void released_locked(uint64_t bytes) REQUIRES(mu_);
  OomReport report_locked(uint64_t bytes) const REQUIRES(mu_);

  MemoryResource& upstream_;
  ArenaOptions options_;
  uint64_t limit_ = 0;
  mutable Mutex mu_;
  std::unique_ptr<BestFitBlocks> blocks_ PT_GUARDED_BY(mu_);
  ArenaStats counters_ GUARDED_BY(mu_);
  ArenaListener* listener_ GUARDED_BY(mu_) = nullptr;
  // kExpandable in effect: the reserved range and the sizes mapped at its
  // start, one entry per map() call (unmapped from the end, in reverse). What
  // is mapped is the one region's size, blocks_->reserved_bytes().
  VirtualMemory* vm_ = nullptr;
  uintptr_t va_base_ = 0;
  uint64_t va_bytes_ = 0;
  std::vector<uint64_t> mapped_chunks_ GUARDED_BY(mu_);
};

}  // namespace oomguard::mr
