// Scores the explainer against a labelled corpus (one JSON object a line:
// id, framework, excerpt, cause, accept, domain, ...): top-cause accuracy
// (the first finding's cause is in `accept`), domain accuracy, and how many
// logs about memory got no finding with a memory domain, overall and per
// framework. Used by dataset_test.cc and by `explain_score` (tools).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::explain {

struct ScoreCounts {
  int total = 0;
  int cause_ok = 0;           // top cause in accept
  int domain_ok = 0;          // top domain equals the label's
  int memory_logs = 0;        // the label names a memory domain (gpu or host)
  int memory_unexplained = 0; // ... and no finding has a memory domain
  int not_memory_logs = 0;    // the label names no memory domain (not memory, a healthy log, or undecided)
  int memory_false = 0;       // ... and yet some finding has a memory domain (a false positive)
};

struct ScoredLog {
  std::string id;
  std::string framework;
  std::string got_cause;   // "not_memory" when there is no finding
  std::string got_domain;  // "none" when there is no finding
  std::string confidence;  // of the top finding; "" when none
  std::vector<std::string> accept;
  std::string label_domain;  // "gpu", "host" or "none"
  bool cause_ok = false;
  bool domain_ok = false;
  bool memory_unexplained = false;
  bool memory_false = false;  // label without a memory domain, a finding with one
};

struct CorpusScore {
  ScoreCounts all;
  std::map<std::string, ScoreCounts> per_framework;
  std::vector<ScoredLog> logs;
};

// Reads and scores a jsonl corpus. With `split` non-empty, a row whose "split"
// field names another part is skipped (rows without the field are kept), so
// one file can hold a development and a held-out part (corpus_healthy.jsonl).
// Errors: the file cannot be read, a line is not JSON or lacks
// id/excerpt/accept/domain, an accepted class is unknown.
Result<CorpusScore> ScoreCorpus(const std::string& path, const std::string& split = "");

// A table: one row per framework and a total row, then each miss.
std::string FormatScore(const std::string& name, const CorpusScore& score, bool list_misses);

// The held-out part of a corpus (a file name that holds "heldout") is measured
// once, with explain_score; tests open it only when OOMGUARD_EXPLAIN_HELDOUT=1,
// so that nobody tunes on its answers by running the tests.
bool IsHeldOutCorpus(const std::string& file_name);
bool HeldOutReadingAllowed();

}  // namespace oomguard::explain
