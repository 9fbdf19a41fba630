// What the explainer keeps while it reads: one bounded Observation per signal
// and the context flags. verdict.cc turns them into findings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "oomguard/explain/explainer.h"
#include "oomguard/explain/finding.h"
#include "patterns.h"

namespace oomguard::explain {

inline constexpr size_t kMaxEvidence = 3;
inline constexpr size_t kMaxRequests = 64;
inline constexpr size_t kMaxRanks = 256;
// Lines of one kind read in full (evidence, numbers, words); later ones are only
// counted (and their rank noted). Twice kMaxRequests: a back-off prints two lines per attempt.
inline constexpr uint64_t kDetailedLines = 2 * kMaxRequests;

struct Observation {
  Signal signal = Signal::kNotMemory;
  std::string pattern;    // name of the first pattern that matched
  std::string framework;  // "" = not known yet
  uint64_t count = 0;     // matching lines
  uint64_t first_line = 0;
  std::vector<Evidence> evidence;  // distinct cleaned lines, first kMaxEvidence
  uint64_t field_lines = 0;        // oomguard report fields read into this observation
  std::map<std::string, uint64_t> numbers;  // first value seen per key
  std::vector<uint64_t> requests;  // requested_bytes in order, consecutive repeats dropped
  std::set<int> ranks;
  bool has_fragmentation_hint = false;  // PyTorch printed its expandable_segments / max_split_size_mb hint
  bool mentions_host = false;           // the lines speak of CPU/RAM/host
  bool mentions_gpu = false;
  Tier tier = Tier::kProse;                   // the most specific tier among its lines
  LineDomain line_domain = LineDomain::kUnknown;  // the first domain its lines' words name
  int oomguard_verdict = 0;                   // OomguardVerdictOfLine of the report's verdict line
  // GPU status rows: the fullest row.
  uint64_t full_rows = 0;
  uint64_t fullest_used = 0, fullest_total = 0;
};

struct LogContext {
  std::map<std::string, uint64_t> framework_lines;  // lines naming each framework
  bool expandable_segments_on = false;
  bool pin_memory = false;
  bool wsl = false;
  bool preallocation = false;
  bool pinning_call = false;  // a traceback through pin_memory() / cudaHostRegister
  uint64_t gpu_lines = 0;     // lines that speak of the GPU
  uint64_t host_lines = 0;    // lines that speak of host memory
};

// Turns observations (in order of first appearance) into findings, most
// important first.
std::vector<Finding> Decide(const std::vector<Observation>& observations, const LogContext& context,
                            const ExplainOptions& options);

}  // namespace oomguard::explain
