// MachineFacts: what a verdict needs to know about this machine — RAM and swap
// (/proc/meminfo), the size of /dev/shm, the memlock limit (ulimit -l), WSL,
// the NVIDIA driver version and GPU names (/proc/driver/nvidia). One boundary
// shared by the parts that read them (explain --here, doctor): a source reads
// the real machine; FixedMachineFacts returns given facts for tests.
//
// Thread safety: MachineFacts is a plain value. Sources hold no mutable state;
// Read() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomguard {

struct MachineFacts {
  uint64_t ram_total_bytes = 0;                 // 0 = unknown
  uint64_t ram_available_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  std::optional<uint64_t> shm_total_bytes;      // size of /dev/shm; nullopt when absent
  std::optional<uint64_t> shm_free_bytes;
  std::optional<uint64_t> memlock_limit_bytes;  // nullopt = unlimited
  bool wsl = false;                             // running under WSL
  std::optional<std::string> nvidia_driver;     // kernel module version; nullopt = no driver
  std::vector<std::string> gpus;                // GPU model names from the driver
};

class MachineFactsSource {
 public:
  virtual ~MachineFactsSource() = default;
  // Best effort: facts that cannot be read are left at their defaults.
  virtual MachineFacts Read() const = 0;
};

// Reads <proc_root>/meminfo, <proc_root>/version, <proc_root>/driver/nvidia/,
// statvfs(shm_path) and getrlimit(RLIMIT_MEMLOCK).
std::unique_ptr<MachineFactsSource> NewLocalMachineFacts(std::string proc_root = "/proc",
                                                         std::string shm_path = "/dev/shm");

// The fake: returns the facts it was given.
class FixedMachineFacts : public MachineFactsSource {
 public:
  explicit FixedMachineFacts(MachineFacts facts) : facts_(std::move(facts)) {}
  MachineFacts Read() const override { return facts_; }

 private:
  MachineFacts facts_;
};

// Parses the text of /proc/meminfo into the RAM and swap fields of *facts.
void ParseMeminfo(const std::string& text, MachineFacts* facts);

// The kernel module's version in the text of /proc/driver/nvidia/version
// ("NVRM version: NVIDIA UNIX [Open Kernel Module for] x86_64 Kernel Module
// 535.104.05  ..." -> "535.104.05"): the first word of the first line that
// starts with a digit and holds a dot; "" when there is none.
std::string NvidiaDriverVersion(const std::string& proc_version_text);

}  // namespace oomguard
