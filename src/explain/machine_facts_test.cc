// The --here boundary: the /proc reader against a fake /proc tree, and a fake
// MachineFacts feeding the explainer.
#include "oomguard/explain/machine_facts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {
namespace {

namespace fs = std::filesystem;

TEST(MachineFacts, ParsesMeminfo) {
  HereFacts f;
  ParseMeminfo("MemTotal:       16303428 kB\nMemFree:  1 kB\nMemAvailable:    8151714 kB\n"
               "SwapTotal:       2097148 kB\nSwapFree:        1048574 kB\n",
               &f);
  EXPECT_EQ(f.ram_total_bytes, 16303428ull * 1024);
  EXPECT_EQ(f.ram_available_bytes, 8151714ull * 1024);
  EXPECT_EQ(f.swap_total_bytes, 2097148ull * 1024);
  EXPECT_EQ(f.swap_free_bytes, 1048574ull * 1024);
}

TEST(MachineFacts, ReadsAFakeProcTree) {
  fs::path root = fs::temp_directory_path() / ("oomguard_proc_" + std::to_string(getpid()));
  fs::create_directories(root / "driver/nvidia/gpus/0000:01:00.0");
  fs::create_directories(root / "shm");
  std::ofstream(root / "meminfo") << "MemTotal: 1024 kB\nMemAvailable: 512 kB\nSwapTotal: 0 kB\n";
  std::ofstream(root / "version") << "Linux version 5.15.90.1-microsoft-standard-WSL2\n";
  std::ofstream(root / "driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n";
  std::ofstream(root / "driver/nvidia/gpus/0000:01:00.0/information")
      << "Model: \t\t NVIDIA GeForce RTX 3090\nIRQ:   16\n";
  HereFacts f = NewLocalMachineFacts(root.string(), (root / "shm").string())->Read();
  fs::remove_all(root);
  EXPECT_EQ(f.ram_total_bytes, 1024u * 1024);
  EXPECT_EQ(f.ram_available_bytes, 512u * 1024);
  EXPECT_TRUE(f.wsl);
  EXPECT_EQ(f.nvidia_driver, "535.104.05");
  EXPECT_EQ(f.gpus, std::vector<std::string>{"NVIDIA GeForce RTX 3090"});
  EXPECT_TRUE(f.shm_total_bytes.has_value());  // the fake shm dir lives on some filesystem
}

TEST(MachineFacts, NoDriverMeansNoGpus) {
  fs::path root = fs::temp_directory_path() / ("oomguard_proc_nodrv_" + std::to_string(getpid()));
  fs::create_directories(root);
  HereFacts f = NewLocalMachineFacts(root.string(), (root / "absent").string())->Read();
  fs::remove_all(root);
  EXPECT_FALSE(f.nvidia_driver.has_value());
  EXPECT_TRUE(f.gpus.empty());
  EXPECT_FALSE(f.shm_total_bytes.has_value());
  EXPECT_EQ(f.ram_total_bytes, 0u);
}

HereFacts SmallWslMachine() {
  HereFacts f;
  f.ram_total_bytes = 8ull << 30;
  f.ram_available_bytes = 1ull << 30;
  f.shm_total_bytes = 64ull << 20;
  f.shm_free_bytes = 0;
  f.wsl = true;
  return f;
}

TEST(MachineFacts, DriverVersionOfProprietaryAndOpenModules) {
  EXPECT_EQ(oomguard::NvidiaDriverVersion(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(oomguard::NvidiaDriverVersion("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  "
                                          "Release Build  (dvs-builder@U16-I3-B03-4-3)\n"),
            "550.54.14");
  EXPECT_EQ(oomguard::NvidiaDriverVersion("garbage\n1.2 on the second line\n"), "");
}

TEST(MachineFacts, FakeFactsReachTheAdvice) {
  FixedMachineFacts fake(SmallWslMachine());
  ExplainOptions options;
  options.here = fake.Read();
  Report r = ExplainText(
      "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
      "RuntimeError: CUDA error: out of memory\n",
      options);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].cause, Cause::kShmExhausted);
  bool shm_named = false;
  for (const std::string& a : r.findings[0].advice) shm_named = shm_named || a == "/dev/shm on this machine is 64.00 MiB (0 B free).";
  EXPECT_TRUE(shm_named);
  // WSL on this machine makes pinned host memory the first alternative of a bare CUDA OOM.
  EXPECT_EQ(r.findings[1].cause, Cause::kGpuDeviceOom);
  ASSERT_FALSE(r.findings[1].alternatives.empty());
  EXPECT_EQ(r.findings[1].alternatives[0], Cause::kHostPinnedOom);
}

}  // namespace
}  // namespace oomguard::explain
