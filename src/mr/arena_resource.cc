#include "oomguard/mr/arena_resource.h"

#include <algorithm>
#include <stdexcept>

#include "best_fit_blocks.h"
#include "oomguard/mr/growth.h"
#include "oomguard/units.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t kGranule = kDefaultAlignment;

uint64_t ResolveLimit(const MemoryResource& upstream, const ArenaOptions& options) {
  if (options.limit_bytes > 0) return options.limit_bytes;
  std::optional<DeviceMemory> device = upstream.device_memory();
  if (options.limit_fraction != 0.0) {
    if (!(options.limit_fraction > 0.0 && options.limit_fraction <= 1.0)) {
      throw std::invalid_argument("arena: limit fraction must be in (0, 1], got " +
                                  FormatNumber(options.limit_fraction));
    }
    if (!device) {
      throw std::invalid_argument("arena: a limit fraction needs a device upstream; " + upstream.name() +
                                  " is not one");
    }
    return RoundDown(static_cast<uint64_t>(options.limit_fraction * static_cast<double>(device->total_bytes)),
                     kGranule);
  }
  return device ? device->total_bytes : kNoLimit;
}

}  // namespace

const char* GrowthName(Growth growth) {
  switch (growth) {
    case Growth::kExpandable:
      return "expandable";
    case Growth::kOnDemand:
      return "regions";
    case Growth::kPreallocate:
      return "preallocated";
  }
  return "unknown";
}

double ArenaStats::fragmentation() const {
  if (free_in_pool_bytes == 0) return 0.0;
  return 1.0 - static_cast<double>(largest_free_block_bytes) / static_cast<double>(free_in_pool_bytes);
}

ArenaResource::ArenaResource(MemoryResource& upstream, ArenaOptions options)
    : upstream_(upstream), options_(options), limit_(ResolveLimit(upstream, options)),
      blocks_(std::make_unique<BestFitBlocks>()) {
  counters_.limit_bytes = limit_;
  if (options_.growth == Growth::kExpandable) {
    vm_ = upstream_.virtual_memory();
    if (vm_ != nullptr && limit_ != kNoLimit) {
      va_bytes_ = RoundUp(limit_, vm_->granularity());
      try {
        va_base_ = reinterpret_cast<uintptr_t>(vm_->reserve(va_bytes_));
      } catch (const OutOfMemory&) {
        va_bytes_ = 0;
      }
    }
    if (va_base_ == 0) {
      vm_ = nullptr;
      options_.growth = Growth::kOnDemand;
    }
  }
  if (options_.growth == Growth::kPreallocate) {
    if (limit_ == kNoLimit) throw std::invalid_argument("arena: preallocation needs a limit");
    MutexLock lock(mu_);
    void* p;
    try {
      p = upstream_.allocate(RoundDown(limit_, kGranule), kGranule);
    } catch (const OutOfMemory& e) {
      OomReport report = report_locked(limit_);
      report.upstream_error = e.report().upstream_error;
      throw OutOfMemory(std::move(report));
    }
    blocks_->add_region(reinterpret_cast<uintptr_t>(p), RoundDown(limit_, kGranule));
    grew_locked(RoundDown(limit_, kGranule));
  }
}

ArenaResource::~ArenaResource() {
  if (vm_ != nullptr) {
    uint64_t end = blocks_->reserved_bytes();
    for (auto chunk = mapped_chunks_.rbegin(); chunk != mapped_chunks_.rend(); ++chunk) {
      end -= *chunk;
      vm_->unmap(reinterpret_cast<void*>(va_base_ + end), *chunk);
    }
    vm_->release(reinterpret_cast<void*>(va_base_), va_bytes_);
    return;
  }
  for (const auto& [base, bytes] : blocks_->regions()) {
    upstream_.deallocate(reinterpret_cast<void*>(base), bytes, kGranule);
  }
}

