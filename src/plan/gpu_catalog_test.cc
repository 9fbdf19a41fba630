#include "oomguard/plan/gpu_catalog.h"

#include <gtest/gtest.h>

#include <set>

namespace oomguard::plan {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

TEST(GpuCatalog, HasEveryCardTheIssueNames) {
  std::set<std::string_view> keys;
  for (const Gpu& g : GpuCatalog()) keys.insert(g.key);
  for (std::string_view k : {"gtx-1080-ti", "rtx-2080-ti", "rtx-3090", "rtx-4090", "t4", "v100-16gb",
                             "v100-32gb", "a10", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-80gb", "h200"}) {
    EXPECT_EQ(keys.count(k), 1u) << k;
  }
  EXPECT_EQ(keys.size(), GpuCatalog().size()) << "keys must be unique";
}

TEST(GpuCatalog, FindsByKeyIgnoringCaseSpacesAndDashes) {
  for (std::string_view name : {"rtx-3090", "RTX 3090", "rtx3090", "Rtx_3090"}) {
    auto g = FindGpu(name);
    ASSERT_TRUE(g.ok()) << name;
    EXPECT_EQ(g->key, "rtx-3090");
    EXPECT_EQ(g->total_bytes, 24576 * kMiB);
    EXPECT_EQ(g->compute_capability, 86);
  }
  EXPECT_EQ(FindGpu("h200")->compute_capability, 90);
  EXPECT_EQ(FindGpu("a100-80gb")->total_bytes, 81920 * kMiB);
}

TEST(GpuCatalog, UnknownNameSuggestsTheNearest) {
  auto g = FindGpu("rtx-3080");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error(), "unknown GPU 'rtx-3080', did you mean 'rtx-3090'? (see 'oomguard gpus')");
  EXPECT_EQ(FindGpu("a100").error(), "unknown GPU 'a100', did you mean 'a100-40gb'? (see 'oomguard gpus')");
  EXPECT_EQ(FindGpu("h20").error(), "unknown GPU 'h20', did you mean 'h200'? (see 'oomguard gpus')");
}

TEST(GpuCatalog, CapacityPrefersMemoryOverGpuAndAppliesFraction) {
  auto gpu = FindGpu("t4").value();
  EXPECT_EQ(CapacityBytes(gpu, std::nullopt, std::nullopt).value(), 15360 * kMiB);
  EXPECT_EQ(CapacityBytes(gpu, 1000, std::nullopt).value(), 1000u);
  EXPECT_EQ(CapacityBytes(gpu, 1000, 0.5).value(), 500u);
  EXPECT_EQ(CapacityBytes(gpu, std::nullopt, 0.25).value(), 15360 * kMiB / 4);
  EXPECT_EQ(CapacityBytes(std::nullopt, std::nullopt, std::nullopt).value(), std::nullopt);
}

TEST(GpuCatalog, CapacityRejectsBadFractionsAndZeroMemory) {
  EXPECT_EQ(CapacityBytes(std::nullopt, 1000, 0.0).error(), "--fraction must be in (0, 1], got 0");
  // Issue 15.6: a number in a message is written compactly, never "1.000000" or 309 digits.
  EXPECT_EQ(CapacityBytes(std::nullopt, 1000, 1.0000001).error(), "--fraction must be in (0, 1], got 1.0000001");
  EXPECT_EQ(CapacityBytes(std::nullopt, 1000, 1.7976931348623157e308).error(),
            "--fraction must be in (0, 1], got 1.797693135e+308");
  EXPECT_FALSE(CapacityBytes(std::nullopt, 1000, 1.5).ok());
  EXPECT_FALSE(CapacityBytes(std::nullopt, 1000, -0.1).ok());
  EXPECT_EQ(CapacityBytes(std::nullopt, 0, std::nullopt).error(), "--memory must be more than 0 bytes");
  EXPECT_EQ(CapacityBytes(std::nullopt, std::nullopt, 0.5).error(), "--fraction needs --gpu or --memory");
}

TEST(GpuCatalog, ContextGrowsWithGeneration) {
  EXPECT_LT(CudaContextBytes(61), CudaContextBytes(75));
  EXPECT_LT(CudaContextBytes(75), CudaContextBytes(86));
  EXPECT_LT(CudaContextBytes(86), CudaContextBytes(90));
}

}  // namespace
}  // namespace oomguard::plan
