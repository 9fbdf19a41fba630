#include "oomguard/doctor/devices.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/system_view.h"
#include "oomguard/mr/cuda_driver.h"
#include "run_cli_for_test.h"

namespace oomguard::doctor {
namespace {

const std::string kData = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/doctor/";

TEST(FakeGpus, ReadsTheJsonFile) {
  Result<GpuSnapshot> s = MakeFakeGpus(kData + "gpus_mixed.json")->Read();
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE(s->driver.has_value());
  EXPECT_EQ(s->driver->driver_version, "535.104.05");
  ASSERT_EQ(s->gpus.size(), 3u);
  EXPECT_EQ(s->gpus[1].cc_major, 8);
  EXPECT_EQ(s->gpus[1].cc_minor, 6);
  EXPECT_EQ(s->gpus[0].free_bytes, 11811160064ull - 2147483648ull);
  ASSERT_EQ(s->gpus[0].processes.size(), 1u);
  EXPECT_EQ(s->gpus[0].processes[0].pid, 4242u);
}

TEST(FakeGpus, BrokenFilesSayWhy) {
  EXPECT_EQ(MakeFakeGpus(kData + "missing.json")->Read().error(),
            "cannot read fake GPU file " + kData + "missing.json: No such file or directory");
  EXPECT_EQ(ParseGpuSnapshotJson("[1,2]").error(), "not a JSON object");
  EXPECT_EQ(ParseGpuSnapshotJson("{\"gpus\": [").error(), "not valid JSON");
  // Eight million zeros fit the 16 MiB read bound and would be a document of over 100 MiB: refused by count.
  std::string many = "{\"gpus\": [0";
  for (int i = 0; i < 70'000; ++i) many += ",0";
  EXPECT_EQ(ParseGpuSnapshotJson(many + "]}").error(), "more than 65536 JSON values");
  EXPECT_EQ(ParseGpuSnapshotJson("{\"gpus\":[{\"total_bytes\":-1}]}").error(),
            "'total_bytes' must be a byte count (a non-negative integer)");
  EXPECT_EQ(ParseGpuSnapshotJson("{\"gpus\":[{\"compute_capability\":\"eight\"}]}").error(),
            "'compute_capability' must look like \"8.6\"");
}

TEST(DeviceReport, NamesProcessesFromProc) {
  Result<GpuSnapshot> s = MakeFakeGpus(kData + "gpus_mixed.json")->Read();
  auto system = MakeFakeSystem(kData + "proc_names");
  ASSERT_TRUE(system.ok());
  DeviceReport r = BuildDeviceReport(*s, **system);
  ASSERT_EQ(r.devices.size(), 3u);
  ASSERT_EQ(r.devices[0].processes.size(), 1u);
  EXPECT_EQ(r.devices[0].processes[0].command, "python train.py --batch 64");
  EXPECT_EQ(r.devices[0].processes[0].used_bytes, 2000000000u);
  EXPECT_EQ(r.devices[0].cuda_ordinal, 2);
  EXPECT_TRUE(r.ordinals_differ);
  EXPECT_EQ(r.device_order, "FASTEST_FIRST");
}

TEST(DeviceReport, NoDriverIsAWarningNotAnError) {
  Result<GpuSnapshot> s = MakeFakeGpus(kData + "gpus_none.json")->Read();
  auto system = MakeFakeSystem(kData + "proc_names");
  DeviceReport r = BuildDeviceReport(*s, **system);
  EXPECT_FALSE(r.driver.has_value());
  EXPECT_TRUE(r.devices.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "no NVIDIA driver: libnvidia-ml.so.1 not found (no NVIDIA driver installed, or not mounted into this "
            "container)");
}

TEST(DetectLocalGpu, FirstCudaDeviceOrWhyNot) {
  auto gpus = MakeFakeGpus(kData + "gpus_mixed.json");
  Result<LocalGpu> g = DetectLocalGpu(*gpus, nullptr, nullptr);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->name, "NVIDIA GeForce RTX 3090");  // CUDA device 0 is the fastest, not nvidia-smi's 0
  g = DetectLocalGpu(*gpus, "0", "PCI_BUS_ID");
  EXPECT_EQ(g->name, "NVIDIA GeForce GTX 1080 Ti");
  EXPECT_EQ(g->total_bytes, 11811160064u);
  EXPECT_EQ(DetectLocalGpu(*gpus, "-1", nullptr).error(), "CUDA_VISIBLE_DEVICES hides every GPU");
  auto none = MakeFakeGpus(kData + "gpus_none.json");
  EXPECT_EQ(DetectLocalGpu(*none, nullptr, nullptr).error(),
            "no NVIDIA driver: libnvidia-ml.so.1 not found (no NVIDIA driver installed, or not mounted into this "
            "container)");
}

// The real binary, with the fake GPU file.
TEST(DevicesCli, JsonFollowsTheContract) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"devices", "--json"}, "",
                           {"OOMGUARD_FAKE_GPUS=" + kData + "gpus_mixed.json",
                            "OOMGUARD_FAKE_ROOT=" + kData + "proc_names"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["driver"]["version"], "535.104.05");
  EXPECT_EQ(j["driver"]["cuda_version"], "12.2");
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][0]["nvml_index"], 0);
  EXPECT_EQ(j["devices"][0]["cuda_ordinal"], 2);
  EXPECT_TRUE(j["devices"][0]["total_bytes"].is_number_unsigned());
  EXPECT_EQ(j["devices"][0]["processes"][0]["command"], "python train.py --batch 64");
  EXPECT_TRUE(j["ordinals_differ"].get<bool>());
}

