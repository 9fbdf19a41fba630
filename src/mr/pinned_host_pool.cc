#include "oomguard/mr/pinned_host_pool.h"

#include "oomguard/units.h"

namespace oomguard::mr {
namespace {

ArenaOptions PinnedArenaOptions(const PinnedPoolOptions& o) {
  ArenaOptions a;
  a.growth = Growth::kOnDemand;
  a.limit_bytes = o.limit_bytes;
  a.initial_region_bytes = o.initial_region_bytes;
  a.growth_factor = o.growth_factor;
  a.backoff_factor = 0.9;
  return a;
}

}  // namespace

Result<uint64_t> ParsePinnedLimit(const char* value, uint64_t default_bytes) {
  if (value == nullptr || value[0] == '\0') return default_bytes;
  Result<uint64_t> bytes = ParseBytes(value);
  if (!bytes.ok()) return MakeError("OOMGUARD_PINNED_LIMIT: " + bytes.error());
  if (*bytes == 0) return MakeError("OOMGUARD_PINNED_LIMIT: the cap must be more than 0 bytes");
  return *bytes;
}

PinnedHostPool::PinnedHostPool(MemoryResource& pinned, MemoryResource& pageable, PinnedPoolOptions options)
    : pageable_(pageable), options_(options), arena_(pinned, PinnedArenaOptions(options)) {}

std::string PinnedHostPool::name() const {
  return "pinned host pool (cap " + FormatBytes(options_.limit_bytes) + ")";
}

uint64_t PinnedHostPool::fallback_allocations() const {
  MutexLock lock(mu_);
  return fallbacks_;
}

std::optional<std::string> PinnedHostPool::fallback_warning() const {
  MutexLock lock(mu_);
  return warning_;
}

void* PinnedHostPool::do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) {
  try {
    return arena_.allocate(bytes, alignment, stream);
  } catch (const OutOfMemory& e) {
    if (options_.fallback == PinnedFallback::kFail) throw;
    void* p = pageable_.allocate(bytes, alignment, stream);
    MutexLock lock(mu_);
    pageable_live_.insert(p);
    ++fallbacks_;
    if (!warning_) {
      warning_ = "pinned host memory: cannot allocate " + FormatBytes(bytes) + " under the cap of " +
                 FormatBytes(options_.limit_bytes) + " (" + e.report().verdict_line() +
                 "); using pageable host memory instead (slower host-to-device copies)";
    }
    return p;
  }
}

void PinnedHostPool::do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) {
  {
    MutexLock lock(mu_);
    auto it = pageable_live_.find(p);
    if (it != pageable_live_.end()) {
      pageable_live_.erase(it);
      pageable_.deallocate(p, bytes, alignment, stream);
      return;
    }
  }
  arena_.deallocate(p, bytes, alignment, stream);
}

}  // namespace oomguard::mr
