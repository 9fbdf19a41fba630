#include "oomguard/mr/arena_resource.h"

#include <gtest/gtest.h>

#include "oomguard/mr/growth.h"
#include "oomguard/mr/host_resource.h"
#include "oomguard/mr/simulated_device_resource.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t KiB = 1ull << 10, MiB = 1ull << 20, GiB = 1ull << 30;

SimulatedDeviceOptions Device(uint64_t capacity) {
  SimulatedDeviceOptions o;
  o.capacity_bytes = capacity;
  return o;
}

struct RecordingListener : ArenaListener {
  std::vector<std::pair<char, uint64_t>> events;
  void on_grow(uint64_t bytes) override { events.push_back({'g', bytes}); }
  void on_release(uint64_t bytes) override { events.push_back({'r', bytes}); }
};

TEST(ArenaResource, GrowsOnDemandFromASmallFirstRegion) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kOnDemand, .initial_region_bytes = 1 * MiB});
  EXPECT_EQ(arena.stats().reserved_bytes, 0u);
  void* a = arena.allocate(100 * KiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 1 * MiB);
  EXPECT_EQ(device.used_bytes(), 1 * MiB);
  void* b = arena.allocate(2 * MiB);  // does not fit: grows by what it needs (more than doubling)
  ArenaStats s = arena.stats();
  EXPECT_EQ(s.reserved_bytes, 3 * MiB);
  EXPECT_EQ(s.regions, 2u);
  EXPECT_EQ(s.allocated_bytes, 100 * KiB + 2 * MiB);
  void* c = arena.allocate(500 * KiB);  // fits in the first region's rest
  EXPECT_EQ(arena.stats().reserved_bytes, 3 * MiB);
  arena.deallocate(a, 100 * KiB);
  arena.deallocate(b, 2 * MiB);
  arena.deallocate(c, 500 * KiB);
  EXPECT_EQ(arena.stats().peak_allocated_bytes, 100 * KiB + 2 * MiB + 500 * KiB);
  EXPECT_EQ(arena.release_unused(), 3 * MiB);
  EXPECT_EQ(device.used_bytes(), 0u);
}

TEST(ArenaResource, RoundsEveryRequestTo256Bytes) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device);
  void* p = arena.allocate(1);
  void* q = arena.allocate(257);
  EXPECT_EQ(static_cast<char*>(q) - static_cast<char*>(p), 256);
  EXPECT_EQ(arena.stats().allocated_bytes, 256u + 512u);
  arena.deallocate(p, 1);
  arena.deallocate(q, 257);
}

TEST(ArenaResource, PreallocatesTheWholeLimit) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kPreallocate, .limit_fraction = 0.25});
  EXPECT_EQ(arena.limit_bytes(), 256 * MiB);
  EXPECT_EQ(device.used_bytes(), 256 * MiB);
  EXPECT_EQ(arena.stats().regions, 1u);
  void* p = arena.allocate(200 * MiB);
  EXPECT_EQ(device.allocate_calls(), 1u);  // no more upstream calls
  arena.deallocate(p, 200 * MiB);
  EXPECT_EQ(arena.release_unused(), 256 * MiB);
  p = arena.allocate(1 * MiB);  // takes the whole cap again, not a small region
  EXPECT_EQ(arena.stats().reserved_bytes, 256 * MiB);
  arena.deallocate(p, 1 * MiB);
}

TEST(ArenaResource, PreallocationThatDoesNotFitThrowsOutOfMemory) {
  SimulatedDeviceResource device(Device(1 * GiB));
  device.set_held_by_others(900 * MiB);
  try {
    ArenaResource arena(device, ArenaOptions{.growth = Growth::kPreallocate, .limit_fraction = 0.5});
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().requested_bytes, 512 * MiB);
    EXPECT_EQ(e.report().upstream_error, "CUDA_ERROR_OUT_OF_MEMORY (simulated device full)");
  }
}

TEST(ArenaResource, LimitFractionNeedsADeviceAndAValidFraction) {
  HostResource host;
  EXPECT_THROW(ArenaResource(host, ArenaOptions{.limit_fraction = 0.5}), std::invalid_argument);
  SimulatedDeviceResource device(Device(1 * GiB));
  EXPECT_THROW(ArenaResource(device, ArenaOptions{.limit_fraction = 1.5}), std::invalid_argument);
  EXPECT_EQ(ArenaResource(host).limit_bytes(), kNoLimit);
  EXPECT_EQ(ArenaResource(device).limit_bytes(), 1 * GiB);  // a device: its total
}

