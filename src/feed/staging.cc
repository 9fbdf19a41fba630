#include "oomguard/feed/staging.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace oomguard::feed {
namespace {
constexpr uint64_t kMapThreshold = 1024 * 1024;
constexpr uint64_t kAlignment = 64;
constexpr uint64_t kHugePage = 2 * 1024 * 1024;
}  // namespace

uint8_t* AlignedHostStaging::Allocate(uint64_t bytes) {
  if (bytes == 0) return nullptr;
  if (bytes >= kMapThreshold) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // Transparent huge pages: a 30 MB batch takes ~15 page faults, not ~7000,
    // and decoding into it misses the TLB far less. Advice only; may be ignored.
    if (bytes >= kHugePage) ::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<uint8_t*>(p);
  }
  uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
}

void AlignedHostStaging::Free(uint8_t* p, uint64_t bytes) {
  if (p == nullptr) return;
  if (bytes >= kMapThreshold) {
    ::munmap(p, bytes);
  } else {
    std::free(p);
  }
}

HostStaging& DefaultHostStaging() {
  static AlignedHostStaging* staging = new AlignedHostStaging();
  return *staging;
}

}  // namespace oomguard::feed
