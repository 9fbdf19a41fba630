// CudaDeviceResource: device memory from the CUDA driver (cuMemAlloc_v2 /
// cuMemFree_v2), on one device's primary context.
//
// Open() initializes the driver, retains the device's primary context (the one
// the CUDA runtime and PyTorch use) and makes it current for each call.
// Allocation failure throws OutOfMemory whose upstream_error is the driver's
// error name and whose device numbers come from cuMemGetInfo_v2.
//
// Ownership: references the driver (must outlive it); releases the primary
// context on destruction. Thread safety: safe from many threads.
#pragma once

#include "oomguard/mr/cuda_driver.h"
#include "oomguard/mr/memory_resource.h"

namespace oomguard::mr {

class CudaDeviceResource final : public MemoryResource {
 public:
  // Error: "CUDA device <ordinal>: <call> failed: <error name>".
  static Result<std::unique_ptr<CudaDeviceResource>> Open(CudaDriver& driver, int ordinal);
  ~CudaDeviceResource() override;

  std::string name() const override;
  std::optional<DeviceMemory> device_memory() const override;

 private:
  CudaDeviceResource(CudaDriver& driver, int ordinal, int device, void* context);
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  CudaDriver& driver_;
  int ordinal_, device_;
  void* context_;
};

// Opens the driver's primary context of `ordinal` (shared helper of the CUDA resources).
Result<std::pair<int, void*>> RetainPrimaryContext(CudaDriver& driver, int ordinal, const std::string& what);

}  // namespace oomguard::mr
