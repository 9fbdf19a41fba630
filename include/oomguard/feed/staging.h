// Staging memory: where the pipeline puts file bytes, scratch images and
// batches. A small allocator interface so batches can live in plain aligned
// host memory (AlignedHostStaging, the default) or in page-locked memory from
// a bounded pool when a GPU is present (an adapter over oomguard::mr).
//
// The ByteBudget is charged BEFORE Allocate() is called; a staging allocator
// only provides memory, it never decides how much may be in flight.
// Thread safety: implementations must be safe to call from many threads.
// REQUIRES: Free(p, bytes) gets a pointer and size from Allocate() on the same
// object. Allocate() throws std::bad_alloc (or a subclass) on failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomguard::feed {

class HostStaging {
 public:
  virtual ~HostStaging() = default;
  // Returns at least `bytes` bytes aligned to 64; nullptr only for 0 bytes.
  virtual uint8_t* Allocate(uint64_t bytes) = 0;
  virtual void Free(uint8_t* p, uint64_t bytes) = 0;
  // Whether the memory is page-locked (fast asynchronous host-to-device copies).
  virtual bool pinned() const { return false; }
  virtual std::string name() const = 0;
};

// Plain host memory. Blocks of 1 MiB and more (batches) are mapped straight
// from the kernel (mmap) and returned on Free, so freed batches do not linger
// in the C heap and the process's resident size follows the budget; smaller
// blocks (file bytes) come from the C heap, which reuses them without faults.
class AlignedHostStaging : public HostStaging {
 public:
  uint8_t* Allocate(uint64_t bytes) override;
  void Free(uint8_t* p, uint64_t bytes) override;
  std::string name() const override { return "aligned host memory"; }
};

HostStaging& DefaultHostStaging();

}  // namespace oomguard::feed