TEST(ArenaResource, RequestAboveTheCapSaysCapTooLow) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.limit_bytes = 64 * MiB});
  try {
    arena.allocate(100 * MiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().verdict(), OomVerdict::kCapTooLow);
    EXPECT_EQ(e.report().limit_bytes, 64 * MiB);
    EXPECT_EQ(e.report().device_free_bytes, 1 * GiB);
  }
  EXPECT_EQ(arena.stats().out_of_memory, 1u);
  EXPECT_EQ(device.allocate_calls(), 0u);  // never asked the device for more than the cap
}

TEST(ArenaResource, FragmentedPoolSaysFragmentationWithTheNumbers) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kPreallocate, .limit_bytes = 1 * MiB});
  std::vector<void*> quarter;
  for (int i = 0; i < 4; ++i) quarter.push_back(arena.allocate(256 * KiB));
  arena.deallocate(quarter[0], 256 * KiB);
  arena.deallocate(quarter[2], 256 * KiB);
  try {
    arena.allocate(512 * KiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    const OomReport& r = e.report();
    EXPECT_EQ(r.verdict(), OomVerdict::kFragmentation);
    EXPECT_EQ(r.free_in_pool_bytes, 512 * KiB);
    EXPECT_EQ(r.largest_free_block_bytes, 256 * KiB);
    EXPECT_DOUBLE_EQ(r.fragmentation(), 0.5);
    ASSERT_EQ(r.largest_live.size(), 2u);
    EXPECT_EQ(r.largest_live[0].address, reinterpret_cast<uintptr_t>(quarter[1]));
    EXPECT_EQ(r.resource, "arena over simulated device (1.00 GiB), limit 1.00 MiB");
  }
  arena.deallocate(quarter[1], 256 * KiB);
  arena.deallocate(quarter[3], 256 * KiB);
  void* whole = arena.allocate(1 * MiB);  // merged back into one block
  arena.deallocate(whole, 1 * MiB);
}

TEST(ArenaResource, FullDeviceSaysTrulyFull) {
  SimulatedDeviceResource device(Device(4 * MiB));
  ArenaResource arena(device, ArenaOptions{.initial_region_bytes = 4 * MiB});
  void* p = arena.allocate(4 * MiB);
  try {
    arena.allocate(1 * MiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().verdict(), OomVerdict::kTrulyFull);
    EXPECT_EQ(e.report().device_free_bytes, 0u);
  }
  arena.deallocate(p, 4 * MiB);
}

TEST(ArenaResource, OtherProcessesHoldingTheDeviceSaysUpstreamRefused) {
  SimulatedDeviceResource device(Device(8 * MiB));
  device.set_held_by_others(6 * MiB);
  ArenaResource arena(device, ArenaOptions{.limit_bytes = 8 * MiB});
  try {
    arena.allocate(4 * MiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().verdict(), OomVerdict::kUpstreamFailed);
    EXPECT_EQ(e.report().upstream_error, "CUDA_ERROR_OUT_OF_MEMORY (simulated device full)");
    EXPECT_EQ(e.report().device_free_bytes, 2 * MiB);
  }
}

TEST(ArenaResource, BacksOffToWhatTheRequestNeedsWhenTheUpstreamRefusesAFullRegion) {
  SimulatedDeviceResource device(Device(16 * MiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kOnDemand, .initial_region_bytes = 8 * MiB});
  device.set_held_by_others(11 * MiB);  // 5 MiB left: 8 MiB refused, 4 MiB taken
  void* p = arena.allocate(3 * MiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 4 * MiB);
  EXPECT_EQ(device.allocate_calls(), 2u);
  arena.deallocate(p, 3 * MiB);
}

