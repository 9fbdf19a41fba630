// The memory of a process and all its descendants, from /proc.
//
// ProcessTable is the boundary with /proc: RealProcessTable reads this
// machine; tests use an in-memory fake. SampleTree() is the pure part: find
// the descendants, add up their memory.
// Thread safety: RealProcessTable is stateless and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomguard::doctor {

// From /proc/<pid>/status, in bytes.
struct ProcessMemory {
  uint64_t rss = 0;     // VmRSS: resident host RAM
  uint64_t swap = 0;    // VmSwap: swapped out
  uint64_t locked = 0;  // VmLck: mlock()ed
  uint64_t pinned = 0;  // VmPin: pinned by the kernel (RDMA, some GPU drivers)
};

struct ProcessParent {
  int pid = 0;
  int ppid = 0;
};

class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  // Every process with its parent (a snapshot; processes come and go).
  virtual std::vector<ProcessParent> ListProcesses() = 0;
  // nullopt when the process is gone (or is a zombie without memory).
  virtual std::optional<ProcessMemory> Memory(int pid) = 0;
  // MemAvailable + SwapFree from /proc/meminfo: what the host can still give.
  virtual std::optional<uint64_t> HostAvailableBytes() = 0;
};

std::unique_ptr<ProcessTable> MakeRealProcessTable();

// Parses the Vm* lines of /proc/<pid>/status ("VmRSS:	  1234 kB").
ProcessMemory ParseProcStatus(const std::string& text);
// MemAvailable + SwapFree of /proc/meminfo; nullopt when MemAvailable is missing.
std::optional<uint64_t> ParseHostAvailable(const std::string& meminfo);
// The parent pid from /proc/<pid>/stat ("12 (my prog) S 1 ..."), handling
// spaces and parentheses in the command name; nullopt when malformed.
std::optional<int> ParseStatParent(const std::string& stat);

struct TreeMemory {
  ProcessMemory total;
  std::vector<int> pids;  // root first, then descendants (breadth first)
};

// `root` and every descendant of it, with their memory summed; without
// `root` itself when !count_root.
TreeMemory SampleTree(ProcessTable& table, int root, bool count_root = true);

}  // namespace oomguard::doctor
