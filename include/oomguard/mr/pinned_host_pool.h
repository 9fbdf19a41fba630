// PinnedHostPool: a bounded pool of pinned (page-locked) host memory.
//
// The fixes for the article's failure, where TensorFlow's pinned pool asked
// cuMemHostAlloc for 8 GiB with a 64 GB default cap: a hard cap in bytes
// (OOMGUARD_PINNED_LIMIT), exact sizes (rounded to 256 bytes, never to a power
// of two as PyTorch's pinned cache does), a back-off that always terminates
// (0.9x per refusal down to the request, then stop), and then, by policy,
// pageable host memory instead (slower copies, but the run goes on) or
// OutOfMemory. release_unused() returns entirely free regions promptly (DALI's
// pool never shrinks).
//
// The fallback is announced once: fallback_warning() holds the text after the
// first fallback (the library never prints; the caller decides where it goes).
//
// Ownership: references to both upstreams, which must outlive the pool.
// Thread safety: safe from many threads.
#pragma once

#include <mutex>
#include <optional>
#include <unordered_set>

#include "oomguard/mr/arena_resource.h"
#include "oomguard/result.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

enum class PinnedFallback { kPageable, kFail };

struct PinnedPoolOptions {
  uint64_t limit_bytes = 4ull << 30;  // the hard cap on pinned bytes held
  PinnedFallback fallback = PinnedFallback::kPageable;
  uint64_t initial_region_bytes = 64ull << 20;
  double growth_factor = 1.0;
};

// Parses OOMGUARD_PINNED_LIMIT ("8GiB", "512MiB", a byte count). Null or empty
// value: `default_bytes`. Zero or unparsable: an error naming the variable.
Result<uint64_t> ParsePinnedLimit(const char* value, uint64_t default_bytes);

class PinnedHostPool final : public MemoryResource {
 public:
  PinnedHostPool(MemoryResource& pinned, MemoryResource& pageable, PinnedPoolOptions options);

  std::string name() const override;

  uint64_t release_unused() { return arena_.release_unused(); }
  ArenaStats stats() const { return arena_.stats(); }
  uint64_t fallback_allocations() const;     // served from pageable memory
  std::optional<std::string> fallback_warning() const;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;

  MemoryResource& pageable_;
  PinnedPoolOptions options_;
  ArenaResource arena_;
  mutable Mutex mu_;
  std::unordered_set<void*> pageable_live_ GUARDED_BY(mu_);
  uint64_t fallbacks_ GUARDED_BY(mu_) = 0;
  std::optional<std::string> warning_ GUARDED_BY(mu_);
};

}  // namespace oomguard::mr
