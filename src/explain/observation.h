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
// Lines before and after a family wording whose domain words decide its memory.
inline constexpr uint64_t kDomainWindow = 6;

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
  bool shm_words = false;               // the lines name shared memory (/dev/shm, shm)
  Tier tier = Tier::kProse;                   // the most specific tier among its lines
  LineDomain line_domain = LineDomain::kUnknown;  // the first domain its lines' words name
  bool weak_line_domain = false;  // line_domain came from weak host cues only (OnlyWeakHostWords): the window may overrule it
  int oomguard_verdict = 0;                   // OomguardVerdictOfLine of the report's verdict line
  // Family and prose lines that name no memory: lines within kDomainWindow of
  // them that speak of the GPU or of host memory (the context window).
  uint64_t near_gpu = 0, near_host = 0;
  uint64_t window_end = 0;  // the last line whose words still count
  LineDomain implied = LineDomain::kUnknown;  // the first line's wording's own memory (Pattern::implied)
  // GPU status rows: the fullest row.
  uint64_t full_rows = 0;
  uint64_t fullest_used = 0, fullest_total = 0;
};

// Signals whose memory, when their line names none, comes from the lines around them.
inline bool UsesDomainWindow(Signal signal) {
  return signal == Signal::kMemoryFamily || signal == Signal::kMemoryProse || signal == Signal::kLeakGrowth ||
         signal == Signal::kMemoryVocabulary || signal == Signal::kGrowthVocabulary;
}

struct LogContext {
  std::map<std::string, uint64_t> framework_lines;  // lines naming each framework
  bool expandable_segments_on = false;
  bool pin_memory = false;
  bool wsl = false;
  bool preallocation = false;
  bool pinning_call = false;  // a traceback through pin_memory() / cudaHostRegister
  uint64_t gpu_lines = 0;     // lines that speak of the GPU
  uint64_t host_lines = 0;    // lines that speak of host memory
  // The program that wrote the log (ProgramOfText on its first and last bytes, round 30): the memory a line
  // that names none speaks of when the lines around it and the log's other lines do not say.
  LineDomain program = LineDomain::kUnknown;
  std::string program_name;
};

// Turns observations (in order of first appearance) into findings, most
// important first.
std::vector<Finding> Decide(const std::vector<Observation>& observations, const LogContext& context,
                            const ExplainOptions& options);

}  // namespace oomguard::explain