TEST(ArenaResource, ReleasesFreeRegionsAndRetriesBeforeGivingUp) {
  SimulatedDeviceResource device(Device(64 * MiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kOnDemand, .initial_region_bytes = 1 * MiB});
  RecordingListener listener;
  arena.set_listener(&listener);
  void* a = arena.allocate(40 * MiB);
  arena.deallocate(a, 40 * MiB);  // 40 MiB region stays reserved, free
  void* b = arena.allocate(50 * MiB);  // 40 + 50 > 64: release the free region, then grow
  ArenaStats s = arena.stats();
  EXPECT_EQ(s.reserved_bytes, 50 * MiB);
  EXPECT_EQ(s.releases, 1u);
  EXPECT_EQ(listener.events, (std::vector<std::pair<char, uint64_t>>{
                                 {'g', 40 * MiB}, {'r', 40 * MiB}, {'g', 50 * MiB}}));
  arena.deallocate(b, 50 * MiB);
  arena.set_listener(nullptr);
}

TEST(ArenaResource, RejectsDoubleFreeUnknownPointersAndWrongSizes) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device);
  void* p = arena.allocate(1000);
  try {
    arena.deallocate(p, 5000);
    FAIL();
  } catch (const InvalidDeallocation& e) {
    EXPECT_STREQ(e.what(), "arena: deallocate with size 5000 but the block has 1024 bytes");
  }
  arena.deallocate(p, 1000);
  try {
    arena.deallocate(p, 1000);
    FAIL();
  } catch (const InvalidDeallocation& e) {
    EXPECT_STREQ(e.what(), "arena: deallocate of a pointer that is not live in this arena (double free?)");
  }
  int local;
  EXPECT_THROW(arena.deallocate(&local, 4), InvalidDeallocation);
  EXPECT_EQ(arena.stats().allocated_bytes, 0u);
}

TEST(ArenaResource, DestructorReturnsEverythingToTheUpstream) {
  for (Growth growth : {Growth::kExpandable, Growth::kOnDemand}) {
    SimulatedDeviceResource device(Device(1 * GiB));
    {
      ArenaResource arena(device, ArenaOptions{.growth = growth});
      void* p = arena.allocate(10 * MiB);
      arena.deallocate(p, 10 * MiB);
      EXPECT_GT(device.used_bytes(), 0u);
      EXPECT_EQ(device.reserved_ranges(), growth == Growth::kExpandable ? 1u : 0u);
    }
    EXPECT_EQ(device.used_bytes(), 0u);
    EXPECT_EQ(device.live_allocations(), 0u);
    EXPECT_EQ(device.reserved_ranges(), 0u);  // the expandable arena's address range is released too
  }
}

// ---- Expandable growth: one address range, mapped at its end as requests need.

TEST(ArenaExpandable, GrowsOneContiguousRangeByWhatTheRequestStillNeeds) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device);
  ASSERT_TRUE(arena.stats().expandable);
  EXPECT_NE(arena.name().find("expandable"), std::string::npos);
  void* a = arena.allocate(1 * MiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 2 * MiB);  // one 2 MiB step
  void* b = arena.allocate(3 * MiB);  // 1 MiB free at the end: maps 2 MiB more, not 3
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), static_cast<std::ptrdiff_t>(1 * MiB));
  ArenaStats s = arena.stats();
  EXPECT_EQ(s.reserved_bytes, 4 * MiB);
  EXPECT_EQ(s.regions, 1u);
  EXPECT_EQ(s.grows, 2u);
  EXPECT_EQ(device.map_calls(), 2u);
  EXPECT_EQ(device.used_bytes(), 4 * MiB);
  arena.deallocate(a, 1 * MiB);
  arena.deallocate(b, 3 * MiB);
}

// The case separate regions cannot serve: memory freed in two places is one
// block in an expandable arena, so a larger request needs no new memory.
TEST(ArenaExpandable, FreedNeighboursServeALargerRequestWhereRegionsNeedMore) {
  for (Growth growth : {Growth::kExpandable, Growth::kOnDemand}) {
    SimulatedDeviceResource device(Device(1 * GiB));
    ArenaResource arena(device, ArenaOptions{.growth = growth, .initial_region_bytes = 2 * MiB});
    void* a = arena.allocate(2 * MiB);
    void* b = arena.allocate(2 * MiB);
    arena.deallocate(a, 2 * MiB);
    arena.deallocate(b, 2 * MiB);
    void* c = arena.allocate(4 * MiB);
    if (growth == Growth::kExpandable) {
      EXPECT_EQ(arena.stats().peak_reserved_bytes, 4 * MiB);
      EXPECT_EQ(c, a);
    } else {
      EXPECT_EQ(arena.stats().peak_reserved_bytes, 8 * MiB);  // 2 + 2, then a third region of 4
    }
    arena.deallocate(c, 4 * MiB);
  }
}

