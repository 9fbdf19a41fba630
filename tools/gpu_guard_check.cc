// GPU-machine check of the guard part over the real CUDA driver (run by
// tools/gpu_guard_check.sh; needs libcuda.so.1 and one GPU). Writes one JSON
// object to stdout:
//   device: total/free from cuMemGetInfo_v2
//   arena_cap: an arena capped at 25 % of the device allocates 64 MiB blocks to
//     the cap; the OOM report (JSON) and whether reserved stayed <= the cap
//   growth: an on-demand arena's reserved bytes after one small allocation
//   release: device free bytes before, while holding, and after release_unused()
//   pinned: a pinned pool capped at 1 GiB: fill to the cap, fallback warning;
//     back-off: a first region of 8 GiB (TensorFlow's), sizes tried until one is pinned
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

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
  {  // Growth and release.
    uint64_t before = DeviceFree(**device);
    ArenaResource arena(**device, ArenaOptions{.initial_region_bytes = 2 * MiB});
    void* small = arena.allocate(1 * MiB);
    uint64_t after_small = arena.stats().reserved_bytes;
    void* big = arena.allocate(1 * GiB);
    uint64_t holding = DeviceFree(**device);
    arena.deallocate(big, 1 * GiB);
    arena.deallocate(small, 1 * MiB);
    uint64_t released = arena.release_unused();
    uint64_t after = DeviceFree(**device);
    out["growth"] = {{"reserved_after_1MiB", after_small}};
    out["release"] = {{"device_free_before", before}, {"device_free_holding", holding},
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
