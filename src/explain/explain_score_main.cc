// explain_score [--misses] CORPUS.jsonl...: how well `oomguard explain` reads a
// labelled corpus — top cause in `accept`, domain, and memory logs left
// without a finding, per framework. Exit 0 after printing, 2 on bad input.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "scoring.h"

int main(int argc, char** argv) {
  bool misses = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--misses") == 0) {
      misses = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      std::fprintf(stderr, "explain_score: unknown option '%s' (usage: explain_score [--misses] CORPUS.jsonl...)\n",
                   argv[i]);
      return 2;
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "explain_score: no corpus given (usage: explain_score [--misses] CORPUS.jsonl...)\n");
    return 2;
  }
  for (const std::string& file : files) {
    oomguard::Result<oomguard::explain::CorpusScore> score = oomguard::explain::ScoreCorpus(file);
    if (!score.ok()) {
      std::fprintf(stderr, "explain_score: %s\n", score.error().c_str());
      return 2;
    }
    std::fputs(oomguard::explain::FormatScore(file, *score, misses).c_str(), stdout);
  }
  return 0;
}
