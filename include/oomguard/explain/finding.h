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

#include "oomguard/machine_facts.h"

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

// How sure a finding is (DESIGN.md): high = a specific message with its
// numbers; medium = a family of out-of-memory wordings recognised without its
// specifics; low = inferred from context or prose.
enum class Confidence { kHigh, kMedium, kLow };

// "gpu_device_oom", ...; the exact names of DESIGN.md.
std::string_view CauseName(Cause cause);
std::optional<Cause> CauseFromName(std::string_view name);
std::string_view DomainName(Domain domain);  // "gpu", "host", "none"
std::string_view ConfidenceName(Confidence confidence);  // "high", "medium", "low"

// One line of the log that supports a finding (cleaned: no ANSI codes, no CR,
// valid UTF-8, at most 400 bytes).
struct Evidence {
  uint64_t line_number = 0;  // 1-based
  std::string text;
};

struct Finding {
  Cause cause = Cause::kNotMemory;
  Domain domain = Domain::kNone;
  Confidence confidence = Confidence::kMedium;
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

// Facts about this machine that sharpen a verdict (`explain --here`): the
// shared machine-facts layer's value.
using HereFacts = oomguard::MachineFacts;

struct Report {
  std::vector<Finding> findings;  // most important first
  uint64_t lines_read = 0;
  uint64_t bytes_read = 0;
  uint64_t lines_truncated = 0;  // lines longer than the cap (only their start was read)
  std::optional<HereFacts> here;
};

}  // namespace oomguard::explain
