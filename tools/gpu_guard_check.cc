// GPU-machine check of the guard part over the real CUDA driver (run by
// tools/gpu_guard_check.sh; needs libcuda.so.1 and one GPU). Writes one JSON
// object to stdout:
//   device: total/free from cuMemGetInfo_v2
//   arena_cap: an arena capped at 25 % of the device allocates 64 MiB blocks to
//     the cap; the OOM report (JSON) and whether reserved stayed <= the cap
//   virtual_memory: whether the driver's virtual memory calls work on device 0
//     (probed by CudaDeviceResource) and its granularity
//   growth: reserved bytes after one small allocation, expandable and regions
//   reuse: 2 x 512 MiB allocated and freed, then 1 GiB: peak reserved with
//     expandable growth (one range: no new memory) and with regions (a third region)
//   release: device free bytes before, while holding, and after release_unused()
//   pinned: a pinned pool capped at 1 GiB: fill to the cap, fallback warning;
//     back-off: a first region of 8 GiB (TensorFlow's), sizes tried until one is pinned
#include <algorithm>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "mr/report_json.h"

#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/cuda_device_resource.h"
#include "oomguard/mr/host_resource.h"
#include "oomguard/mr/pinned_host_pool.h"
#include "oomguard/mr/pinned_host_resource.h"

using namespace oomguard::mr;

namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;

// Records the sizes asked of an upstream (to show the back-off sequence) and
// refuses sizes above `refuse_above`, standing in for an OS that will not lock
// more (asking the real driver to pin near all of RAM could invite the OOM killer).
class RecordingResource final : public MemoryResource {
 public:
  RecordingResource(MemoryResource& upstream, uint64_t refuse_above)
      : upstream_(upstream), refuse_above_(refuse_above) {}
  std::string name() const override { return upstream_.name(); }
  std::size_t max_alignment() const override { return upstream_.max_alignment(); }
  std::vector<nlohmann::json> tried;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment, Stream stream) override {
    if (bytes > refuse_above_) {
      tried.push_back({{"bytes", bytes}, {"ok", false}, {"error", "refused by the check (emulated lock limit)"}});
      OomReport r;
      r.resource = name();
      r.requested_bytes = bytes;
      r.upstream_error = "emulated lock limit";
      throw OutOfMemory(r);
    }
    try {
      void* p = upstream_.allocate(bytes, alignment, stream);
      tried.push_back({{"bytes", bytes}, {"ok", true}});
      return p;
    } catch (const OutOfMemory& e) {
      tried.push_back({{"bytes", bytes}, {"ok", false}, {"error", e.report().upstream_error}});
      throw;
    }
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment, Stream stream) override {
    upstream_.deallocate(p, bytes, alignment, stream);
  }
  MemoryResource& upstream_;
  uint64_t refuse_above_;
};

uint64_t DeviceFree(const MemoryResource& device) { return device.device_memory()->free_bytes; }

}  // namespace