std::string ArenaResource::name() const {
  return "arena over " + upstream_.name() +
         (limit_ == kNoLimit ? std::string(", no limit") : ", limit " + FormatBytes(limit_)) +
         (vm_ != nullptr ? ", expandable" : "");
}

void ArenaResource::set_listener(ArenaListener* listener) {
  MutexLock lock(mu_);
  listener_ = listener;
}

void* ArenaResource::do_allocate(std::size_t bytes, std::size_t, Stream stream) {
  const uint64_t needed = RoundUp(bytes, kGranule);
  MutexLock lock(mu_);
  ++counters_.allocations;
  std::optional<uintptr_t> addr;
  if (needed >= bytes && needed <= limit_) {  // not wrapped around, not above the cap
    addr = blocks_->allocate(needed);
    if (!addr) {
      std::string upstream_error;
      if (grow_locked(needed, stream, &upstream_error)) {
        addr = blocks_->allocate(needed);
      } else if (release_locked() > 0 && grow_locked(needed, stream, &upstream_error)) {
        addr = blocks_->allocate(needed);
      }
      if (!addr) {
        ++counters_.out_of_memory;
        OomReport report = report_locked(bytes);
        report.upstream_error = upstream_error;
        throw OutOfMemory(std::move(report));
      }
    }
  } else {
    ++counters_.out_of_memory;
    throw OutOfMemory(report_locked(bytes));
  }
  counters_.peak_allocated_bytes = std::max(counters_.peak_allocated_bytes, blocks_->allocated_bytes());
  return reinterpret_cast<void*>(*addr);
}

void ArenaResource::do_deallocate(void* p, std::size_t bytes, std::size_t, Stream) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const uint64_t expected = RoundUp(bytes, kGranule);
  MutexLock lock(mu_);
  std::optional<uint64_t> size = blocks_->free(addr, expected);
  if (!size) {
    throw InvalidDeallocation("arena: deallocate of a pointer that is not live in this arena (double free?)");
  }
  if (*size != expected) {
    throw InvalidDeallocation("arena: deallocate with size " + std::to_string(bytes) +
                              " but the block has " + std::to_string(*size) + " bytes");
  }
  ++counters_.deallocations;
}

bool ArenaResource::expand_locked(uint64_t needed, std::string* upstream_error) {
  const uint64_t granule = vm_->granularity();
  const uint64_t mapped = blocks_->reserved_bytes();
  const uint64_t missing = RoundUp(needed - blocks_->free_tail(va_base_), granule);  // the least that serves
  const uint64_t headroom = RoundDown(std::min(limit_, va_bytes_), granule) - mapped;
  if (missing > headroom) return false;
  const uint64_t step = std::min(std::max(missing, RoundUp(options_.expand_step_bytes, granule)), headroom);
  for (uint64_t size : {step, missing}) {
    try {
      vm_->map(reinterpret_cast<void*>(va_base_ + mapped), size);
    } catch (const OutOfMemory& e) {
      *upstream_error = e.report().upstream_error.empty() ? "upstream refused" : e.report().upstream_error;
      if (size == missing) return false;
      continue;
    }
    if (mapped == 0) {
      blocks_->add_region(va_base_, size, /*grows_at_end=*/true);
    } else {
      blocks_->extend_region(va_base_, size);
    }
    mapped_chunks_.push_back(size);
    grew_locked(size);
    return true;
  }
  return false;
}

bool ArenaResource::grow_locked(uint64_t needed, Stream stream, std::string* upstream_error) {
  if (vm_ != nullptr) return expand_locked(needed, upstream_error);
  const uint64_t reserved = blocks_->reserved_bytes();
  // A preallocating arena that gave its region back (release_unused) takes the whole cap again.
  const uint64_t initial = options_.growth == Growth::kPreallocate ? limit_ : options_.initial_region_bytes;
  const uint64_t first = NextRegionBytes(needed, reserved, limit_, std::max(initial, kGranule),
                                         options_.growth_factor, kGranule);
  if (first == 0) return false;
  for (uint64_t size : BackoffSizes(first, needed, options_.backoff_factor, kGranule)) {
    void* p = nullptr;
    try {
      p = upstream_.allocate(size, kGranule, stream);
    } catch (const OutOfMemory& e) {
      *upstream_error = e.report().upstream_error.empty() ? "upstream refused" : e.report().upstream_error;
      continue;
    } catch (const std::bad_alloc&) {
      *upstream_error = "upstream refused";
      continue;
    }
    blocks_->add_region(reinterpret_cast<uintptr_t>(p), size);
    grew_locked(size);
    return true;
  }
  return false;
}

