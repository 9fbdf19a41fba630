// MemoryResourceStaging: stages feed buffers in any oomguard::mr resource —
// with a GPU, the bounded pinned host pool (oomguard/mr/pinned_host_pool.h),
// so a batch can be copied to the device asynchronously.
//
// The feed's ByteBudget is still charged first; the resource may add its own
// cap (the pinned pool's limit). A resource that cannot allocate throws
// oomguard::mr::OutOfMemory (a std::bad_alloc), which the pipeline reports.
// Ownership: holds a reference; the resource must outlive the Feed and every
// Batch from it. Thread safety: that of the resource (oomguard's are safe).
#pragma once

#include <string>

#include "oomguard/feed/staging.h"
#include "oomguard/mr/memory_resource.h"

namespace oomguard::feed {

class MemoryResourceStaging : public HostStaging {
 public:
  static constexpr std::size_t kAlignment = 64;

  // pinned: whether the resource's memory is page-locked (Batch::pinned()).
  MemoryResourceStaging(mr::MemoryResource& resource, bool pinned)
      : resource_(resource), pinned_(pinned) {}

  uint8_t* Allocate(uint64_t bytes) override {
    return static_cast<uint8_t*>(resource_.allocate(bytes, kAlignment));
  }
  void Free(uint8_t* p, uint64_t bytes) override { resource_.deallocate(p, bytes, kAlignment); }
  bool pinned() const override { return pinned_; }
  std::string name() const override { return resource_.name(); }

 private:
  mr::MemoryResource& resource_;
  const bool pinned_;
};

}  // namespace oomguard::feed
