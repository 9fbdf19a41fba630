#include "oomguard/mr/host_resource.h"

#include <cstdlib>

#include "oomguard/mr/out_of_memory.h"

namespace oomguard::mr {

void* HostResource::do_allocate(std::size_t bytes, std::size_t alignment, Stream) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = rounded < bytes ? nullptr : std::aligned_alloc(alignment, rounded);
  if (p == nullptr) {
    OomReport report;
    report.resource = name();
    report.requested_bytes = bytes;
    report.upstream_error = "aligned_alloc returned null";
    throw OutOfMemory(std::move(report));
  }
#ifndef NDEBUG
  MutexLock lock(mu_);
  live_[p] = bytes;
#endif
  return p;
}

void HostResource::do_deallocate(void* p, std::size_t bytes, std::size_t, Stream) {
#ifndef NDEBUG
  {
    MutexLock lock(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      throw InvalidDeallocation("host memory: deallocate of a pointer that is not live (double free?)");
    }
    if (it->second != bytes) {
      throw InvalidDeallocation("host memory: deallocate with size " + std::to_string(bytes) +
                                " but the allocation has " + std::to_string(it->second));
    }
    live_.erase(it);
  }
#endif
  (void)bytes;
  std::free(p);
}

}  // namespace oomguard::mr