TEST(DevicesCli, VisibleDevicesRenumber) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"devices", "--json"}, "",
                           {"OOMGUARD_FAKE_GPUS=" + kData + "gpus_mixed.json", "CUDA_VISIBLE_DEVICES=2,0",
                            "CUDA_DEVICE_ORDER=PCI_BUS_ID"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"][0]["cuda_ordinal"], 1);
  EXPECT_TRUE(j["devices"][1]["cuda_ordinal"].is_null());
  EXPECT_EQ(j["devices"][2]["cuda_ordinal"], 0);
}

TEST(DevicesCli, NoDriverExitsZeroWithNullDriver) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"devices", "--json"}, "",
                           {"OOMGUARD_FAKE_GPUS=" + kData + "gpus_none.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["driver"].is_null());
  EXPECT_TRUE(j["devices"].empty());
  EXPECT_EQ(j["warnings"].size(), 1u);
  // Human output says it plainly.
  r = testing::RunCli(OOMGUARD_EXE, {"devices"}, "", {"OOMGUARD_FAKE_GPUS=" + kData + "gpus_none.json"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("No NVIDIA driver: no GPU can be used on this machine.\n", 0), 0u) << r.out;
}

TEST(DevicesCli, BrokenFakeFileAndBadFlagExit2) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"devices"}, "", {"OOMGUARD_FAKE_GPUS=/nonexistent.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard devices: cannot read fake GPU file /nonexistent.json: No such file or directory\n");
  r = testing::RunCli(OOMGUARD_EXE, {"devices", "--jsn"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("oomguard devices: ", 0), 0u);
  EXPECT_TRUE(r.out.empty());
}

// Issue 15.13: doctor's system view asks the process's one CUDA driver, and so
// reports exactly the error the guard and the GPU list get.
TEST(SharedDriver, SystemViewSeesTheSameDriverAsTheGuard) {
  Result<mr::CudaDriver*> shared = mr::SharedCudaDriver();
  Result<int> version = MakeRealSystem()->LibraryVersion("libcuda.so.1", LibraryKind::kCudaDriver);
  ASSERT_EQ(version.ok(), shared.ok());
  if (!shared.ok()) {
    EXPECT_EQ(version.error(), shared.error());
  }
}

}  // namespace
}  // namespace oomguard::doctor