int main() {
  nlohmann::json out;
  auto driver = LoadCudaDriver();
  if (!driver.ok()) {
    std::fprintf(stderr, "gpu_guard_check: %s\n", driver.error().c_str());
    return 2;
  }
  auto device = CudaDeviceResource::Open(**driver, 0);
  if (!device.ok()) {
    std::fprintf(stderr, "gpu_guard_check: %s\n", device.error().c_str());
    return 2;
  }
  DeviceMemory m = *(*device)->device_memory();
  out["device"] = {{"total_bytes", m.total_bytes}, {"free_bytes", m.free_bytes}};
  // 1 GiB on a real GPU; a quarter of a small (stand-in) device.
  const uint64_t big_bytes = std::min<uint64_t>(1 * GiB, m.total_bytes / 4 / MiB * MiB);
  VirtualMemory* vm = (*device)->virtual_memory();
  out["virtual_memory"] = {{"available", vm != nullptr}, {"granularity", vm ? vm->granularity() : 0}};
  for (Growth growth : {Growth::kExpandable, Growth::kOnDemand}) {
    const char* name = GrowthName(growth);
    try {
      const uint64_t half = big_bytes / 2;
      ArenaResource arena(**device, ArenaOptions{.growth = growth, .initial_region_bytes = half});
      void* a = arena.allocate(half);
      void* b = arena.allocate(half);
      arena.deallocate(a, half);
      arena.deallocate(b, half);
      void* c = arena.allocate(big_bytes);
      out["reuse"][name] = {{"expandable_in_effect", arena.stats().expandable},
                            {"two_blocks_then_one_of_bytes", big_bytes},
                            {"peak_reserved_bytes", arena.stats().peak_reserved_bytes},
                            {"grows", arena.stats().grows}};
      arena.deallocate(c, big_bytes);
    } catch (const std::exception& e) {
      out["reuse"][name] = {{"error", e.what()}};
    }
  }

  {  // Allocate to the cap.
    ArenaResource arena(**device, ArenaOptions{.limit_fraction = 0.25});
    std::vector<void*> blocks;
    nlohmann::json cap = {{"limit_bytes", arena.limit_bytes()}};
    try {
      for (;;) blocks.push_back(arena.allocate(64 * MiB));
    } catch (const OutOfMemory& e) {
      cap["blocks_of_64MiB"] = blocks.size();
      cap["report"] = ToJson(e.report());
      cap["report_text"] = e.what();
    }
    ArenaStats s = arena.stats();
    cap["peak_reserved_bytes"] = s.peak_reserved_bytes;
    cap["reserved_within_cap"] = s.peak_reserved_bytes <= arena.limit_bytes();
    for (void* p : blocks) arena.deallocate(p, 64 * MiB);
    out["arena_cap"] = cap;
  }
  for (Growth growth : {Growth::kExpandable, Growth::kOnDemand}) {  // Growth and release.
    const char* name = GrowthName(growth);
    uint64_t before = DeviceFree(**device);
    ArenaResource arena(**device, ArenaOptions{.growth = growth, .initial_region_bytes = 2 * MiB});
    void* small = arena.allocate(1 * MiB);
    uint64_t after_small = arena.stats().reserved_bytes;
    void* big = arena.allocate(big_bytes);
    uint64_t holding = DeviceFree(**device);
    arena.deallocate(big, big_bytes);
    arena.deallocate(small, 1 * MiB);
    uint64_t released = arena.release_unused();
    uint64_t after = DeviceFree(**device);
    out["growth"][name] = {{"reserved_after_1MiB", after_small}};
    out["release"][name] = {{"device_free_before", before}, {"device_free_holding", holding},
                            {"released_bytes", released}, {"device_free_after", after},
                            {"returned_to_device", before - after < 64 * MiB}};
  }
  {  // Pinned pool: cap, fallback, back-off.
    auto pinned = PinnedHostResource::Open(**driver, 0);
    if (!pinned.ok()) {
      out["pinned"] = {{"error", pinned.error()}};
    } else {
      HostResource pageable;
      nlohmann::json pj;
      {
        PinnedHostPool pool(**pinned, pageable, PinnedPoolOptions{.limit_bytes = 1 * GiB, .initial_region_bytes = 256 * MiB});
        std::vector<void*> blocks;
        for (int i = 0; i < 6; ++i) blocks.push_back(pool.allocate(200 * MiB));
        pj["cap_bytes"] = 1 * GiB;
        pj["peak_reserved_bytes"] = pool.stats().peak_reserved_bytes;
        pj["fallback_allocations"] = pool.fallback_allocations();
        pj["fallback_warning"] = pool.fallback_warning().value_or("");
        for (void* p : blocks) pool.deallocate(p, 200 * MiB);
        pj["released_bytes"] = pool.release_unused();
      }
      {
        // TensorFlow's case: a first pinned region of 8 GiB; here the OS "locks" at most 2 GiB.
        RecordingResource recording(**pinned, 2 * GiB);
        PinnedHostPool pool(recording, pageable,
                            PinnedPoolOptions{.limit_bytes = 64 * GiB, .fallback = PinnedFallback::kFail,
                                              .initial_region_bytes = 8 * GiB});
        try {
          void* p = pool.allocate(64 * MiB);
          pool.deallocate(p, 64 * MiB);
          pj["backoff_succeeded"] = true;
        } catch (const OutOfMemory& e) {
          pj["backoff_succeeded"] = false;
          pj["backoff_report"] = ToJson(e.report());
        }
        pj["backoff_sizes_tried"] = recording.tried;
      }
      out["pinned"] = pj;
    }
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
