#include "oomguard/mr/tracking_resource.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "report_json.h"

namespace oomguard::mr {
namespace {

uint64_t SteadyNowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

const char* ToString(EventKind kind) {
  switch (kind) {
    case EventKind::kAlloc: return "alloc";
    case EventKind::kFree: return "free";
    case EventKind::kGrow: return "grow";
    case EventKind::kRelease: return "release";
    case EventKind::kOom: return "oom";
  }
  return "unknown";
}

TrackingResource::TrackingResource(MemoryResource& upstream, TrackingOptions options)
    : upstream_(upstream), options_(std::move(options)) {
  if (!options_.clock) options_.clock = SteadyNowNs;
}

TrackingResource::TrackingResource(ArenaResource& arena, TrackingOptions options)
    : TrackingResource(static_cast<MemoryResource&>(arena), std::move(options)) {
  arena_ = &arena;
  arena_->set_listener(this);
}

TrackingResource::~TrackingResource() {
  if (arena_ != nullptr) arena_->set_listener(nullptr);
}

void TrackingResource::record_locked(EventKind kind, uint64_t bytes, uint64_t id) {
  if (!options_.record_events) return;
  if (events_.size() >= options_.max_events) {
    ++stats_.dropped_events;
    return;
  }
  events_.push_back({kind, bytes, id, options_.clock()});
}

// Called by the arena with its lock held; we take only our own lock.
void TrackingResource::on_grow(uint64_t bytes) {
  MutexLock lock(mu_);
  record_locked(EventKind::kGrow, bytes, 0);
}

void TrackingResource::on_release(uint64_t bytes) {
  MutexLock lock(mu_);
  record_locked(EventKind::kRelease, bytes, 0);
}

void* TrackingResource::allocate_tagged(std::size_t bytes, std::string_view tag, std::size_t alignment,
                                        Stream stream) {
  if (bytes == 0) return allocate(0, alignment, stream);  // argument checks, nullptr
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > max_alignment()) {
    return allocate(bytes, alignment, stream);  // throws the standard invalid_argument
  }
  return allocate_impl(bytes, tag, alignment, stream);
}

void* TrackingResource::do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) {
  return allocate_impl(bytes, {}, alignment, stream);
}

void* TrackingResource::allocate_impl(std::size_t bytes, std::string_view tag, std::size_t alignment,
                                      Stream stream) {
  void* p;
  try {
    p = upstream_.allocate(bytes, alignment, stream);
  } catch (const OutOfMemory& e) {
    OomReport report = e.report();
    MutexLock lock(mu_);
    ++stats_.out_of_memory;
    record_locked(EventKind::kOom, bytes, 0);
    for (LiveAllocation& a : report.largest_live) {
      auto it = live_.find(reinterpret_cast<void*>(a.address));
      if (it != live_.end()) a.tag = it->second.tag;
    }
    throw OutOfMemory(std::move(report));
  }
  MutexLock lock(mu_);
  uint64_t id = next_id_++;
  live_.emplace(p, Live{bytes, id, std::string(tag)});
  ++stats_.allocations;
  stats_.allocated_bytes += bytes;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  record_locked(EventKind::kAlloc, bytes, id);
  return p;
}

void TrackingResource::do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) {
  // Forget the pointer before the upstream can hand it out again to another thread.
  Live entry;
  {
    MutexLock lock(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      throw InvalidDeallocation("tracking: deallocate of a pointer that is not live (double free?)");
    }
    entry = std::move(it->second);
    live_.erase(it);
  }
  try {
    upstream_.deallocate(p, bytes, alignment, stream);
  } catch (...) {  // e.g. a size mismatch: the allocation is still live
    MutexLock lock(mu_);
    live_.emplace(p, std::move(entry));
    throw;
  }
  MutexLock lock(mu_);
  stats_.allocated_bytes -= entry.bytes;
  ++stats_.deallocations;
  record_locked(EventKind::kFree, bytes, entry.id);
}

