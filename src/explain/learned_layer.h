// The learned last layer: a naive Bayes model of the development corpus's words
// (data/explain_learned_layer.json, written by tools/explain_learned_layer.py
// train) that estimates which memory a log is about when no rule gives any
// finding. Four classes: gpu, host, none (a failure that is not about memory)
// and healthy (a log in which nothing failed: corpus_healthy.jsonl's
// development rows); P(not memory) = P(none) + P(healthy). It runs once per
// log, in Finish(), on a bounded sample of the log's text (its first and last
// LogSample::kSampleBytes), so a log of any size costs the same.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/explain/finding.h"

namespace oomguard::explain {

// The first and last kSampleBytes of a log: what the learned layer reads.
class LogSample {
 public:
  static constexpr size_t kSampleBytes = 16 * 1024;
  void Add(std::string_view text);
  // The head, then (when the log was longer) a newline and the tail.
  std::string Text() const;

 private:
  std::string head_;
  std::string tail_;  // the last kSampleBytes once trimmed (up to twice that between trims)
};

// The model as loaded from the embedded data file.
struct LearnedModelInfo {
  bool loaded = false;
  size_t tokens = 0;
  double threshold_not_memory = 0;  // a finding only when P(not memory) is below this
  std::string trained_on;
};
const LearnedModelInfo& LearnedModel();

// The tokens the model reads (tools/explain_learned_layer.py's tokens()), each once.
std::vector<std::string> LearnedTokens(std::string_view text);

// The text the out-of-memory vocabulary is matched on (tools/explain_learned_layer.py's phrase_text): lower
// case, every run of ASCII characters other than letters and digits one space, a space at each end.
std::string PhraseText(std::string_view text);
// Round 17: whether a line counts something at zero ("CUDA OOMs: 0 | cudaMalloc retries: 0 |",
// "num_out_of_memory_retries 0"): it has a digit, every digit is a 0, and after the last one no ASCII letter or
// digit. GateText is the PhraseText of the text without such lines (what the gates and domain nouns read).
// Round 31: with erase_avoided_oom, an OOM named as what a setting is meant to avoid ("to try to prevent
// out-of-memory errors", EraseAvoidedOom) is erased from each line without a '?' first: it reports no failure to a
// gate either (a question asking how to avoid an OOM is about one its writer has).
bool ZeroCountLine(std::string_view line);
std::string GateText(std::string_view text, bool erase_avoided_oom = false);

// P(gpu), P(host), P(not memory) of `text` under the model (all 0 when no model is loaded).
struct LearnedPosterior {
  double gpu = 0, host = 0, not_memory = 0;
};
LearnedPosterior LearnedPosteriorOf(std::string_view text);

// The layer's finding for a log the rules leave without any: a low, undecided
// gpu_device_oom or host_ram_oom whose summary says it is an estimate from the
// words; nullopt when P(not memory) is not below the model's threshold, or
// (round 16) the larger threshold of a gate whose phrases the log holds (the
// data file's "gates": out-of-memory wordings; memory named beside a failure
// word). Its memory is the one the log's words name when they name only one
// ("domain_nouns"), else the more probable.
std::optional<Finding> LearnedFinding(std::string_view text);

// The summary of every learned finding starts with this.
inline constexpr std::string_view kLearnedSummaryPrefix = "Estimated from the log's words";

}  // namespace oomguard::explain
