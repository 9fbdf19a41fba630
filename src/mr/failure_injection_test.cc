// 10 % of upstream calls fail: no crash, no leak, exact accounting, and every
// failure is an OutOfMemory with a report that names the request.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/host_resource.h"
#include "oomguard/mr/pinned_host_pool.h"
#include "oomguard/mr/simulated_device_resource.h"
#include "oomguard/mr/tracking_resource.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t KiB = 1ull << 10, MiB = 1ull << 20;

struct Outcome {
  uint64_t ok = 0, oom = 0;
};

// Random traffic; checks each OutOfMemory's report; frees everything at the end.
Outcome Traffic(MemoryResource& mr, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<void*, std::size_t>> live;
  Outcome out;
  for (int i = 0; i < steps; ++i) {
    if (live.empty() || (live.size() < 48 && rng() % 2 == 0)) {
      std::size_t bytes = rng() % 4 == 0 ? 1 * MiB + rng() % (8 * MiB) : 1 + rng() % (64 * KiB);
      try {
        void* p = mr.allocate(bytes);
        static_cast<char*>(p)[0] = 1;
        static_cast<char*>(p)[bytes - 1] = 2;
        live.push_back({p, bytes});
        ++out.ok;
      } catch (const OutOfMemory& e) {
        ++out.oom;
        EXPECT_EQ(e.report().requested_bytes, bytes);
        EXPECT_NE(std::string(e.what()).find("\n  verdict: "), std::string::npos);
      }
    } else {
      std::size_t k = rng() % live.size();
      mr.deallocate(live[k].first, live[k].second);
      live[k] = live.back();
      live.pop_back();
    }
  }
  for (auto& [p, n] : live) mr.deallocate(p, n);
  return out;
}

SimulatedDeviceOptions Flaky(uint64_t capacity, double probability, uint64_t every_nth = 0) {
  SimulatedDeviceOptions o;
  o.capacity_bytes = capacity;
  o.fail_probability = probability;
  o.fail_every_nth = every_nth;
  o.seed = 99;
  return o;
}

class FailureInjectionGrowth : public ::testing::TestWithParam<Growth> {};
INSTANTIATE_TEST_SUITE_P(BothGrowthModes, FailureInjectionGrowth,
                         ::testing::Values(Growth::kExpandable, Growth::kOnDemand),
                         [](const auto& info) { return info.param == Growth::kExpandable ? "Expandable" : "Regions"; });

TEST_P(FailureInjectionGrowth, ArenaSurvivesTenPercentFailingUpstreamCalls) {
  SimulatedDeviceResource device(Flaky(256 * MiB, 0.10));
  {
    ArenaResource arena(device, ArenaOptions{.growth = GetParam(), .initial_region_bytes = 1 * MiB,
                                             .growth_factor = 0.25});
    EXPECT_EQ(arena.stats().expandable, GetParam() == Growth::kExpandable);
    TrackingResource tracking(arena);
    Outcome o;
    for (int round = 0; round < 20; ++round) {  // release between rounds: many upstream calls
      Outcome r = Traffic(tracking, round, 200);
      o.ok += r.ok;
      o.oom += r.oom;
      arena.release_unused();
    }
    EXPECT_GT(o.ok, 1000u);
    EXPECT_GT(device.allocate_calls(), 100u);
    EXPECT_GT(device.injected_failures(), 0u);
    TrackingStats s = tracking.stats();
    EXPECT_EQ(s.allocated_bytes, 0u);
    EXPECT_EQ(s.out_of_memory, o.oom);
    ArenaStats a = arena.stats();
    EXPECT_EQ(a.allocated_bytes, 0u);
    EXPECT_EQ(a.free_in_pool_bytes, a.reserved_bytes);  // every byte accounted for
    EXPECT_EQ(device.used_bytes(), a.reserved_bytes);
    arena.release_unused();
    EXPECT_EQ(device.used_bytes(), 0u);
  }
  EXPECT_EQ(device.live_allocations(), 0u);
}

TEST_P(FailureInjectionGrowth, EveryThirdCallFailingIsAbsorbedByBackOff) {
  SimulatedDeviceResource device(Flaky(256 * MiB, 0.0, 3));
  // Expandable: steps of 8 MiB, so a refused step is retried with just what the request needs.
  ArenaResource arena(device, ArenaOptions{.growth = GetParam(), .initial_region_bytes = 256 * KiB,
                                           .growth_factor = 0.1, .expand_step_bytes = 8 * MiB});
  Outcome o = Traffic(arena, 2, 3000);
  EXPECT_GT(device.injected_failures(), 0u);
  EXPECT_GT(o.ok, 1000u);
  EXPECT_LT(o.oom, device.injected_failures());  // most injected failures are absorbed by a retry
  EXPECT_EQ(arena.stats().allocated_bytes, 0u);
}

TEST(FailureInjection, PinnedPoolFallsBackInsteadOfFailing) {
  SimulatedDeviceResource pinned(Flaky(64 * MiB, 0.10));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable, PinnedPoolOptions{.limit_bytes = 32 * MiB, .initial_region_bytes = 1 * MiB});
  Outcome o = Traffic(pool, 3, 3000);
  EXPECT_EQ(o.oom, 0u);
  EXPECT_GT(pool.fallback_allocations(), 0u);
  EXPECT_EQ(pool.stats().allocated_bytes, 0u);
  pool.release_unused();
  EXPECT_EQ(pinned.used_bytes(), 0u);
}

TEST_P(FailureInjectionGrowth, ThreadsUnderTenPercentFailuresKeepExactAccounting) {
  SimulatedDeviceResource device(Flaky(512 * MiB, 0.10));
  ArenaResource arena(device, ArenaOptions{.growth = GetParam(), .initial_region_bytes = 1 * MiB,
                                           .growth_factor = 0.25});
  TrackingResource tracking(arena);
  std::vector<std::thread> threads;
  std::vector<Outcome> outcomes(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] { outcomes[t] = Traffic(tracking, 100 + t, 600); });
  }
  for (std::thread& t : threads) t.join();
  uint64_t ooms = 0, oks = 0;
  for (const Outcome& o : outcomes) {
    ooms += o.oom;
    oks += o.ok;
  }
  TrackingStats s = tracking.stats();
  EXPECT_EQ(s.out_of_memory, ooms);
  EXPECT_EQ(s.allocations, oks);
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(arena.stats().free_in_pool_bytes, arena.stats().reserved_bytes);
  arena.release_unused();
  EXPECT_EQ(device.used_bytes(), 0u);
}

}  // namespace
}  // namespace oomguard::mr
