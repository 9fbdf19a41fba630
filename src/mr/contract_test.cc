// One contract, every resource: random alloc/free with a pattern in each block
// (catches overlap and corruption), alignment, zero size, bad arguments,
// double free; and the same under 8 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "oomguard/mr/arena_resource.h"
#include "oomguard/mr/cuda_device_resource.h"
#include "oomguard/mr/host_resource.h"
#include "oomguard/mr/pinned_host_pool.h"
#include "oomguard/mr/pinned_host_resource.h"
#include "oomguard/mr/simulated_device_resource.h"
#include "oomguard/mr/tracking_resource.h"

namespace oomguard::mr {
namespace {

#ifdef NDEBUG
constexpr bool kDebugBuild = false;
#else
constexpr bool kDebugBuild = true;
#endif

SimulatedDeviceOptions Device(uint64_t capacity) {
  SimulatedDeviceOptions o;
  o.capacity_bytes = capacity;
  return o;
}

struct Host {
  static constexpr bool kDetectsDoubleFree = kDebugBuild;  // a debug-only set of live pointers
  HostResource host;
  MemoryResource& resource() { return host; }
};

struct Simulated {
  static constexpr bool kDetectsDoubleFree = true;
  SimulatedDeviceResource device{Device(1ull << 30)};
  MemoryResource& resource() { return device; }
};

struct ArenaOnDemand {
  static constexpr bool kDetectsDoubleFree = true;
  SimulatedDeviceResource device{Device(1ull << 30)};
  ArenaResource arena{device, ArenaOptions{.initial_region_bytes = 1 << 20}};
  MemoryResource& resource() { return arena; }
};

struct ArenaPreallocated {
  static constexpr bool kDetectsDoubleFree = true;
  SimulatedDeviceResource device{Device(1ull << 30)};
  ArenaResource arena{device, ArenaOptions{.growth = Growth::kPreallocate, .limit_bytes = 512ull << 20}};
  MemoryResource& resource() { return arena; }
};

struct Pinned {
  static constexpr bool kDetectsDoubleFree = true;
  SimulatedDeviceResource pinned{Device(1ull << 30)};
  HostResource pageable;
  PinnedHostPool pool{pinned, pageable, PinnedPoolOptions{.limit_bytes = 256ull << 20,
                                                          .initial_region_bytes = 4 << 20}};
  MemoryResource& resource() { return pool; }
};

struct Tracked {
  static constexpr bool kDetectsDoubleFree = true;
  SimulatedDeviceResource device{Device(1ull << 30)};
  ArenaResource arena{device};
  TrackingResource tracking{arena};
  MemoryResource& resource() { return tracking; }
};

// The real dlopen path over a stand-in libcuda (fake_libcuda.c).
struct CudaFake {
  static constexpr bool kDetectsDoubleFree = false;
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  std::unique_ptr<CudaDeviceResource> device = CudaDeviceResource::Open(*driver, 0).value();
  MemoryResource& resource() { return *device; }
};

struct CudaArena {
  static constexpr bool kDetectsDoubleFree = true;
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  std::unique_ptr<CudaDeviceResource> device = CudaDeviceResource::Open(*driver, 0).value();
  ArenaResource arena{*device, ArenaOptions{.limit_fraction = 0.5}};
  MemoryResource& resource() { return arena; }
};

struct PinnedCudaFake {
  static constexpr bool kDetectsDoubleFree = false;
  std::unique_ptr<CudaDriver> driver = LoadCudaDriver(OOMGUARD_FAKE_LIBCUDA).value();
  std::unique_ptr<PinnedHostResource> pinned = PinnedHostResource::Open(*driver, 0).value();
  MemoryResource& resource() { return *pinned; }
};

template <typename T>
class ResourceContract : public ::testing::Test {
 protected:
  T fixture_;
  MemoryResource& mr() { return fixture_.resource(); }
};

using AllResources = ::testing::Types<Host, Simulated, ArenaOnDemand, ArenaPreallocated, Pinned, Tracked,
                                      CudaFake, CudaArena, PinnedCudaFake>;
TYPED_TEST_SUITE(ResourceContract, AllResources);

struct Block {
  unsigned char* p;
  std::size_t bytes;
  unsigned char seed;
};

void Fill(const Block& b) {
  for (std::size_t i = 0; i < b.bytes; ++i) b.p[i] = static_cast<unsigned char>(b.seed + i * 7);
}

// Returns the first corrupted offset, or -1.
long long FirstCorruption(const Block& b) {
  for (std::size_t i = 0; i < b.bytes; ++i) {
    if (b.p[i] != static_cast<unsigned char>(b.seed + i * 7)) return static_cast<long long>(i);
  }
  return -1;
}

// Random alloc/free, pattern written into every block and checked before free.
void RandomWorkout(MemoryResource& mr, uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  std::vector<Block> live;
  for (int step = 0; step < steps; ++step) {
    bool do_alloc = live.empty() || (live.size() < 64 && rng() % 3 != 0);
    if (do_alloc) {
      std::size_t bytes = rng() % 16 == 0 ? 1 + rng() % (256 << 10) : 1 + rng() % 4096;
      Block b{static_cast<unsigned char*>(mr.allocate(bytes)), bytes, static_cast<unsigned char>(rng())};
      ASSERT_NE(b.p, nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(b.p) % kDefaultAlignment, 0u);
      Fill(b);
      live.push_back(b);
    } else {
      std::size_t i = rng() % live.size();
      ASSERT_EQ(FirstCorruption(live[i]), -1) << "block of " << live[i].bytes << " bytes overwritten";
      mr.deallocate(live[i].p, live[i].bytes);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (const Block& b : live) {
    ASSERT_EQ(FirstCorruption(b), -1);
    mr.deallocate(b.p, b.bytes);
  }
}

TYPED_TEST(ResourceContract, RandomAllocFreeKeepsEveryBlockIntact) { RandomWorkout(this->mr(), 42, 3000); }

TYPED_TEST(ResourceContract, HonoursEveryAlignmentUpToItsMaximum) {
  for (std::size_t alignment = 1; alignment <= this->mr().max_alignment(); alignment *= 2) {
    for (std::size_t bytes : {1u, 100u, 4097u}) {
      void* p = this->mr().allocate(bytes, alignment);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << "alignment " << alignment;
      this->mr().deallocate(p, bytes, alignment);
    }
  }
}

TYPED_TEST(ResourceContract, ZeroBytesGivesNullAndFreeingNullIsANoOp) {
  EXPECT_EQ(this->mr().allocate(0), nullptr);
  this->mr().deallocate(nullptr, 0);
  void* p = this->mr().allocate(64);  // still usable
  EXPECT_NE(p, nullptr);
  this->mr().deallocate(p, 64);
}

TYPED_TEST(ResourceContract, RejectsAnAlignmentThatIsNotAPowerOfTwo) {
  EXPECT_THROW(this->mr().allocate(64, 3), std::invalid_argument);
  EXPECT_THROW(this->mr().allocate(64, this->mr().max_alignment() * 2), std::invalid_argument);
}

TYPED_TEST(ResourceContract, DetectsDoubleFree) {
  if (!TypeParam::kDetectsDoubleFree) {
    GTEST_SKIP() << "plain host memory: debug builds only; CUDA upstreams: the driver reports it";
  }
  void* p = this->mr().allocate(1000);
  this->mr().deallocate(p, 1000);
  EXPECT_THROW(this->mr().deallocate(p, 1000), InvalidDeallocation);
}

TYPED_TEST(ResourceContract, ThreadsRandomAllocFreeKeepEveryBlockIntact) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t] { RandomWorkout(this->mr(), 1000 + t, 400); });
  }
  for (std::thread& t : threads) t.join();
}

TYPED_TEST(ResourceContract, ThreadsFreeWhatOtherThreadsAllocated) {
  constexpr int kPerThread = 200;
  std::vector<std::vector<Block>> made(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t, &made] {
      for (int i = 0; i < kPerThread; ++i) {
        std::size_t bytes = 16 + (i * 97 + t * 13) % 3000;
        Block b{static_cast<unsigned char*>(this->mr().allocate(bytes)), bytes, static_cast<unsigned char>(i + t)};
        Fill(b);
        made[t].push_back(b);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  threads.clear();
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([this, t, &made] {
      for (const Block& b : made[(t + 1) % 8]) {  // another thread's blocks
        EXPECT_EQ(FirstCorruption(b), -1);
        this->mr().deallocate(b.p, b.bytes);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace oomguard::mr
