// Acceptance: every labelled excerpt (the dev set and the excerpts we added)
// is classified into one of its `accept` classes and the right domain.
// Prints the accuracy per set; docs/explain.md quotes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include <filesystem>

#include "oomguard/explain/explainer.h"
#include "scoring.h"

namespace oomguard::explain {
namespace {

Domain DomainOfClass(const std::string& cause) {
  static const std::set<std::string> host = {"host_pinned_oom", "host_ram_oom", "shm_exhausted"};
  static const std::set<std::string> none = {"driver_mismatch", "cuda_library_mismatch", "not_memory"};
  if (host.count(cause)) return Domain::kHost;
  if (none.count(cause)) return Domain::kNone;
  return Domain::kGpu;
}

struct Score {
  int total = 0, cause_ok = 0, domain_ok = 0;
};

Score RunSet(const std::string& name) {
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/" + name);
  EXPECT_TRUE(in.good()) << name;
  Score s;
  std::set<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    std::string id = j.at("id");
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    for (const char* key : {"framework", "source", "excerpt", "cause", "accept", "fix"}) {
      EXPECT_TRUE(j.contains(key)) << id << " lacks " << key;
    }
    std::set<std::string> accept;
    for (const auto& a : j.at("accept")) {
      EXPECT_TRUE(CauseFromName(a.get<std::string>())) << id << ": unknown class " << a;
      accept.insert(a.get<std::string>());
    }
    EXPECT_TRUE(accept.count(j.at("cause").get<std::string>())) << id << ": cause not in accept";
    Report r = ExplainText(j.at("excerpt").get<std::string>());
    ++s.total;
    EXPECT_FALSE(r.findings.empty()) << id << ": no finding";
    if (r.findings.empty()) continue;
    const Finding& top = r.findings[0];
    bool cause_ok = accept.count(std::string(CauseName(top.cause))) > 0;
    // The expected domain: the label's, or "none" when the label has none; a
    // label without a domain whose accepted classes span domains leaves it open.
    bool domain_ok;
    if (j.at("domain").is_null()) {
      std::set<Domain> spanned;
      for (const std::string& a : accept) spanned.insert(DomainOfClass(a));
      domain_ok = spanned.size() > 1 || top.domain == Domain::kNone;
    } else {
      domain_ok = DomainName(top.domain) == j.at("domain").get<std::string>();
    }
    EXPECT_TRUE(cause_ok) << id << ": got " << CauseName(top.cause) << ", accepts " << j.at("accept");
    EXPECT_TRUE(domain_ok) << id << ": got domain " << DomainName(top.domain) << ", label " << j.at("domain");
    s.cause_ok += cause_ok;
    s.domain_ok += cause_ok && domain_ok;
  }
  std::printf("[ accuracy ] %s: %d/%d cause in accept, %d/%d cause and domain\n", name.c_str(), s.cause_ok, s.total,
              s.domain_ok, s.total);
  return s;
}

TEST(DataSet, DevSetIsClassifiedIntoAcceptedClassesAndDomains) {
  Score s = RunSet("explain_dev.jsonl");
  EXPECT_EQ(s.total, 26);
}

TEST(DataSet, AddedExcerptsAreClassifiedAndCoverEveryClassTwice) {
  Score s = RunSet("explain_more.jsonl");
  EXPECT_GE(s.total, 40);
  std::ifstream in(std::string(OOMGUARD_SOURCE_DIR) + "/tests/data/explain/explain_more.jsonl");
  std::map<std::string, int> per_class;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) ++per_class[nlohmann::json::parse(line).at("cause").get<std::string>()];
  }
  for (const char* cause : {"gpu_device_oom", "gpu_oom_nonfatal_warning", "fragmentation",
                            "other_process_holds_memory", "framework_preallocation", "host_pinned_oom", "host_ram_oom",
                            "shm_exhausted", "leak_growth", "wrong_device", "driver_mismatch",
                            "cuda_library_mismatch", "impossible_request", "not_memory"}) {
    EXPECT_GE(per_class[cause], 2) << cause;
  }
}

