#include "oomguard/mr/pluggable_allocator.h"

#include <fstream>

#include "oomguard/mr/cuda_device_resource.h"
#include "oomguard/mr/simulated_device_resource.h"
#include "report_json.h"

namespace oomguard::mr {

PluggableAllocator::PluggableAllocator(AllocConf conf, UpstreamFactory make_upstream)
    : conf_(std::move(conf)), make_upstream_(std::move(make_upstream)) {}

PluggableAllocator::~PluggableAllocator() {
  for (Device& d : devices_) {
    d.arena.reset();  // before its upstream
    d.upstream.reset();
  }
}

void PluggableAllocator::set_error(std::string message) noexcept {
  try {
    MutexLock lock(mu_);
    last_error_ = std::move(message);
  } catch (...) {  // out of memory copying the message: keep the old one
  }
}

void PluggableAllocator::RecordOutOfMemory(const OomReport& report) noexcept {
  // The copy, the JSON and the file are made without mu_, which every
  // device's Malloc and Free take: a slow disk or a report file that blocks
  // (a FIFO) stalls only this failing allocation.
  try {
    std::optional<std::string> write_error;
    if (!conf_.report_path.empty()) {
      MutexLock file_lock(report_file_mu_);  // one writer of the file at a time
      Status written = WriteReportJson(conf_.report_path, report);
      if (!written.ok()) write_error = written.error();
    }
    std::optional<OomReport> copy = report;
    MutexLock lock(mu_);
    last_report_.swap(copy);
    if (write_error) last_error_.swap(write_error);
  } catch (...) {  // out of memory building the report: the nullptr says enough
  }
}

ArenaResource* PluggableAllocator::arena_for(int device) {
  if (device < 0 || device >= kMaxDevices) {
    set_error("device " + std::to_string(device) + " is out of range (0.." + std::to_string(kMaxDevices - 1) + ")");
    return nullptr;
  }
  MutexLock lock(mu_);
  Device& d = devices_[device];
  if (d.arena) return d.arena.get();
  Result<std::unique_ptr<MemoryResource>> upstream = make_upstream_(device);
  if (!upstream.ok()) {
    last_error_ = upstream.error();
    return nullptr;
  }
  ArenaOptions options;
  options.growth = conf_.growth;
  if (conf_.limit_bytes) options.limit_bytes = *conf_.limit_bytes;
  if (conf_.fraction) options.limit_fraction = *conf_.fraction;
  options.initial_region_bytes = conf_.initial_bytes;
  options.expand_step_bytes = conf_.initial_bytes;
  try {
    d.arena = std::make_unique<ArenaResource>(**upstream, options);
  } catch (const OutOfMemory& e) {
    last_report_ = e.report();
    last_error_ = "device " + std::to_string(device) + ": cannot preallocate the limit";
    return nullptr;
  } catch (const std::exception& e) {
    last_error_ = e.what();
    return nullptr;
  }
  d.upstream = std::move(*upstream);
  return d.arena.get();
}

void* PluggableAllocator::Malloc(std::size_t bytes, int device, Stream stream) noexcept {
  ArenaResource* arena = nullptr;
  try {
    arena = arena_for(device);
  } catch (...) {  // out of memory creating the arena or its message
    set_error("device " + std::to_string(device) + ": cannot create the arena");
  }
  if (arena == nullptr) return nullptr;
  try {
    return arena->allocate(bytes, kDefaultAlignment, stream);
  } catch (const OutOfMemory& e) {
    RecordOutOfMemory(e.report());
  } catch (const std::exception& e) {
    set_error(e.what());
  } catch (...) {
    set_error("allocation failed with an unknown exception");
  }
  return nullptr;
}

void PluggableAllocator::Free(void* ptr, std::size_t bytes, int device, Stream stream) noexcept {
  if (ptr == nullptr) return;
  ArenaResource* arena = nullptr;
  if (device >= 0 && device < kMaxDevices) {
    MutexLock lock(mu_);
    arena = devices_[device].arena.get();
  }
  try {
    if (arena == nullptr) {
      set_error("free on device " + std::to_string(device) + " which has no allocations");
      return;
    }
    arena->deallocate(ptr, bytes, kDefaultAlignment, stream);
  } catch (const std::exception& e) {
    set_error(e.what());
  } catch (...) {
    set_error("free failed with an unknown exception");
  }
}

std::optional<OomReport> PluggableAllocator::last_report() const {
  MutexLock lock(mu_);
  return last_report_;
}

std::optional<std::string> PluggableAllocator::last_error() const {
  MutexLock lock(mu_);
  return last_error_;
}

std::string PluggableAllocator::stats_json() const {
  // Copy under the lock, build the JSON after it.
  struct DeviceStats {
    int device;
    Growth growth;
    ArenaStats stats;
  };
  std::vector<DeviceStats> arenas;
  std::optional<OomReport> last_report;
  std::optional<std::string> last_error;
  arenas.reserve(kMaxDevices);
  {
    MutexLock lock(mu_);
    for (int i = 0; i < kMaxDevices; ++i) {
      if (devices_[i].arena) arenas.push_back({i, devices_[i].arena->growth(), devices_[i].arena->stats()});
    }
    last_report = last_report_;
    last_error = last_error_;
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceStats& d : arenas) {
    const ArenaStats& s = d.stats;
    devices.push_back({{"device", d.device},
                       {"growth", GrowthName(d.growth)},
                       {"regions", s.regions},
                       {"limit_bytes", s.limit_bytes},
                       {"allocated_bytes", s.allocated_bytes},
                       {"reserved_bytes", s.reserved_bytes},
                       {"peak_allocated_bytes", s.peak_allocated_bytes},
                       {"peak_reserved_bytes", s.peak_reserved_bytes},
                       {"largest_free_block_bytes", s.largest_free_block_bytes},
                       {"fragmentation", s.fragmentation()},
                       {"allocations", s.allocations},
                       {"out_of_memory", s.out_of_memory}});
  }
  nlohmann::json stats = {{"devices", devices},
                          {"last_report", last_report ? ToJson(*last_report) : nlohmann::json(nullptr)},
                          {"last_error", last_error ? nlohmann::json(*last_error) : nlohmann::json(nullptr)}};
  return stats.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

PluggableAllocator::UpstreamFactory MakeDefaultUpstreamFactory(const AllocConf& conf) {
  if (conf.simulate_bytes) {
    uint64_t capacity = *conf.simulate_bytes;
    return [capacity](int) -> Result<std::unique_ptr<MemoryResource>> {
      SimulatedDeviceOptions options;
      options.capacity_bytes = capacity;
      return std::unique_ptr<MemoryResource>(std::make_unique<SimulatedDeviceResource>(options));
    };
  }
  // The process's one driver (SharedCudaDriver), loaded on first use.
  return [](int device) -> Result<std::unique_ptr<MemoryResource>> {
    Result<CudaDriver*> driver = SharedCudaDriver();
    if (!driver) return MakeError(driver.error());
    Result<std::unique_ptr<CudaDeviceResource>> r = CudaDeviceResource::Open(**driver, device);
    if (!r.ok()) return MakeError(r.error());
    return std::unique_ptr<MemoryResource>(std::move(*r));
  };
}

Status WriteReportJson(const std::string& path, const OomReport& report) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return MakeError("cannot write the OOM report to " + path);
  // A name from a driver need not be UTF-8: replace bad bytes, never throw.
  out << ToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out.flush()) return MakeError("cannot write the OOM report to " + path);
  return Status::Ok();
}

}  // namespace oomguard::mr
