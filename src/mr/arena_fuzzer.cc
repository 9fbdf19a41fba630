// libFuzzer target: the bytes before the first NUL are an OOMGUARD_ALLOC_CONF
// text (the parser must never crash and must accept what it documents); the
// rest drives alloc/free/release on an arena over a small simulated device
// with failure injection, checking its accounting after every step. The first
// byte after the NUL picks the growth: expandable (4 KiB pages) or regions.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "oomguard/mr/alloc_conf.h"
#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/simulated_device_resource.h"

using namespace oomguard::mr;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::size_t nul = all.find('\0');
  std::string_view conf_text = all.substr(0, nul);
  oomguard::Result<AllocConf> conf = ParseAllocConf(conf_text);
  if (conf.ok() && conf->fraction && !(*conf->fraction > 0 && *conf->fraction <= 1)) std::abort();
  if (conf.ok() && conf->fraction && conf->limit_bytes) std::abort();
  if (nul == std::string_view::npos) return 0;

  if (nul + 1 >= size) return 0;
  const Growth growth = data[nul + 1] % 2 ? Growth::kOnDemand : Growth::kExpandable;
  SimulatedDeviceOptions device_options;
  device_options.capacity_bytes = 512 << 10;
  device_options.fail_every_nth = 7;
  device_options.granularity_bytes = 4096;
  SimulatedDeviceResource device(device_options);
  {
    ArenaResource arena(device, ArenaOptions{.growth = growth, .initial_region_bytes = 4096,
                                             .growth_factor = 0.5, .expand_step_bytes = 4096});
    if (arena.stats().expandable != (growth == Growth::kExpandable)) std::abort();
    std::vector<std::pair<void*, std::size_t>> live;
    for (std::size_t i = nul + 2; i + 2 < size; i += 3) {
      uint32_t v = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16);
      if ((v & 1) == 0 && (v >> 1) % 32 == 0) {
        arena.release_unused();
        if (device.used_bytes() != arena.stats().reserved_bytes) std::abort();
      } else if ((v & 1) && !live.empty()) {
        std::size_t k = (v >> 1) % live.size();
        arena.deallocate(live[k].first, live[k].second);
        live[k] = live.back();
        live.pop_back();
      } else {
        std::size_t bytes = (v >> 1) % (64 << 10) + 1;
        try {
          live.push_back({arena.allocate(bytes), bytes});
        } catch (const OutOfMemory& e) {
          if (e.report().requested_bytes != bytes) std::abort();
        }
      }
      ArenaStats s = arena.stats();
      if (s.allocated_bytes + s.free_in_pool_bytes != s.reserved_bytes) std::abort();
      if (s.reserved_bytes > arena.limit_bytes() || s.live_allocations != live.size()) std::abort();
      if (s.largest_free_block_bytes > s.free_in_pool_bytes) std::abort();
    }
    for (auto& [p, n] : live) arena.deallocate(p, n);
    if (arena.stats().allocated_bytes != 0) std::abort();
    arena.release_unused();
    if (arena.stats().reserved_bytes != 0 || device.used_bytes() != 0) std::abort();
  }
  if (device.used_bytes() != 0 || device.reserved_ranges() != 0) std::abort();
  return 0;
}