TEST(ArenaExpandable, ReleaseUnmapsOnlyTheFreeEnd) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.expand_step_bytes = 2 * MiB});
  RecordingListener listener;
  arena.set_listener(&listener);
  void* a = arena.allocate(2 * MiB);
  void* b = arena.allocate(2 * MiB);
  void* c = arena.allocate(2 * MiB);
  arena.deallocate(b, 2 * MiB);  // a hole in the middle stays mapped
  EXPECT_EQ(arena.release_unused(), 0u);
  arena.deallocate(c, 2 * MiB);  // now b and c are the free end
  EXPECT_EQ(arena.release_unused(), 4 * MiB);
  EXPECT_EQ(device.used_bytes(), 2 * MiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 2 * MiB);
  arena.deallocate(a, 2 * MiB);
  EXPECT_EQ(arena.release_unused(), 2 * MiB);
  ArenaStats s = arena.stats();
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.regions, 0u);
  EXPECT_EQ(device.used_bytes(), 0u);
  void* d = arena.allocate(1 * MiB);  // maps again from the start of the range
  EXPECT_EQ(d, a);
  arena.deallocate(d, 1 * MiB);
  arena.set_listener(nullptr);
  EXPECT_EQ(listener.events, (std::vector<std::pair<char, uint64_t>>{{'g', 2 * MiB}, {'g', 2 * MiB},
                                                                     {'g', 2 * MiB}, {'r', 2 * MiB},
                                                                     {'r', 2 * MiB}, {'r', 2 * MiB},
                                                                     {'g', 2 * MiB}}));
}

TEST(ArenaExpandable, MapsLessThanAStepWhenTheDeviceIsNearlyFull) {
  SimulatedDeviceResource device(Device(64 * MiB));
  ArenaResource arena(device, ArenaOptions{.expand_step_bytes = 32 * MiB});
  device.set_held_by_others(60 * MiB);  // 4 MiB left: the 32 MiB step is refused, 4 MiB taken
  void* p = arena.allocate(3 * MiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 4 * MiB);
  try {
    arena.allocate(2 * MiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.report().verdict(), OomVerdict::kUpstreamFailed);
    EXPECT_EQ(e.report().upstream_error, "CUDA_ERROR_OUT_OF_MEMORY (simulated device full)");
    EXPECT_EQ(e.report().reserved_bytes, 4 * MiB);
    EXPECT_EQ(e.report().device_free_bytes, 0u);
  }
  arena.deallocate(p, 3 * MiB);
}

TEST(ArenaExpandable, StopsAtTheLimit) {
  SimulatedDeviceResource device(Device(1 * GiB));
  ArenaResource arena(device, ArenaOptions{.limit_bytes = 10 * MiB, .expand_step_bytes = 8 * MiB});
  void* a = arena.allocate(6 * MiB);
  EXPECT_EQ(arena.stats().reserved_bytes, 8 * MiB);
  void* b = arena.allocate(3 * MiB);  // 2 MiB free at the end: 2 MiB more (capped by the limit)
  EXPECT_EQ(arena.stats().reserved_bytes, 10 * MiB);
  EXPECT_THROW(arena.allocate(1 * MiB + 1), OutOfMemory);
  EXPECT_EQ(arena.stats().out_of_memory, 1u);
  arena.deallocate(a, 6 * MiB);
  arena.deallocate(b, 3 * MiB);
}

TEST(ArenaExpandable, UsesRegionsOverAnUpstreamWithoutVirtualMemory) {
  SimulatedDeviceOptions o = Device(1 * GiB);
  o.virtual_memory = false;
  SimulatedDeviceResource device(o);
  ArenaResource arena(device);
  EXPECT_FALSE(arena.stats().expandable);
  EXPECT_EQ(arena.name().find("expandable"), std::string::npos);
  void* p = arena.allocate(1 * MiB);
  EXPECT_EQ(device.map_calls(), 0u);
  EXPECT_EQ(device.live_allocations(), 1u);
  arena.deallocate(p, 1 * MiB);
  HostResource host;  // not a device, no limit: regions too
  ArenaResource over_host(host);
  EXPECT_FALSE(over_host.stats().expandable);
}

}  // namespace
}  // namespace oomguard::mr