uint64_t ArenaResource::release_locked() {
  uint64_t released = 0;
  if (vm_ != nullptr) {
    uint64_t tail = blocks_->free_tail(va_base_);
    while (!mapped_chunks_.empty() && mapped_chunks_.back() <= tail) {
      const uint64_t chunk = mapped_chunks_.back();
      blocks_->trim_region(va_base_, chunk);
      mapped_chunks_.pop_back();
      tail -= chunk;
      vm_->unmap(reinterpret_cast<void*>(va_base_ + blocks_->reserved_bytes()), chunk);
      released += chunk;
      released_locked(chunk);
    }
    return released;
  }
  for (const BestFitBlocks::Region& r : blocks_->take_free_regions()) {
    upstream_.deallocate(reinterpret_cast<void*>(r.base), r.bytes, kGranule);
    released += r.bytes;
    released_locked(r.bytes);
  }
  return released;
}

void ArenaResource::grew_locked(uint64_t bytes) {
  ++counters_.grows;
  counters_.peak_reserved_bytes = std::max(counters_.peak_reserved_bytes, blocks_->reserved_bytes());
  if (listener_ != nullptr) listener_->on_grow(bytes);
}

void ArenaResource::released_locked(uint64_t bytes) {
  ++counters_.releases;
  if (listener_ != nullptr) listener_->on_release(bytes);
}

uint64_t ArenaResource::release_unused() {
  MutexLock lock(mu_);
  return release_locked();
}

ArenaStats ArenaResource::stats() const {
  MutexLock lock(mu_);
  ArenaStats s = counters_;
  s.allocated_bytes = blocks_->allocated_bytes();
  s.reserved_bytes = blocks_->reserved_bytes();
  s.free_in_pool_bytes = blocks_->free_bytes();
  s.largest_free_block_bytes = blocks_->largest_free_block();
  s.live_allocations = blocks_->allocated_block_count();
  s.regions = blocks_->region_count();
  s.expandable = vm_ != nullptr;
  return s;
}

OomReport ArenaResource::report_for(uint64_t bytes) const {
  MutexLock lock(mu_);
  return report_locked(bytes);
}

OomReport ArenaResource::report_locked(uint64_t bytes) const {
  OomReport r;
  r.resource = name();
  r.requested_bytes = bytes;
  r.limit_bytes = limit_ == kNoLimit ? 0 : limit_;
  r.allocated_bytes = blocks_->allocated_bytes();
  r.reserved_bytes = blocks_->reserved_bytes();
  r.free_in_pool_bytes = blocks_->free_bytes();
  r.largest_free_block_bytes = blocks_->largest_free_block();
  if (std::optional<DeviceMemory> device = upstream_.device_memory()) {
    r.device_free_bytes = device->free_bytes;
    r.device_total_bytes = device->total_bytes;
  }
  std::vector<LiveAllocation> live;
  blocks_->for_each_allocated([&](uintptr_t addr, uint64_t size) { live.push_back({size, addr, {}}); });
  std::size_t keep = std::min(live.size(), OomReport::kMaxLiveInReport);
  std::partial_sort(live.begin(), live.begin() + keep, live.end(),
                    [](const LiveAllocation& a, const LiveAllocation& b) {
                      return a.bytes != b.bytes ? a.bytes > b.bytes : a.address < b.address;
                    });
  live.resize(keep);
  r.largest_live = std::move(live);
  return r;
}

}  // namespace oomguard::mr
