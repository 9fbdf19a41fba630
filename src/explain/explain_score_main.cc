// explain_score [--misses] [--split PART] [--max-memory-findings N] CORPUS.jsonl...:
// how well `oomguard explain` reads a labelled corpus — top cause in `accept`,
// domain, memory logs left without a finding, and logs labelled with no memory
// domain given a memory finding (on corpus_healthy.jsonl: false positives). --split keeps only the rows whose
// "split" field is PART (dev or heldout); --max-memory-findings N exits 1 when
// a file has more than N logs labelled with no memory domain given one
// (the healthy-log ceiling of ctest explain_healthy_dev). Exit 0 after
// printing, 1 over the ceiling, 2 on bad input.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "scoring.h"

namespace {

constexpr const char* kUsage =
    "usage: explain_score [--misses] [--split PART] [--max-memory-findings N] CORPUS.jsonl...";

}  // namespace

int main(int argc, char** argv) {
  bool misses = false;
  std::string split;
  long max_false = -1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--misses") == 0) {
      misses = true;
    } else if (std::strcmp(argv[i], "--split") == 0 && has_value) {
      split = argv[++i];
    } else if (std::strcmp(argv[i], "--max-memory-findings") == 0 && has_value) {
      char* end = nullptr;
      max_false = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || max_false < 0) {
        std::fprintf(stderr, "explain_score: bad --max-memory-findings '%s' (%s)\n", argv[i], kUsage);
        return 2;
      }
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      std::fprintf(stderr, "explain_score: unknown option or missing value '%s' (%s)\n", argv[i], kUsage);
      return 2;
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "explain_score: no corpus given (%s)\n", kUsage);
    return 2;
  }
  int status = 0;
  for (const std::string& file : files) {
    oomguard::Result<oomguard::explain::CorpusScore> score = oomguard::explain::ScoreCorpus(file, split);
    if (!score.ok()) {
      std::fprintf(stderr, "explain_score: %s\n", score.error().c_str());
      return 2;
    }
    const std::string name = split.empty() ? file : file + " [split " + split + "]";
    std::fputs(oomguard::explain::FormatScore(name, *score, misses).c_str(), stdout);
    if (max_false >= 0 && score->all.memory_false > max_false) {
      std::printf("explain_score: %s: %d logs labelled with no memory domain given a memory finding, more than the ceiling %ld\n",
                  name.c_str(), score->all.memory_false, max_false);
      status = 1;
    }
  }
  return status;
}
