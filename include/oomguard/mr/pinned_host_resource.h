// PinnedHostResource: page-locked host memory from the CUDA driver
// (cuMemHostAlloc with CU_MEMHOSTALLOC_PORTABLE / cuMemFreeHost), the upstream
// of PinnedHostPool. Every call pins exactly what is asked (no rounding up to
// a power of two).
//
// Ownership: references the driver; releases the primary context it retained.
// Thread safety: safe from many threads.
#pragma once

#include "oomguard/mr/cuda_driver.h"
#include "oomguard/mr/memory_resource.h"

namespace oomguard::mr {

class PinnedHostResource final : public MemoryResource {
 public:
  // Needs a context: retains the primary context of device `ordinal`.
  static Result<std::unique_ptr<PinnedHostResource>> Open(CudaDriver& driver, int ordinal = 0);
  ~PinnedHostResource() override;

  std::string name() const override { return "pinned host memory (cuMemHostAlloc)"; }
  std::size_t max_alignment() const override { return 4096; }  // page aligned

 private:
  PinnedHostResource(CudaDriver& driver, int device, void* context);
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  CudaDriver& driver_;
  int device_;
  void* context_;
};

}  // namespace oomguard::mr
