#include "oomguard/mr/tracking_resource.h"

#include <gtest/gtest.h>

#include <thread>

#include "oomguard/mr/simulated_device_resource.h"
#include "report_json.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t KiB = 1ull << 10, MiB = 1ull << 20;

SimulatedDeviceOptions Device(uint64_t capacity) {
  SimulatedDeviceOptions o;
  o.capacity_bytes = capacity;
  return o;
}

// A clock that advances 10 ns per reading.
TrackingOptions FakeClock() {
  TrackingOptions o;
  o.clock = [t = uint64_t{0}]() mutable { return t += 10; };
  return o;
}

TEST(TrackingResource, CountsCurrentAndPeakBytesAndCalls) {
  SimulatedDeviceResource device(Device(64 * MiB));
  TrackingResource tracking(device);
  void* a = tracking.allocate(1000);
  void* b = tracking.allocate(3000);
  tracking.deallocate(a, 1000);
  void* c = tracking.allocate(500);
  TrackingStats s = tracking.stats();
  EXPECT_EQ(s.allocated_bytes, 3500u);
  EXPECT_EQ(s.peak_allocated_bytes, 4000u);
  EXPECT_EQ(s.allocations, 3u);
  EXPECT_EQ(s.deallocations, 1u);
  EXPECT_EQ(s.live_allocations, 2u);
  EXPECT_EQ(s.reserved_bytes, 3500u);  // no pool: reserved is what is allocated
  tracking.deallocate(b, 3000);
  tracking.deallocate(c, 500);
}

TEST(TrackingResource, OverAnArenaReportsReservedLargestFreeAndFragmentation) {
  SimulatedDeviceResource device(Device(64 * MiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kPreallocate, .limit_bytes = 1 * MiB});
  TrackingResource tracking(arena);
  std::vector<void*> q;
  for (int i = 0; i < 4; ++i) q.push_back(tracking.allocate(256 * KiB));
  tracking.deallocate(q[0], 256 * KiB);
  tracking.deallocate(q[2], 256 * KiB);
  TrackingStats s = tracking.stats();
  EXPECT_EQ(s.reserved_bytes, 1 * MiB);
  EXPECT_EQ(s.free_in_pool_bytes, 512 * KiB);
  EXPECT_EQ(s.largest_free_block_bytes, 256 * KiB);
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.5);
  tracking.deallocate(q[1], 256 * KiB);
  tracking.deallocate(q[3], 256 * KiB);
}

TEST(TrackingResource, LiveAllocationsKeepTheirTagsLargestFirst) {
  SimulatedDeviceResource device(Device(64 * MiB));
  TrackingResource tracking(device);
  void* w = tracking.allocate_tagged(4 * MiB, "weights");
  void* a = tracking.allocate_tagged(8 * MiB, "activations");
  void* x = tracking.allocate(1 * MiB);
  std::vector<LiveAllocation> live = tracking.live_allocations();
  ASSERT_EQ(live.size(), 3u);
  EXPECT_EQ(live[0].tag, "activations");
  EXPECT_EQ(live[1].tag, "weights");
  EXPECT_EQ(live[2].tag, "");
  nlohmann::json snap = nlohmann::json::parse(tracking.snapshot());
  EXPECT_EQ(snap["live"][0]["bytes"].get<uint64_t>(), 8 * MiB);
  EXPECT_EQ(snap["stats"]["allocated_bytes"].get<uint64_t>(), 13 * MiB);
  EXPECT_TRUE(snap["stats"]["peak_reserved_bytes"].is_number_unsigned());
  tracking.deallocate(w, 4 * MiB);
  tracking.deallocate(a, 8 * MiB);
  tracking.deallocate(x, 1 * MiB);
}

