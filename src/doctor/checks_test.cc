#include "oomguard/doctor/checks.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli_for_test.h"

namespace oomguard::doctor {
namespace {

const std::string kData = std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/doctor/";

struct Outcome {
  std::vector<Check> checks;
  const Check& Get(const std::string& name) const {
    for (const Check& c : checks) if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
  }
  CheckStatus Status(const std::string& name) const { return Get(name).status; }
};

Outcome Diagnose(const std::string& root, const std::string& gpus_file, DoctorOptions options = {}) {
  auto system = MakeFakeSystem(kData + root);
  EXPECT_TRUE(system.ok()) << system.error();
  Result<GpuSnapshot> snap = MakeFakeGpus(kData + gpus_file)->Read();
  EXPECT_TRUE(snap.ok()) << snap.error();
  return Outcome{RunDoctorChecks(**system, *snap, options)};
}

TEST(Doctor, EveryCheckIsThereInOrder) {
  Outcome o = Diagnose("nogpu_container", "gpus_none.json");
  std::vector<std::string> names;
  for (const Check& c : o.checks) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nvidia_driver", "libcuda", "cuda_runtime", "cudnn",
                                             "driver_supports_runtime", "cuda_visible_devices", "gpus_busy",
                                             "host_memory", "swap", "shm", "memlock", "overcommit", "container"}));
}