// The real corpus gathered from public threads (tests/data/explain/corpus_*.jsonl).
// Only the development part (corpus_dev.jsonl) is a gate. The held-out part is
// not opened here unless OOMGUARD_EXPLAIN_HELDOUT=1 (then it is printed, never
// gated), so that running the tests does not turn it into a tuning target.
// The targets are 90% top cause, 98% domain and no memory log without a
// finding; the gate holds what this code measured on the whole development file
// minus one point (round 35: its 82 fresh rows, scored before any change, left the 1987-row file at 95.4 % top cause
// (1896), 95.5 % domain, 42 of 1495 without a finding; after its rules 95.9 % (1906), 95.8 %, 36 of 1495, so the
// top-cause floor is lowered from 96.1 % to the 95.9 % measured, with no margin; 1285 rows after round 15's rules, layer unchanged: 96.7 % top cause, 96.1 % domain, 25 of 930 =
// 2.7 % memory logs without a finding, so the floors stay; round 15's 58 new rows, scored before any change, left the
// file at 96.3 %, 95.2 %, 37 of 930, under the domain floor until round 15's rules;
// 1227 rows after round 14's rules with the layer retrained through corpus-1957: 96.8 % top cause,
// 96.3 % domain, 22 of 878 = 2.5 % memory logs without a finding, so the floors stay; retrained through corpus-1973
// the layer gave a memory finding to "内存增加到32G后就可以正常运行了" (RAM added as a fix), so it was not shipped; round 14's first 39 new rows,
// scored before any change, left the 1196-row file at 96.7 %, 96.3 %, 23 of 853, its second 20, scored with
// round 14's first rules, the 1216-row file at 96.6 %, 96.1 %, 24 of 867, and its third 11, scored with the
// second batch's rules, the 1227-row file at 96.7 %, 96.1 %, 23 of 878;
// 1157 rows after round 13's rules and the learned layer retrained through corpus-1862: 97.1 %
// top cause, 96.5 % domain, 19 of 826 = 2.3 % memory logs without a finding; before those rules, with round 13's
// 72 new rows scored before any rule was written from them, with the learned last layer: 95.6 % top cause, 95.2 %
// domain, 29 of 826 = 3.5 % memory logs without a finding;
// 910 rows after round 6: 96.9 % top cause, 96.6 % domain, 13 of 633 = 2.1 % memory
// logs without a finding; after round 5: 94.6 %, 94.2 %, 22 of 633; before round 5, with round 4's data added:
// 93.7 %, 93.3 %, 27 of 633; round 5 tuned on the 467 rows of sha256(source)[16:24] parity 0 only, round 6 on
// the whole file; docs/explain.md states both), in per mille so that the margin is one point and not a
// rounding, and says which target is not met yet.
constexpr int kTargetDomainPercent = 98;
constexpr int kFloorTopCausePerMille = 959;
constexpr int kFloorDomainPerMille = 955;
constexpr int kCeilingUnexplainedPerMille = 33;  // of the memory logs

std::filesystem::path CorpusDir() { return std::filesystem::path(OOMGUARD_SOURCE_DIR) / "tests/data/explain"; }

void PrintAccuracy(const std::string& name, const CorpusScore& score) {
  const ScoreCounts& all = score.all;
  std::printf("[ accuracy ] %s: %d/%d top cause in accept, %d/%d domain, %d of %d memory logs without a finding\n",
              name.c_str(), all.cause_ok, all.total, all.domain_ok, all.total, all.memory_unexplained,
              all.memory_logs);
  std::fputs(FormatScore(name, score, false).c_str(), stdout);
}

TEST(DataSet, RealCorpusDevelopmentPartHoldsItsFloor) {
  std::filesystem::path path = CorpusDir() / "corpus_dev.jsonl";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no tests/data/explain/corpus_dev.jsonl in this tree";
  Result<CorpusScore> score = ScoreCorpus(path.string());
  ASSERT_TRUE(score.ok()) << score.error();
  const std::string name = path.filename().string();
  PrintAccuracy(name, *score);
  const ScoreCounts& all = score->all;
  ASSERT_GT(all.total, 0);
  if (all.domain_ok * 100 < all.total * kTargetDomainPercent) {
    std::printf("[ target   ] %s: domain below the %d%% target\n", name.c_str(), kTargetDomainPercent);
  }
  if (all.memory_unexplained > 0) {
    std::printf("[ target   ] %s: %d memory logs without a finding (target 0)\n", name.c_str(), all.memory_unexplained);
  }
  EXPECT_GE(all.cause_ok * 1000, all.total * kFloorTopCausePerMille) << FormatScore(name, *score, true);
  EXPECT_GE(all.domain_ok * 1000, all.total * kFloorDomainPerMille) << FormatScore(name, *score, true);
  EXPECT_LE(all.memory_unexplained * 1000, all.memory_logs * kCeilingUnexplainedPerMille)
      << FormatScore(name, *score, true);
}

// Any other part: printed only (the held-out one only when asked for).
TEST(DataSet, RealCorpusOtherPartsAreOnlyReported) {
  std::vector<std::filesystem::path> corpora;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    std::string name = entry.path().filename().string();
    if (name.rfind("corpus_", 0) != 0 || entry.path().extension() != ".jsonl" || name == "corpus_dev.jsonl") continue;
    if (IsHeldOutCorpus(name) && !HeldOutReadingAllowed()) continue;
    corpora.push_back(entry.path());
  }
  std::sort(corpora.begin(), corpora.end());
  if (corpora.empty()) GTEST_SKIP() << "no other corpus part to report (held-out: OOMGUARD_EXPLAIN_HELDOUT=1)";
  for (const std::filesystem::path& path : corpora) {
    // A file with both parts (corpus_healthy.jsonl): its held-out rows only when asked for.
    Result<CorpusScore> score = ScoreCorpus(path.string(), HeldOutReadingAllowed() ? "" : "dev");
    ASSERT_TRUE(score.ok()) << score.error();
    PrintAccuracy(path.filename().string(), *score);
  }
}

}  // namespace
}  // namespace oomguard::explain
