// PluggableAllocator: the logic behind liboomguard_torch.so, the allocator
// PyTorch loads with torch.cuda.memory.CUDAPluggableAllocator.
//
// One ArenaResource per device index, created on first use over the upstream
// that `make_upstream` returns for that device (CUDA, or a simulated device
// for tests). Malloc() never throws (it is called through a C function): on
// failure it returns nullptr, keeps the OOM report (last_report()) and, when
// the configuration names a report file, writes the report there as JSON —
// without holding the lock other devices' Malloc and Free need.
// Free() of an unknown pointer is recorded in last_error(), never thrown.
//
// Thread safety: safe from many threads. Devices 0..kMaxDevices-1.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "oomguard/mr/alloc_conf.h"
#include "oomguard/mr/arena_resource.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

class PluggableAllocator {
 public:
  static constexpr int kMaxDevices = 64;
  using UpstreamFactory = std::function<Result<std::unique_ptr<MemoryResource>>(int device)>;

  PluggableAllocator(AllocConf conf, UpstreamFactory make_upstream);
  ~PluggableAllocator();

  void* Malloc(std::size_t bytes, int device, Stream stream) noexcept;
  void Free(void* ptr, std::size_t bytes, int device, Stream stream) noexcept;

  std::optional<OomReport> last_report() const;
  std::optional<std::string> last_error() const;
  // JSON text: {"devices":[{"device":i, "allocated_bytes":..., "peak_reserved_bytes":..., ...}],
  //  "last_report":{...}|null, "last_error":"..."|null}
  std::string stats_json() const;

 private:
  struct Device {
    std::unique_ptr<MemoryResource> upstream;
    std::unique_ptr<ArenaResource> arena;
  };
  ArenaResource* arena_for(int device) EXCLUDES(mu_);  // nullptr (and last_error) on failure
  void set_error(std::string message) noexcept EXCLUDES(mu_);
  // Keeps the report and writes the report file, outside mu_.
  void RecordOutOfMemory(const OomReport& report) noexcept;

  const AllocConf conf_;
  const UpstreamFactory make_upstream_;
  mutable Mutex mu_;
  std::array<Device, kMaxDevices> devices_ GUARDED_BY(mu_);
  std::optional<OomReport> last_report_ GUARDED_BY(mu_);
  std::optional<std::string> last_error_ GUARDED_BY(mu_);
  Mutex report_file_mu_ ACQUIRED_BEFORE(mu_);  // serialises writers of conf_.report_path
};

// The upstream factory liboomguard_torch.so uses: a simulated device when
// conf.simulate_bytes is set, else CUDA device memory through the driver
// (loaded once; the error says why when there is no driver).
PluggableAllocator::UpstreamFactory MakeDefaultUpstreamFactory(const AllocConf& conf);

// Writes ToJson(report) to `path` (replacing it). Error names the path.
Status WriteReportJson(const std::string& path, const OomReport& report);

}  // namespace oomguard::mr