// This build machine: CUDA 13.0 toolkit and cuDNN 9 in a container, no driver, no GPU.
TEST(Doctor, ToolkitWithoutGpuWarnsButDoesNotFail) {
  Outcome o = Diagnose("nogpu_container", "gpus_none.json");
  EXPECT_EQ(o.Status("nvidia_driver"), CheckStatus::kWarn);
  EXPECT_EQ(o.Get("nvidia_driver").detail,
            "no NVIDIA GPU and no NVIDIA driver on this machine (no /dev/nvidia*, no /proc/driver/nvidia/version, no "
            "NVIDIA device on the PCI bus): GPU training is impossible here, CPU training works");
  EXPECT_EQ(o.Status("libcuda"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("cuda_runtime"), CheckStatus::kOk);
  EXPECT_EQ(o.Get("cuda_runtime").detail, "CUDA runtime 13.0 (/usr/local/cuda-13.0/lib/libcudart.so.13)");
  EXPECT_EQ(o.Get("cudnn").detail, "cuDNN 9.19.0 (/usr/local/cuda-13.0/lib/libcudnn.so.9)");
  EXPECT_EQ(o.Status("driver_supports_runtime"), CheckStatus::kWarn);
  EXPECT_EQ(o.Get("driver_supports_runtime").detail,
            "cannot check without a driver: the CUDA 13.0 runtime needs driver >= 580.65.06");
  EXPECT_EQ(o.Status("memlock"), CheckStatus::kWarn);
  EXPECT_NE(o.Get("memlock").detail.find("memlock limit 8.00 MiB"), std::string::npos);
  EXPECT_EQ(o.Status("shm"), CheckStatus::kOk);
  EXPECT_EQ(o.Status("swap"), CheckStatus::kOk);
  EXPECT_EQ(o.Status("overcommit"), CheckStatus::kOk);
  EXPECT_EQ(o.Status("container"), CheckStatus::kWarn);
  EXPECT_EQ(o.Get("container").detail,
            "in a container (/.dockerenv exists) with no GPU passed through (no /dev/nvidia*)");
  for (const Check& c : o.checks) EXPECT_NE(c.status, CheckStatus::kFail) << c.name;
}

TEST(Doctor, RequireGpuTurnsNoGpuIntoFailure) {
  DoctorOptions options;
  options.require_gpu = true;
  Outcome o = Diagnose("nogpu_container", "gpus_none.json", options);
  EXPECT_EQ(o.Status("nvidia_driver"), CheckStatus::kFail);
  EXPECT_EQ(o.Status("libcuda"), CheckStatus::kFail);
  EXPECT_EQ(o.Status("container"), CheckStatus::kFail);
  EXPECT_EQ(o.Status("memlock"), CheckStatus::kWarn);  // unrelated checks keep their verdict
}

TEST(Doctor, OldDriverNewRuntimeFails) {
  Outcome o = Diagnose("gpu_old_driver", "gpus_mixed.json");
  EXPECT_EQ(o.Status("nvidia_driver"), CheckStatus::kOk);
  EXPECT_EQ(o.Get("nvidia_driver").detail, "NVIDIA driver 535.104.05, 3 GPU device node(s), NVML sees 3 GPU(s)");
  EXPECT_EQ(o.Get("libcuda").detail, "libcuda.so.1 loads and supports CUDA up to 12.2");
  // Versions from the file names (the fake cannot load them).
  EXPECT_EQ(o.Get("cuda_runtime").detail,
            "CUDA runtime 12.2 (/usr/local/cuda-12.2/lib64/libcudart.so.12.2.140), 13.0 "
            "(/usr/local/cuda-13.0/lib64/libcudart.so.13.0.48)");
  EXPECT_EQ(o.Status("cudnn"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("driver_supports_runtime"), CheckStatus::kFail);
  EXPECT_EQ(o.Get("driver_supports_runtime").detail,
            "driver 535.104.05 supports CUDA up to 12.2; the CUDA 13.0 runtime needs driver >= 580.65.06: CUDA calls "
            "fail with 'CUDA driver version is insufficient for CUDA runtime version'");
  EXPECT_EQ(o.Status("cuda_visible_devices"), CheckStatus::kFail);  // "1,gpu2": gpu2 hides the rest
  EXPECT_EQ(o.Status("gpus_busy"), CheckStatus::kWarn);
  EXPECT_EQ(o.Get("gpus_busy").detail,
            "GPU 0 (NVIDIA GeForce GTX 1080 Ti) has 2.00 GiB of 11.00 GiB in use by 1 process(es): pid 4242 python "
            "train.py");
  EXPECT_EQ(o.Status("host_memory"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("swap"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("shm"), CheckStatus::kWarn);
  EXPECT_EQ(o.Get("shm").fix,
            "docker run --shm-size=8g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory on /dev/shm");
  EXPECT_EQ(o.Status("memlock"), CheckStatus::kOk);
  EXPECT_EQ(o.Status("overcommit"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("container"), CheckStatus::kOk);
}

TEST(Doctor, OwnProcessIsNotAnotherProcess) {
  DoctorOptions options;
  options.self_pid = 4242;
  Outcome o = Diagnose("gpu_old_driver", "gpus_mixed.json", options);
  // NVML's used_bytes still says 2 GiB in use, so the GPU is busy, but not "by 1 process".
  EXPECT_EQ(o.Get("gpus_busy").detail,
            "GPU 0 (NVIDIA GeForce GTX 1080 Ti) has 2.00 GiB of 11.00 GiB in use by processes not visible from here");
}

TEST(Doctor, CudaOrdinalsThatDifferFromNvidiaSmiWarn) {
  // No CUDA_VISIBLE_DEVICES, but FASTEST_FIRST puts the 3090s before the 1080 Ti.
  Outcome o = Diagnose("proc_names", "gpus_mixed.json");
  const Check& c = o.Get("cuda_visible_devices");
  EXPECT_EQ(c.status, CheckStatus::kWarn);
  EXPECT_EQ(c.detail.rfind("unset: CUDA sees every GPU; CUDA ordinal 2 is nvidia-smi GPU 0 (NVIDIA GeForce GTX 1080 Ti, "
                           "00000000:01:00.0): the numbers differ",
                           0),
            0u)
      << c.detail;
  EXPECT_NE(c.fix.find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos);
}

TEST(Doctor, KernelModuleAndLibraryMismatchFails) {
  auto system = MakeFakeSystem(kData + "gpu_old_driver");
  GpuSnapshot snap = *MakeFakeGpus(kData + "gpus_mixed.json")->Read();
  snap.driver->driver_version = "535.54.03";
  std::vector<Check> checks = RunDoctorChecks(**system, snap, {});
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].detail,
            "kernel module 535.104.05 but user-space driver 535.54.03: 'Driver/library version mismatch'");
}

TEST(Doctor, ContainerAskedForGpusButGotNone) {
  Outcome o = Diagnose("gpu_not_passed", "gpus_none.json");
  EXPECT_EQ(o.Status("nvidia_driver"), CheckStatus::kFail);
  EXPECT_EQ(o.Get("nvidia_driver").detail,
            "NVIDIA_VISIBLE_DEVICES=all asks for GPUs but none were passed into this container (no /dev/nvidia*)");
  EXPECT_EQ(o.Status("container"), CheckStatus::kFail);
  EXPECT_EQ(o.Status("cuda_runtime"), CheckStatus::kWarn);
  EXPECT_EQ(o.Status("overcommit"), CheckStatus::kOk);
  EXPECT_EQ(o.Status("memlock"), CheckStatus::kOk);  // absent from fake.json: unlimited
}

TEST(Doctor, GpuOnPciBusWithoutDriverFails) {
  Outcome o = Diagnose("pci_no_driver", "gpus_none.json");
  EXPECT_EQ(o.Status("nvidia_driver"), CheckStatus::kFail);
  EXPECT_EQ(o.Get("nvidia_driver").detail,
            "an NVIDIA GPU is on the PCI bus (0000:3b:00.0) but no NVIDIA driver is loaded");
  EXPECT_EQ(o.Status("libcuda"), CheckStatus::kFail);
  EXPECT_EQ(o.Status("container"), CheckStatus::kOk);
}

TEST(DriverTable, MinimumsFromReleaseNotes) {
  EXPECT_EQ(MinimumDriverFor(13000).ga, "580.65.06");
  EXPECT_EQ(MinimumDriverFor(12020).ga, "535.54.03");
  EXPECT_EQ(MinimumDriverFor(12020).minor_compat, "525.60.13");
  EXPECT_EQ(MinimumDriverFor(11080).ga, "520.61.05");
  EXPECT_EQ(MinimumDriverFor(12070).ga, "560.28.03");  // unknown minor: the release below it
  EXPECT_EQ(MinimumDriverFor(14000).ga, "");
  EXPECT_GT(CompareDriverVersions("535.104.05", "535.54.03"), 0);
  EXPECT_LT(CompareDriverVersions("470.42.01", "520.61.05"), 0);
  EXPECT_EQ(CompareDriverVersions("455.23", "455.23.0"), 0);
}

TEST(DoctorCli, ExitCodesAndJson) {
  auto r = testing::RunCli(OOMGUARD_EXE, {"doctor", "--json"}, "",
                           {"OOMGUARD_FAKE_ROOT=" + kData + "gpu_old_driver",
                            "OOMGUARD_FAKE_GPUS=" + kData + "gpus_mixed.json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["checks"].size(), 13u);
  EXPECT_EQ(j["checks"][4]["name"], "driver_supports_runtime");
  EXPECT_EQ(j["checks"][4]["status"], "fail");
  EXPECT_EQ(j["checks"][4]["fix"],
            "upgrade the driver to >= 580.65.06, or use a build of your framework for CUDA 12.2 or older");
  r = testing::RunCli(OOMGUARD_EXE, {"doctor", "--json"}, "",
                      {"OOMGUARD_FAKE_ROOT=" + kData + "nogpu_container",
                       "OOMGUARD_FAKE_GPUS=" + kData + "gpus_none.json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = testing::RunCli(OOMGUARD_EXE, {"doctor", "--require-gpu"}, "",
                      {"OOMGUARD_FAKE_ROOT=" + kData + "nogpu_container",
                       "OOMGUARD_FAKE_GPUS=" + kData + "gpus_none.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail  nvidia_driver"), std::string::npos) << r.out;
}

TEST(DoctorCli, BadFakeRootIsUsageError) {
  char dir[] = "/tmp/oomguard_doctor_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string fake = std::string(dir) + "/fake.json";
  { std::ofstream(fake) << "{not json"; }
  auto r = testing::RunCli(OOMGUARD_EXE, {"doctor"}, "", {std::string("OOMGUARD_FAKE_ROOT=") + dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "oomguard doctor: " + std::string(dir) + "/fake.json: not valid JSON\n");
  std::remove(fake.c_str());
  rmdir(dir);
}

// The real machine. Where there is no NVIDIA GPU at all (this build machine),
// the verdict is "warn", never "fail", and it says so plainly.
TEST(DoctorCli, RealMachineWithoutGpu) {
  struct stat st;
  if (stat("/dev/nvidiactl", &st) == 0 || stat("/proc/driver/nvidia/version", &st) == 0) {
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  auto r = testing::RunCli(OOMGUARD_EXE, {"doctor", "--json"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["checks"][0]["name"], "nvidia_driver");
  EXPECT_EQ(j["checks"][0]["status"], "warn");
  EXPECT_NE(j["checks"][0]["detail"].get<std::string>().find("GPU training is impossible here"), std::string::npos);
  EXPECT_EQ(j["checks"][1]["status"], "warn");  // libcuda
}

// Issue 15.8: one rule for CUDA_VISIBLE_DEVICES, with or without a GPU to check
// against: an unusable entry after a kept one fails; an unusable first entry
// (CUDA sees no GPU, like the CPU idiom -1) warns.
TEST(Doctor, CudaVisibleDevicesFollowsOneRule) {
  std::string root = "/tmp/oomguard_cvd_rule_" + std::to_string(getpid());
  mkdir(root.c_str(), 0700);
  std::string thousands = "0";
  for (int i = 1; i < 3000; ++i) thousands += "," + std::to_string(i);
  struct Case {
    std::string value, gpus_file;
    CheckStatus want;
  };
  const std::vector<Case> cases = {
      {"0,0", "gpus_none.json", CheckStatus::kFail},
      {thousands, "gpus_none.json", CheckStatus::kFail},
      {"0,99999999999999999999", "gpus_none.json", CheckStatus::kFail},
      {"0,32", "gpus_none.json", CheckStatus::kFail},
      {"0,31", "gpus_none.json", CheckStatus::kOk},
      {"99999999999999999999", "gpus_none.json", CheckStatus::kWarn},
      {"-1", "gpus_none.json", CheckStatus::kWarn},
      {"0,0", "gpus_mixed.json", CheckStatus::kFail},
      {thousands, "gpus_mixed.json", CheckStatus::kFail},
      {"0,5", "gpus_mixed.json", CheckStatus::kFail},
      {"5", "gpus_mixed.json", CheckStatus::kWarn},
      {"99999999999999999999", "gpus_mixed.json", CheckStatus::kWarn},
  };
  for (const Case& c : cases) {
    { std::ofstream(root + "/fake.json") << nlohmann::json{{"env", {{"CUDA_VISIBLE_DEVICES", c.value}}}}.dump(); }
    auto system = MakeFakeSystem(root);
    ASSERT_TRUE(system.ok()) << system.error();
    Result<GpuSnapshot> snap = MakeFakeGpus(kData + c.gpus_file)->Read();
    ASSERT_TRUE(snap.ok()) << snap.error();
    Outcome o{RunDoctorChecks(**system, *snap, {})};
    EXPECT_LT(o.Get("cuda_visible_devices").detail.size(), 1000u) << "a long value is cut short in the detail";
    EXPECT_EQ(o.Status("cuda_visible_devices"), c.want) << c.value.substr(0, 30) << " with " << c.gpus_file << ": "
                                                        << o.Get("cuda_visible_devices").detail.substr(0, 300);
  }
  std::remove((root + "/fake.json").c_str());
  rmdir(root.c_str());
}

}  // namespace
}  // namespace oomguard::doctor