TrackingStats TrackingResource::stats() const {
  TrackingStats s;
  {
    MutexLock lock(mu_);
    s = stats_;
    s.live_allocations = live_.size();
  }
  if (arena_ != nullptr) {
    ArenaStats a = arena_->stats();
    s.reserved_bytes = a.reserved_bytes;
    s.peak_reserved_bytes = a.peak_reserved_bytes;
    s.free_in_pool_bytes = a.free_in_pool_bytes;
    s.largest_free_block_bytes = a.largest_free_block_bytes;
    s.fragmentation = a.fragmentation();
  } else {
    s.reserved_bytes = s.allocated_bytes;
    s.peak_reserved_bytes = s.peak_allocated_bytes;
  }
  return s;
}

std::vector<LiveAllocation> TrackingResource::live_allocations() const {
  std::vector<LiveAllocation> live;
  {
    MutexLock lock(mu_);
    live.reserve(live_.size());
    for (const auto& [p, l] : live_) live.push_back({l.bytes, reinterpret_cast<uintptr_t>(p), l.tag});
  }
  std::sort(live.begin(), live.end(), [](const LiveAllocation& a, const LiveAllocation& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.address < b.address;
  });
  return live;
}

std::vector<TraceEvent> TrackingResource::events() const {
  MutexLock lock(mu_);
  return events_;
}

std::string TrackingResource::snapshot() const {
  TrackingStats s = stats();
  nlohmann::json live = nlohmann::json::array();
  for (const LiveAllocation& a : live_allocations()) {
    live.push_back({{"bytes", a.bytes}, {"address", a.address}, {"tag", a.tag}});
  }
  std::size_t events;
  {
    MutexLock lock(mu_);
    events = events_.size();
  }
  nlohmann::json snapshot = {{"resource", name()},
                             {"stats",
                              {{"allocated_bytes", s.allocated_bytes},
                               {"peak_allocated_bytes", s.peak_allocated_bytes},
                               {"reserved_bytes", s.reserved_bytes},
                               {"peak_reserved_bytes", s.peak_reserved_bytes},
                               {"allocations", s.allocations},
                               {"deallocations", s.deallocations},
                               {"out_of_memory", s.out_of_memory},
                               {"live_allocations", s.live_allocations},
                               {"free_in_pool_bytes", s.free_in_pool_bytes},
                               {"largest_free_block_bytes", s.largest_free_block_bytes},
                               {"fragmentation", s.fragmentation},
                               {"dropped_events", s.dropped_events}}},
                             {"live", live},
                             {"events", events}};
  return snapshot.dump();
}

ReplayResult Replay(const std::vector<TraceEvent>& events, MemoryResource& resource) {
  ReplayResult result;
  std::unordered_map<uint64_t, std::pair<void*, uint64_t>> live;
  uint64_t live_bytes = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == EventKind::kAlloc) {
      try {
        void* p = resource.allocate(e.bytes);
        live[e.id] = {p, e.bytes};
        live_bytes += e.bytes;
        result.peak_live_bytes = std::max(result.peak_live_bytes, live_bytes);
        ++result.allocations;
      } catch (const OutOfMemory&) {
        ++result.out_of_memory;
      }
    } else if (e.kind == EventKind::kFree) {
      auto it = live.find(e.id);
      if (it == live.end()) continue;
      resource.deallocate(it->second.first, it->second.second);
      live_bytes -= it->second.second;
      live.erase(it);
      ++result.deallocations;
    }
  }
  for (auto& [id, a] : live) resource.deallocate(a.first, a.second);
  return result;
}

nlohmann::json ToJson(const std::vector<TraceEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const TraceEvent& e : events) {
    out.push_back({{"kind", ToString(e.kind)}, {"bytes", e.bytes}, {"id", e.id}, {"time_ns", e.time_ns}});
  }
  return out;
}

}  // namespace oomguard::mr
