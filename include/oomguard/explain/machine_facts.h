// MachineFacts: the boundary between `explain --here` and this machine (/proc,
// /dev/shm, rlimits, the NVIDIA driver's /proc entries). A real implementation
// reads them; tests use a fake that returns fixed facts.
//
// Thread safety: Read() may be called from any thread; it holds no state.
#pragma once

#include <memory>
#include <string>

#include "oomguard/explain/finding.h"

namespace oomguard::explain {

class MachineFacts {
 public:
  virtual ~MachineFacts() = default;
  // Best effort: facts that cannot be read are left at their defaults.
  virtual HereFacts Read() const = 0;
};

// Reads <proc_root>/meminfo, <proc_root>/version, <proc_root>/driver/nvidia/,
// statvfs(shm_path) and getrlimit(RLIMIT_MEMLOCK).
std::unique_ptr<MachineFacts> NewLocalMachineFacts(std::string proc_root = "/proc",
                                                   std::string shm_path = "/dev/shm");

// Parses the text of /proc/meminfo into the RAM and swap fields of *facts.
void ParseMeminfo(const std::string& text, HereFacts* facts);

}  // namespace oomguard::explain
