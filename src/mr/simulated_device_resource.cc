#include "oomguard/mr/simulated_device_resource.h"

#include <sys/mman.h>

#include <cstdlib>
#include <stdexcept>

#include "oomguard/mr/out_of_memory.h"
#include "oomguard/units.h"

namespace oomguard::mr {

SimulatedDeviceResource::SimulatedDeviceResource(SimulatedDeviceOptions options)
    : options_(options), rng_(options.seed) {}

SimulatedDeviceResource::~SimulatedDeviceResource() {
  for (auto& [p, bytes] : live_) std::free(p);
  for (auto& [base, bytes] : ranges_) munmap(reinterpret_cast<void*>(base), bytes);
}

std::string SimulatedDeviceResource::name() const {
  return "simulated device (" + FormatBytes(options_.capacity_bytes) + ")";
}

uint64_t SimulatedDeviceResource::free_locked() const {
  const uint64_t taken = used_ + options_.held_by_others_bytes;
  return taken >= options_.capacity_bytes ? 0 : options_.capacity_bytes - taken;
}

std::optional<DeviceMemory> SimulatedDeviceResource::device_memory() const {
  MutexLock lock(mu_);
  return DeviceMemory{free_locked(), options_.capacity_bytes};
}

void SimulatedDeviceResource::set_held_by_others(uint64_t bytes) {
  MutexLock lock(mu_);
  options_.held_by_others_bytes = bytes;
}

void SimulatedDeviceResource::set_failure_injection(uint64_t fail_every_nth, double fail_probability) {
  MutexLock lock(mu_);
  options_.fail_every_nth = fail_every_nth;
  options_.fail_probability = fail_probability;
}

uint64_t SimulatedDeviceResource::used_bytes() const {
  MutexLock lock(mu_);
  return used_;
}
uint64_t SimulatedDeviceResource::peak_used_bytes() const {
  MutexLock lock(mu_);
  return peak_;
}
uint64_t SimulatedDeviceResource::live_allocations() const {
  MutexLock lock(mu_);
  return live_.size();
}
uint64_t SimulatedDeviceResource::allocate_calls() const {
  MutexLock lock(mu_);
  return calls_;
}
uint64_t SimulatedDeviceResource::injected_failures() const {
  MutexLock lock(mu_);
  return injected_;
}

const char* SimulatedDeviceResource::failure_locked(uint64_t bytes) {
  ++calls_;
  if (options_.fail_every_nth > 0 && calls_ % options_.fail_every_nth == 0) {
    ++injected_;
    return "injected failure (every Nth call)";
  }
  if (options_.fail_probability > 0 &&
      std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < options_.fail_probability) {
    ++injected_;
    return "injected failure (random)";
  }
  if (bytes > free_locked()) return "CUDA_ERROR_OUT_OF_MEMORY (simulated device full)";
  return nullptr;
}

void SimulatedDeviceResource::throw_oom_locked(uint64_t bytes, const char* failure) {
  OomReport report;
  report.resource = "simulated device (" + FormatBytes(options_.capacity_bytes) + ")";
  report.requested_bytes = bytes;
  report.allocated_bytes = used_;
  report.reserved_bytes = used_;
  report.device_free_bytes = free_locked();
  report.device_total_bytes = options_.capacity_bytes;
  report.upstream_error = failure;
  throw OutOfMemory(std::move(report));  // the caller's lock is released as the exception leaves
}

void* SimulatedDeviceResource::do_allocate(std::size_t bytes, std::size_t alignment, Stream) {
  MutexLock lock(mu_);
  const char* failure = failure_locked(bytes);
  std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = nullptr;
  if (failure == nullptr) {
    p = std::aligned_alloc(alignment, rounded);
    if (p == nullptr) failure = "host memory behind the simulated device ran out";
  }
  if (failure != nullptr) throw_oom_locked(bytes, failure);
  live_.emplace(p, bytes);
  used_ += bytes;
  if (used_ > peak_) peak_ = used_;
  return p;
}

void* SimulatedDeviceResource::reserve(uint64_t bytes) {
  MutexLock lock(mu_);
  // Over-reserve by one granule and cut both ends so the range starts on a granule.
  const uint64_t g = options_.granularity_bytes;
  void* p = mmap(nullptr, bytes + g, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw_oom_locked(bytes, "no address range left (mmap failed)");
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t base = (start + g - 1) / g * g;
  if (base > start) munmap(p, base - start);
  if (start + g > base) munmap(reinterpret_cast<void*>(base + bytes), start + g - base);
  ranges_.emplace(base, bytes);
  return reinterpret_cast<void*>(base);
}

void SimulatedDeviceResource::release(void* base, uint64_t bytes) {
  MutexLock lock(mu_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(base));
  if (it == ranges_.end() || it->second != bytes) {
    throw InvalidDeallocation("simulated device: release of a range that was not reserved");
  }
  auto m = mapped_.lower_bound(it->first);
  if (m != mapped_.end() && m->first < it->first + bytes) {
    throw InvalidDeallocation("simulated device: release of a range with pages still mapped");
  }
  munmap(base, bytes);
  ranges_.erase(it);
}

void SimulatedDeviceResource::map(void* at, uint64_t bytes) {
  MutexLock lock(mu_);
  const uintptr_t a = reinterpret_cast<uintptr_t>(at);
  auto range = ranges_.upper_bound(a);
  const bool inside = range != ranges_.begin() && a + bytes <= std::prev(range)->first + std::prev(range)->second;
  auto next = mapped_.lower_bound(a);
  const bool overlaps = (next != mapped_.end() && next->first < a + bytes) ||
                        (next != mapped_.begin() && std::prev(next)->first + std::prev(next)->second > a);
  if (!inside || overlaps || bytes == 0 || a % options_.granularity_bytes != 0 ||
      bytes % options_.granularity_bytes != 0) {
    throw std::invalid_argument("simulated device: map outside a reserved range, over a mapping, or not in whole "
                                "granules");
  }
  ++map_calls_;
  if (const char* failure = failure_locked(bytes)) throw_oom_locked(bytes, failure);
  if (mprotect(at, bytes, PROT_READ | PROT_WRITE) != 0) {
    throw_oom_locked(bytes, "host memory behind the simulated device ran out (mprotect failed)");
  }
  mapped_.emplace(a, bytes);
  used_ += bytes;
  if (used_ > peak_) peak_ = used_;
}

void SimulatedDeviceResource::unmap(void* at, uint64_t bytes) {
  MutexLock lock(mu_);
  auto it = mapped_.find(reinterpret_cast<uintptr_t>(at));
  if (it == mapped_.end() || it->second != bytes) {
    throw InvalidDeallocation("simulated device: unmap of a range that one map() call did not map");
  }
  madvise(at, bytes, MADV_DONTNEED);  // the pages go back to the OS now
  mprotect(at, bytes, PROT_NONE);
  used_ -= bytes;
  mapped_.erase(it);
}

uint64_t SimulatedDeviceResource::map_calls() const {
  MutexLock lock(mu_);
  return map_calls_;
}
uint64_t SimulatedDeviceResource::reserved_ranges() const {
  MutexLock lock(mu_);
  return ranges_.size();
}

void SimulatedDeviceResource::do_deallocate(void* p, std::size_t bytes, std::size_t, Stream) {
  MutexLock lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) {
    throw InvalidDeallocation("simulated device: deallocate of a pointer that is not live (double free?)");
  }
  if (it->second != bytes) {
    throw InvalidDeallocation("simulated device: deallocate with size " + std::to_string(bytes) +
                              " but the allocation has " + std::to_string(it->second));
  }
  used_ -= it->second;
  live_.erase(it);
  std::free(p);
}

}  // namespace oomguard::mr