TEST(TrackingResource, OutOfMemoryReportNamesTheTagsOfTheLargestLiveAllocations) {
  SimulatedDeviceResource device(Device(64 * MiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kPreallocate, .limit_bytes = 16 * MiB});
  TrackingResource tracking(arena, FakeClock());
  void* a = tracking.allocate_tagged(10 * MiB, "activations");
  void* o = tracking.allocate_tagged(4 * MiB, "optimizer state");
  try {
    tracking.allocate(8 * MiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    ASSERT_EQ(e.report().largest_live.size(), 2u);
    EXPECT_EQ(e.report().largest_live[0].tag, "activations");
    EXPECT_EQ(e.report().largest_live[1].tag, "optimizer state");
    EXPECT_NE(std::string(e.what()).find("    10.00 MiB (10485760 bytes) activations\n"), std::string::npos);
  }
  EXPECT_EQ(tracking.stats().out_of_memory, 1u);
  tracking.deallocate(a, 10 * MiB);
  tracking.deallocate(o, 4 * MiB);
}

TEST(TrackingResource, RecordsAnEventTraceWithGrowReleaseAndOom) {
  SimulatedDeviceResource device(Device(8 * MiB));
  ArenaResource arena(device, ArenaOptions{.growth = Growth::kOnDemand, .initial_region_bytes = 1 * MiB});
  TrackingResource tracking(arena, FakeClock());
  void* a = tracking.allocate(512 * KiB);
  tracking.deallocate(a, 512 * KiB);
  arena.release_unused();
  EXPECT_THROW(tracking.allocate(9 * MiB), OutOfMemory);
  std::vector<TraceEvent> e = tracking.events();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].kind, EventKind::kGrow);
  EXPECT_EQ(e[0].bytes, 1 * MiB);
  EXPECT_EQ(e[1].kind, EventKind::kAlloc);
  EXPECT_EQ(e[1].bytes, 512 * KiB);
  EXPECT_EQ(e[2].kind, EventKind::kFree);
  EXPECT_EQ(e[2].id, e[1].id);
  EXPECT_EQ(e[3].kind, EventKind::kRelease);
  EXPECT_EQ(e[4].kind, EventKind::kOom);
  EXPECT_EQ(e[4].bytes, 9 * MiB);
  for (std::size_t i = 1; i < e.size(); ++i) EXPECT_GT(e[i].time_ns, e[i - 1].time_ns);
  EXPECT_EQ(ToJson(e)[4]["kind"], "oom");
}

TEST(TrackingResource, TraceReplaysThroughAnotherResource) {
  SimulatedDeviceResource device(Device(64 * MiB));
  TrackingResource recorder(device, FakeClock());
  void* a = recorder.allocate(3 * MiB);
  void* b = recorder.allocate(5 * MiB);
  recorder.deallocate(a, 3 * MiB);
  void* c = recorder.allocate(1 * MiB);
  recorder.deallocate(b, 5 * MiB);
  recorder.deallocate(c, 1 * MiB);

  SimulatedDeviceResource other(Device(64 * MiB));
  ArenaResource arena(other);
  TrackingResource replayed(arena);
  ReplayResult r = Replay(recorder.events(), replayed);
  EXPECT_EQ(r.allocations, 3u);
  EXPECT_EQ(r.deallocations, 3u);
  EXPECT_EQ(r.peak_live_bytes, 8 * MiB);
  EXPECT_EQ(replayed.stats().peak_allocated_bytes, 8 * MiB);
  EXPECT_EQ(replayed.stats().allocated_bytes, 0u);

  // Through a device too small for the second allocation: counted, not thrown.
  SimulatedDeviceResource small(Device(4 * MiB));
  ReplayResult s = Replay(recorder.events(), small);
  EXPECT_EQ(s.out_of_memory, 1u);
  EXPECT_EQ(small.used_bytes(), 0u);
}

TEST(TrackingResource, DropsEventsPastTheLimitButKeepsCounting) {
  SimulatedDeviceResource device(Device(64 * MiB));
  TrackingOptions options = FakeClock();
  options.max_events = 3;
  TrackingResource tracking(device, options);
  for (int i = 0; i < 5; ++i) tracking.deallocate(tracking.allocate(100), 100);
  EXPECT_EQ(tracking.events().size(), 3u);
  EXPECT_EQ(tracking.stats().dropped_events, 7u);
  EXPECT_EQ(tracking.stats().allocations, 5u);
}

TEST(TrackingResource, ThreadsKeepExactCounts) {
  SimulatedDeviceResource device(Device(256 * MiB));
  ArenaResource arena(device);
  TrackingResource tracking(arena);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&tracking, t] {
      for (int i = 0; i < 300; ++i) {
        std::size_t bytes = 256 + (i * 31 + t) % 5000;
        void* p = tracking.allocate_tagged(bytes, "t");
        tracking.deallocate(p, bytes);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  TrackingStats s = tracking.stats();
  EXPECT_EQ(s.allocations, 2400u);
  EXPECT_EQ(s.deallocations, 2400u);
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(tracking.events().size(), 4800u + arena.stats().grows);
}

}  // namespace
}  // namespace oomguard::mr
