#include "oomguard/mr/simulated_device_resource.h"

#include <cstdlib>

#include "oomguard/mr/out_of_memory.h"
#include "oomguard/units.h"

namespace oomguard::mr {

SimulatedDeviceResource::SimulatedDeviceResource(SimulatedDeviceOptions options)
    : options_(options), rng_(options.seed) {}

SimulatedDeviceResource::~SimulatedDeviceResource() {
  for (auto& [p, bytes] : live_) std::free(p);
}

std::string SimulatedDeviceResource::name() const {
  return "simulated device (" + FormatBytes(options_.capacity_bytes) + ")";
}

std::optional<DeviceMemory> SimulatedDeviceResource::device_memory() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t taken = used_ + options_.held_by_others_bytes;
  uint64_t free = taken >= options_.capacity_bytes ? 0 : options_.capacity_bytes - taken;
  return DeviceMemory{free, options_.capacity_bytes};
}

void SimulatedDeviceResource::set_held_by_others(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.held_by_others_bytes = bytes;
}

void SimulatedDeviceResource::set_failure_injection(uint64_t fail_every_nth, double fail_probability) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.fail_every_nth = fail_every_nth;
  options_.fail_probability = fail_probability;
}

uint64_t SimulatedDeviceResource::used_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}
uint64_t SimulatedDeviceResource::peak_used_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}
uint64_t SimulatedDeviceResource::live_allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}
uint64_t SimulatedDeviceResource::allocate_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}
uint64_t SimulatedDeviceResource::injected_failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

void* SimulatedDeviceResource::do_allocate(std::size_t bytes, std::size_t alignment, Stream) {
  std::unique_lock<std::mutex> lock(mu_);
  ++calls_;
  const char* failure = nullptr;
  if (options_.fail_every_nth > 0 && calls_ % options_.fail_every_nth == 0) {
    failure = "injected failure (every Nth call)";
  } else if (options_.fail_probability > 0 &&
             std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < options_.fail_probability) {
    failure = "injected failure (random)";
  }
  uint64_t taken = used_ + options_.held_by_others_bytes;
  uint64_t free = taken >= options_.capacity_bytes ? 0 : options_.capacity_bytes - taken;
  if (failure == nullptr && bytes > free) failure = "CUDA_ERROR_OUT_OF_MEMORY (simulated device full)";
  std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = nullptr;
  if (failure == nullptr) {
    p = std::aligned_alloc(alignment, rounded);
    if (p == nullptr) failure = "host memory behind the simulated device ran out";
  }
  if (failure != nullptr) {
    if (failure[0] == 'i') ++injected_;
    OomReport report;
    report.resource = "simulated device (" + FormatBytes(options_.capacity_bytes) + ")";
    report.requested_bytes = bytes;
    report.allocated_bytes = used_;
    report.reserved_bytes = used_;
    report.device_free_bytes = free;
    report.device_total_bytes = options_.capacity_bytes;
    report.upstream_error = failure;
    lock.unlock();
    throw OutOfMemory(std::move(report));
  }
  live_.emplace(p, bytes);
  used_ += bytes;
  if (used_ > peak_) peak_ = used_;
  return p;
}

void SimulatedDeviceResource::do_deallocate(void* p, std::size_t bytes, std::size_t, Stream) {
  std::lock_guard<std::mutex> lock(mu_);
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
