// SimulatedDeviceResource: a GPU of fixed capacity made of host memory, so every
// test and benchmark runs without a GPU.
//
// Each allocation is real host memory (aligned_alloc), counted against the
// capacity; bytes "held by other processes" shrink what is free. Failure
// injection: every Nth allocate call fails, and/or each call fails with a
// probability drawn from a seeded generator (reproducible). A failure throws
// OutOfMemory whose upstream_error says whether it was injected or the device
// was full, like CUDA_ERROR_OUT_OF_MEMORY would.
//
// Virtual memory (optional, on by default): reserve() takes an address range
// with mmap(PROT_NONE); map() counts the bytes against the capacity (with the
// same failure injection as allocate) and makes them readable and writable;
// unmap() gives the pages back to the OS. Mapped bytes count in used_bytes().
//
// Thread safety: safe from many threads (one mutex).
// Deallocating an unknown pointer or freeing twice throws InvalidDeallocation.
#pragma once

#include <map>
#include <mutex>
#include <random>
#include <unordered_map>

#include "oomguard/mr/memory_resource.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

struct SimulatedDeviceOptions {
  uint64_t capacity_bytes = 8ull << 30;
  uint64_t held_by_others_bytes = 0;  // memory other processes hold on this device
  uint64_t fail_every_nth = 0;        // 0 = never; 10 = calls 10, 20, 30... fail
  double fail_probability = 0.0;      // each call fails with this probability
  uint64_t seed = 1;
  bool virtual_memory = true;              // offer reserve/map/unmap
  uint64_t granularity_bytes = 2ull << 20;  // map/unmap unit (CUDA's is 2 MiB)
};

class SimulatedDeviceResource final : public MemoryResource, private VirtualMemory {
 public:
  explicit SimulatedDeviceResource(SimulatedDeviceOptions options = {});
  ~SimulatedDeviceResource() override;
  SimulatedDeviceResource(const SimulatedDeviceResource&) = delete;
  SimulatedDeviceResource& operator=(const SimulatedDeviceResource&) = delete;

  std::string name() const override;
  std::optional<DeviceMemory> device_memory() const override;
  VirtualMemory* virtual_memory() override { return options_.virtual_memory ? this : nullptr; }

  void set_held_by_others(uint64_t bytes);
  void set_failure_injection(uint64_t fail_every_nth, double fail_probability);

  uint64_t used_bytes() const;         // by this process's allocations
  uint64_t peak_used_bytes() const;
  uint64_t live_allocations() const;
  uint64_t allocate_calls() const;
  uint64_t injected_failures() const;
  uint64_t map_calls() const;
  uint64_t reserved_ranges() const;  // address ranges reserved and not released

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  uint64_t granularity() const override { return options_.granularity_bytes; }
  void* reserve(uint64_t bytes) override;
  void release(void* base, uint64_t bytes) override;
  void map(void* at, uint64_t bytes) override;
  void unmap(void* at, uint64_t bytes) override;
  uint64_t free_locked() const REQUIRES(mu_);  // capacity less what this process and others hold
  // The failure for a request of `bytes` now (injected or device full), or nullptr.
  const char* failure_locked(uint64_t bytes) REQUIRES(mu_);
  // Throws OutOfMemory with the device's state.
  [[noreturn]] void throw_oom_locked(uint64_t bytes, const char* failure) REQUIRES(mu_);

  mutable Mutex mu_;
  SimulatedDeviceOptions options_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  std::unordered_map<void*, std::size_t> live_ GUARDED_BY(mu_);
  std::map<uintptr_t, uint64_t> ranges_ GUARDED_BY(mu_);  // reserved: base -> bytes
  std::map<uintptr_t, uint64_t> mapped_ GUARDED_BY(mu_);  // mapped: address -> bytes
  uint64_t used_ GUARDED_BY(mu_) = 0, peak_ GUARDED_BY(mu_) = 0, calls_ GUARDED_BY(mu_) = 0,
           injected_ GUARDED_BY(mu_) = 0, map_calls_ GUARDED_BY(mu_) = 0;
};

}  // namespace oomguard::mr
