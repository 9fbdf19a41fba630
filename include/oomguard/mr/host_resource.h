// HostResource: plain pageable host memory (aligned_alloc / free).
//
// Thread safety: safe from many threads. Double free and unknown pointers are
// detected (InvalidDeallocation) only in debug builds (!NDEBUG), where every
// live pointer is kept in a set.
#pragma once

#include <mutex>
#include <unordered_map>

#include "oomguard/mr/memory_resource.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

class HostResource final : public MemoryResource {
 public:
  std::string name() const override { return "host memory"; }
  std::size_t max_alignment() const override { return 4096; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

#ifndef NDEBUG
  Mutex mu_;
  std::unordered_map<void*, std::size_t> live_ GUARDED_BY(mu_);
#endif
};

}  // namespace oomguard::mr
