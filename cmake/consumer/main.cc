// Uses oomguard through its installed headers and libraries: parses an allocator
// configuration, allocates through an arena over a simulated device, checks a byte budget.
// Prints "ok" and exits 0 when everything behaves.
#include <cstdio>

#include "oomguard/feed/byte_budget.h"
#include "oomguard/mr/alloc_conf.h"
#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/simulated_device_resource.h"

int main() {
  auto conf = oomguard::mr::ParseAllocConf("limit=64MiB,growth=regions");
  if (!conf || *conf->limit_bytes != (64u << 20)) return 1;
  if (oomguard::mr::ParseAllocConf("limt=1GiB")) return 2;
  oomguard::mr::SimulatedDeviceOptions device_options;
  device_options.capacity_bytes = 1u << 30;
  oomguard::mr::SimulatedDeviceResource device(device_options);
  oomguard::mr::ArenaOptions options;
  options.limit_bytes = 64u << 20;
  oomguard::mr::ArenaResource arena(device, options);
  void* p = arena.allocate(1 << 20);
  arena.deallocate(p, 1 << 20);
  oomguard::feed::ByteBudget budget(1000);
  if (!budget.TryReserve(600) || budget.TryReserve(600)) return 3;
  budget.Release(600);
  std::puts("ok");
  return 0;
}
