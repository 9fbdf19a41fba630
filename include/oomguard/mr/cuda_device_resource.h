// CudaDeviceResource: device memory from the CUDA driver (cuMemAlloc_v2 /
// cuMemFree_v2), on one device's primary context.
//
// Open() initializes the driver, retains the device's primary context (the one
// the CUDA runtime and PyTorch use) and makes it current for each call.
// Allocation failure throws OutOfMemory whose upstream_error is the driver's
// error name and whose device numbers come from cuMemGetInfo_v2.
//
// Virtual memory: where the driver and device support it (CUDA 10.2+ and
// CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), virtual_memory()
// offers cuMemAddressReserve / cuMemCreate + cuMemMap + cuMemSetAccess /
// cuMemUnmap + cuMemRelease / cuMemAddressFree, one physical allocation per
// map() call; an arena over this resource then grows as one range.
//
// Ownership: references the driver (must outlive it); releases the primary
// context on destruction. Thread safety: safe from many threads.
#pragma once

#include <map>
#include <mutex>

#include "oomguard/mr/cuda_driver.h"
#include "oomguard/mr/memory_resource.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

class CudaDeviceResource final : public MemoryResource, private VirtualMemory {
 public:
  // Error: "CUDA device <ordinal>: <call> failed: <error name>".
  static Result<std::unique_ptr<CudaDeviceResource>> Open(CudaDriver& driver, int ordinal);
  ~CudaDeviceResource() override;

  std::string name() const override;
  std::optional<DeviceMemory> device_memory() const override;
  VirtualMemory* virtual_memory() override { return granularity_ > 0 ? this : nullptr; }

 private:
  CudaDeviceResource(CudaDriver& driver, int ordinal, int device, void* context);
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  uint64_t granularity() const override { return granularity_; }
  void* reserve(uint64_t bytes) override;
  void release(void* base, uint64_t bytes) override;
  void map(void* at, uint64_t bytes) override;
  void unmap(void* at, uint64_t bytes) override;
  [[noreturn]] void throw_oom(const char* call, CuResult r, uint64_t bytes) const;

  uint64_t granularity_ = 0;  // 0: no virtual memory
  Mutex mu_;
  std::map<uint64_t, uint64_t> handles_ GUARDED_BY(mu_);  // mapped address -> physical allocation

  CudaDriver& driver_;
  int ordinal_, device_;
  void* context_;
};

// Opens the driver's primary context of `ordinal` (shared helper of the CUDA resources).
Result<std::pair<int, void*>> RetainPrimaryContext(CudaDriver& driver, int ordinal, const std::string& what);

}  // namespace oomguard::mr
