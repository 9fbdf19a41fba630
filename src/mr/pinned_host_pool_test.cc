#include "oomguard/mr/pinned_host_pool.h"

#include <gtest/gtest.h>

#include "oomguard/mr/host_resource.h"
#include "oomguard/mr/simulated_device_resource.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;

// Pinned memory stands in as a simulated "device" of what the OS lets us lock.
SimulatedDeviceOptions Lockable(uint64_t bytes) {
  SimulatedDeviceOptions o;
  o.capacity_bytes = bytes;
  return o;
}

TEST(PinnedHostPool, NeverHoldsMoreThanTheCap) {
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable,
                      PinnedPoolOptions{.limit_bytes = 100 * MiB, .fallback = PinnedFallback::kFail,
                                        .initial_region_bytes = 64 * MiB});
  void* a = pool.allocate(60 * MiB);
  void* b = pool.allocate(30 * MiB);  // 64 MiB region has 4 MiB left: grows by at most the cap's rest
  EXPECT_LE(pinned.used_bytes(), 100 * MiB);
  EXPECT_THROW(pool.allocate(20 * MiB), OutOfMemory);
  EXPECT_LE(pinned.peak_used_bytes(), 100 * MiB);
  pool.deallocate(a, 60 * MiB);
  pool.deallocate(b, 30 * MiB);
}

TEST(PinnedHostPool, ExactSizesNotPowersOfTwo) {
  // PyTorch's pinned cache would pin 32 GiB for a 20.4 GiB request; here: the request, rounded to 256 B.
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable, PinnedPoolOptions{.limit_bytes = 1 * GiB, .initial_region_bytes = 256});
  const uint64_t odd = 300 * MiB + 12345;
  void* p = pool.allocate(odd);
  EXPECT_EQ(pinned.used_bytes(), (odd + 255) / 256 * 256);
  pool.deallocate(p, odd);
}

TEST(PinnedHostPool, BacksOffByNinetyPercentDownToTheRequest) {
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  pinned.set_held_by_others(1 * GiB - 700 * MiB);  // 700 MiB lockable
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable,
                      PinnedPoolOptions{.limit_bytes = 4 * GiB, .fallback = PinnedFallback::kFail,
                                        .initial_region_bytes = 1 * GiB});
  void* p = pool.allocate(100 * MiB);
  // 1024 MiB, 921.6 MiB, 829.4 MiB, 746.5 MiB refused; 671.8 MiB taken.
  EXPECT_EQ(pinned.allocate_calls(), 5u);
  EXPECT_EQ(pool.stats().reserved_bytes, 704481536u);  // 0.9x four times, each rounded down to 256 B
  pool.deallocate(p, 100 * MiB);
}

TEST(PinnedHostPool, FallsBackToPageableMemoryWithOneWarning) {
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable, PinnedPoolOptions{.limit_bytes = 8 * MiB, .initial_region_bytes = 8 * MiB});
  void* in_pool = pool.allocate(6 * MiB);
  EXPECT_FALSE(pool.fallback_warning().has_value());
  void* f1 = pool.allocate(4 * MiB);
  void* f2 = pool.allocate(5 * MiB);
  EXPECT_EQ(pool.fallback_allocations(), 2u);
  ASSERT_TRUE(pool.fallback_warning().has_value());
  EXPECT_EQ(*pool.fallback_warning(),
            "pinned host memory: cannot allocate 4.00 MiB under the cap of 8.00 MiB (cap too low: live "
            "allocations fill the limit (6.00 MiB of 8.00 MiB) while the device still has 1016.00 MiB free; "
            "raise the limit); using pageable host memory instead (slower host-to-device copies)");
  EXPECT_EQ(pinned.used_bytes(), 8 * MiB);
  pool.deallocate(f1, 4 * MiB);  // routed to pageable memory
  pool.deallocate(f2, 5 * MiB);
  pool.deallocate(in_pool, 6 * MiB);
  EXPECT_EQ(pool.stats().allocated_bytes, 0u);
}

TEST(PinnedHostPool, FailPolicyThrowsOutOfMemory) {
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable, PinnedPoolOptions{.limit_bytes = 8 * MiB, .fallback = PinnedFallback::kFail});
  EXPECT_THROW(pool.allocate(9 * MiB), OutOfMemory);
  EXPECT_EQ(pool.fallback_allocations(), 0u);
}

TEST(PinnedHostPool, ReleaseUnusedGivesFreeRegionsBack) {
  SimulatedDeviceResource pinned(Lockable(1 * GiB));
  HostResource pageable;
  PinnedHostPool pool(pinned, pageable, PinnedPoolOptions{.limit_bytes = 1 * GiB, .initial_region_bytes = 64 * MiB});
  void* a = pool.allocate(10 * MiB);
  void* b = pool.allocate(100 * MiB);  // second region
  pool.deallocate(b, 100 * MiB);
  EXPECT_EQ(pool.release_unused(), 100 * MiB);
  EXPECT_EQ(pinned.used_bytes(), 64 * MiB);  // the region still in use stays
  pool.deallocate(a, 10 * MiB);
  EXPECT_EQ(pool.release_unused(), 64 * MiB);
  EXPECT_EQ(pinned.used_bytes(), 0u);
}

TEST(ParsePinnedLimit, ReadsTheEnvironmentValue) {
  EXPECT_EQ(*ParsePinnedLimit(nullptr, 123), 123u);
  EXPECT_EQ(*ParsePinnedLimit("", 123), 123u);
  EXPECT_EQ(*ParsePinnedLimit("8GiB", 0), 8 * GiB);
  EXPECT_EQ(*ParsePinnedLimit("1000", 0), 1000u);
  EXPECT_EQ(ParsePinnedLimit("0", 1).error(), "OOMGUARD_PINNED_LIMIT: the cap must be more than 0 bytes");
  Result<uint64_t> bad = ParsePinnedLimit("lots", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().rfind("OOMGUARD_PINNED_LIMIT: ", 0), 0u);
}

}  // namespace
}  // namespace oomguard::mr
