// TrackingResource: statistics and an event trace for any resource.
//
// Counts current/peak allocated bytes (as requested) and calls, keeps every
// live allocation with an optional tag ("activations", "optimizer state"),
// and records an event trace (alloc/free/grow/release/oom, with sizes and
// times) that Replay() can play back through another resource. Over an
// ArenaResource it also reports reserved bytes, the largest free block and
// fragmentation, and records the arena's grow/release events (it registers
// itself as the arena's listener for its lifetime). An OutOfMemory from the
// upstream is recorded, its report's largest live allocations get their tags,
// and it is rethrown.
//
// Ownership: references the upstream, which must outlive it.
// Thread safety: safe from many threads (one mutex).
#pragma once

#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>


#include "oomguard/mr/arena_resource.h"
#include "oomguard/thread_annotations.h"

namespace oomguard::mr {

enum class EventKind { kAlloc, kFree, kGrow, kRelease, kOom };
const char* ToString(EventKind kind);

struct TraceEvent {
  EventKind kind;
  uint64_t bytes;    // requested bytes (alloc/free/oom) or region bytes (grow/release)
  uint64_t id;       // pairs an alloc with its free; 0 for grow/release/oom
  uint64_t time_ns;  // from the tracker's clock
};

struct TrackingOptions {
  bool record_events = true;
  std::size_t max_events = 1 << 20;  // events past this are counted, not kept
  // Nanoseconds from some fixed point; defaults to std::chrono::steady_clock.
  std::function<uint64_t()> clock;
};

struct TrackingStats {
  uint64_t allocated_bytes = 0, peak_allocated_bytes = 0;
  uint64_t reserved_bytes = 0, peak_reserved_bytes = 0;  // = allocated without an arena
  uint64_t allocations = 0, deallocations = 0, out_of_memory = 0;
  uint64_t live_allocations = 0;
  uint64_t free_in_pool_bytes = 0, largest_free_block_bytes = 0;
  uint64_t dropped_events = 0;
  double fragmentation = 0.0;
};

class TrackingResource final : public MemoryResource, private ArenaListener {
 public:
  explicit TrackingResource(MemoryResource& upstream, TrackingOptions options = {});
  explicit TrackingResource(ArenaResource& arena, TrackingOptions options = {});
  ~TrackingResource() override;
  TrackingResource(const TrackingResource&) = delete;
  TrackingResource& operator=(const TrackingResource&) = delete;

  std::string name() const override { return upstream_.name(); }
  std::size_t max_alignment() const override { return upstream_.max_alignment(); }
  std::optional<DeviceMemory> device_memory() const override { return upstream_.device_memory(); }

  // allocate() with a tag that shows in snapshots and OOM reports.
  void* allocate_tagged(std::size_t bytes, std::string_view tag, std::size_t alignment = kDefaultAlignment,
                        Stream stream = nullptr);

  TrackingStats stats() const;
  std::vector<LiveAllocation> live_allocations() const;  // largest first
  std::vector<TraceEvent> events() const;
  // JSON text: {"stats":{...}, "live":[{"bytes","address","tag"}...], "events":N}
  std::string snapshot() const;

 private:
  struct Live {
    uint64_t bytes;
    uint64_t id;
    std::string tag;
  };

  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override;
  void on_grow(uint64_t bytes) override;
  void on_release(uint64_t bytes) override;
  void* allocate_impl(std::size_t bytes, std::string_view tag, std::size_t alignment, Stream stream);
  void record_locked(EventKind kind, uint64_t bytes, uint64_t id) REQUIRES(mu_);

  MemoryResource& upstream_;
  ArenaResource* arena_ = nullptr;
  TrackingOptions options_;
  mutable Mutex mu_;
  std::unordered_map<void*, Live> live_ GUARDED_BY(mu_);
  std::vector<TraceEvent> events_ GUARDED_BY(mu_);
  TrackingStats stats_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
};

// Plays the alloc/free events of a trace through `resource` (grow/release/oom
// events are consequences, not requests, and are skipped). An allocation that
// throws OutOfMemory is counted and its free skipped. Frees what is still live
// at the end.
struct ReplayResult {
  uint64_t allocations = 0, deallocations = 0, out_of_memory = 0;
  uint64_t peak_live_bytes = 0;
};
ReplayResult Replay(const std::vector<TraceEvent>& events, MemoryResource& resource);

}  // namespace oomguard::mr
