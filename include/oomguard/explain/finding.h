// What `oomguard explain` concludes from a log: findings, each with one cause
// from DESIGN.md's vocabulary, the memory domain, the evidence lines, the
// numbers (bytes) read from them and advice that uses those numbers.
//
// Plain value types: copyable, no ownership of outside resources, safe to
// share between threads once built.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomguard::explain {

// The cause vocabulary of DESIGN.md; a finding carries exactly one.
enum class Cause {
  kGpuDeviceOom,
  kGpuOomNonfatalWarning,
  kFragmentation,
  kOtherProcessHoldsMemory,
  kFrameworkPreallocation,
  kHostPinnedOom,
  kHostRamOom,
  kShmExhausted,
  kLeakGrowth,
  kWrongDevice,
  kDriverMismatch,
  kCudaLibraryMismatch,
  kImpossibleRequest,
  kNotMemory,
};

// Which memory ran out: the GPU's, the host's (RAM, pinned, /dev/shm) or none
// (the problem is not a lack of memory).
enum class Domain { kGpu, kHost, kNone };

// "gpu_device_oom", ...; the exact names of DESIGN.md.
std::string_view CauseName(Cause cause);
std::optional<Cause> CauseFromName(std::string_view name);
std::string_view DomainName(Domain domain);  // "gpu", "host", "none"

// One line of the log that supports a finding (cleaned: no ANSI codes, no CR,
// valid UTF-8, at most 400 bytes).
struct Evidence {
  uint64_t line_number = 0;  // 1-based
  std::string text;
};

struct Finding {
  Cause cause = Cause::kNotMemory;
  Domain domain = Domain::kNone;
  std::string framework = "unknown";  // tensorflow, keras, pytorch, jax, nccl, dali, cupy, os, ...
  std::string summary;                // one sentence: which memory ran out and why
  std::vector<Evidence> evidence;     // distinct lines, first few
  uint64_t occurrences = 0;           // matching lines merged into this finding
  std::vector<int> ranks;             // distributed ranks seen in "[rankN]:"-style prefixes
  // Numbers normalized to bytes (keys end in "_bytes") or plain counts
  // ("attempts"): requested_bytes, total_bytes, free_bytes, allocated_bytes,
  // reserved_bytes, reserved_unallocated_bytes, other_processes_bytes,
  // process_in_use_bytes, tensor_bytes, limit_bytes, ...
  std::map<std::string, uint64_t> numbers;
  std::vector<std::string> advice;
  // Empty when the text decides; otherwise the other causes the same text fits
  // and `undecided_because` says what is missing.
  std::vector<Cause> alternatives;
  std::string undecided_because;
};

// Facts about this machine that sharpen a verdict (`explain --here`).
struct HereFacts {
  uint64_t ram_total_bytes = 0;
  uint64_t ram_available_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  std::optional<uint64_t> shm_total_bytes;      // size of /dev/shm; nullopt when absent
  std::optional<uint64_t> shm_free_bytes;
  std::optional<uint64_t> memlock_limit_bytes;  // nullopt = unlimited
  bool wsl = false;                             // running under WSL
  std::optional<std::string> nvidia_driver;     // driver version; nullopt = no driver
  std::vector<std::string> gpus;                // GPU model names from the driver
};

struct Report {
  std::vector<Finding> findings;  // most important first
  uint64_t lines_read = 0;
  uint64_t bytes_read = 0;
  uint64_t lines_truncated = 0;  // lines longer than the cap (only their start was read)
  std::optional<HereFacts> here;
};

}  // namespace oomguard::explain
