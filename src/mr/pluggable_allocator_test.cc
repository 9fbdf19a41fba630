#include "oomguard/mr/pluggable_allocator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "oomguard/mr/simulated_device_resource.h"
#include "report_json.h"

namespace oomguard::mr {
namespace {

constexpr uint64_t MiB = 1ull << 20;

AllocConf Conf(const char* text) { return ParseAllocConf(text).value(); }

TEST(PluggableAllocator, OneArenaPerDeviceUnderTheConfiguredFraction) {
  AllocConf conf = Conf("fraction=0.5,simulate=256MiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* a = alloc.Malloc(10 * MiB, 0, nullptr);
  void* b = alloc.Malloc(10 * MiB, 1, nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  nlohmann::json stats = nlohmann::json::parse(alloc.stats_json());
  ASSERT_EQ(stats["devices"].size(), 2u);
  EXPECT_EQ(stats["devices"][0]["limit_bytes"].get<uint64_t>(), 128 * MiB);
  EXPECT_EQ(stats["devices"][1]["allocated_bytes"].get<uint64_t>(), 10 * MiB);
  EXPECT_EQ(stats["devices"][0]["growth"], "expandable");  // the simulated device has virtual memory
  EXPECT_EQ(stats["devices"][0]["regions"], 1);
  EXPECT_EQ(alloc.Malloc(200 * MiB, 0, nullptr), nullptr);  // over the 128 MiB cap
  ASSERT_TRUE(alloc.last_report().has_value());
  EXPECT_EQ(alloc.last_report()->verdict(), OomVerdict::kCapTooLow);
  alloc.Free(a, 10 * MiB, 0, nullptr);
  alloc.Free(b, 10 * MiB, 1, nullptr);
  EXPECT_FALSE(alloc.last_error().has_value());
}

TEST(PluggableAllocator, GrowthOffPreallocatesTheCap) {
  AllocConf conf = Conf("limit=64MiB,growth=off");
  SimulatedDeviceResource* seen = nullptr;
  PluggableAllocator alloc(conf, [&seen](int) -> Result<std::unique_ptr<MemoryResource>> {
    auto d = std::make_unique<SimulatedDeviceResource>(SimulatedDeviceOptions{.capacity_bytes = 1ull << 30});
    seen = d.get();
    return std::unique_ptr<MemoryResource>(std::move(d));
  });
  void* p = alloc.Malloc(1 * MiB, 0, nullptr);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->used_bytes(), 64 * MiB);
  EXPECT_EQ(nlohmann::json::parse(alloc.stats_json())["devices"][0]["growth"], "preallocated");
  alloc.Free(p, 1 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, GrowthRegionsAddsRegions) {
  AllocConf conf = Conf("growth=regions,initial=4MiB,simulate=1GiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* a = alloc.Malloc(3 * MiB, 0, nullptr);
  void* b = alloc.Malloc(3 * MiB, 0, nullptr);  // does not fit in the first 4 MiB region
  nlohmann::json device = nlohmann::json::parse(alloc.stats_json())["devices"][0];
  EXPECT_EQ(device["growth"], "regions");
  EXPECT_EQ(device["regions"], 2);
  alloc.Free(a, 3 * MiB, 0, nullptr);
  alloc.Free(b, 3 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, WritesTheReportFileOnOutOfMemory) {
  std::string path = ::testing::TempDir() + "/oomguard_report_test.json";
  std::remove(path.c_str());
  std::string text = "limit=8MiB,simulate=1GiB,report=" + path;
  AllocConf conf = Conf(text.c_str());
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  void* p = alloc.Malloc(6 * MiB, 0, nullptr);
  EXPECT_EQ(alloc.Malloc(4 * MiB, 0, nullptr), nullptr);
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  nlohmann::json report = nlohmann::json::parse(in);
  EXPECT_EQ(report["requested_bytes"].get<uint64_t>(), 4 * MiB);
  EXPECT_EQ(report["limit_bytes"].get<uint64_t>(), 8 * MiB);
  EXPECT_EQ(report["verdict"], "cap_too_low");
  alloc.Free(p, 6 * MiB, 0, nullptr);
}

TEST(PluggableAllocator, FailuresAreRecordedNotThrown) {
  AllocConf conf = Conf("simulate=64MiB");
  PluggableAllocator alloc(conf, MakeDefaultUpstreamFactory(conf));
  EXPECT_EQ(alloc.Malloc(1024, 64, nullptr), nullptr);
  EXPECT_EQ(*alloc.last_error(), "device 64 is out of range (0..63)");
  int local;
  alloc.Free(&local, 4, 3, nullptr);
  EXPECT_EQ(*alloc.last_error(), "free on device 3 which has no allocations");
  void* p = alloc.Malloc(1024, 0, nullptr);
  alloc.Free(p, 1024, 0, nullptr);
  alloc.Free(p, 1024, 0, nullptr);
  EXPECT_EQ(*alloc.last_error(), "arena: deallocate of a pointer that is not live in this arena (double free?)");
}

TEST(PluggableAllocator, WithoutADriverEveryMallocFailsWithTheReason) {
  AllocConf conf = Conf("fraction=0.5");
  PluggableAllocator alloc(conf, [](int) -> Result<std::unique_ptr<MemoryResource>> {
    return MakeError("cannot load the CUDA driver (libcuda.so.1): gone; is the NVIDIA driver installed?");
  });
  EXPECT_EQ(alloc.Malloc(1024, 0, nullptr), nullptr);
  EXPECT_EQ(*alloc.last_error(), "cannot load the CUDA driver (libcuda.so.1): gone; is the NVIDIA driver installed?");
}

}  // namespace
}  // namespace oomguard::mr
