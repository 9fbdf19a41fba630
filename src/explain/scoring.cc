#include "scoring.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "oomguard/explain/explainer.h"

namespace oomguard::explain {

namespace {

Domain DomainOfClass(Cause cause) {
  switch (cause) {
    case Cause::kHostPinnedOom:
    case Cause::kHostRamOom:
    case Cause::kShmExhausted: return Domain::kHost;
    case Cause::kDriverMismatch:
    case Cause::kCudaLibraryMismatch:
    case Cause::kNotMemory: return Domain::kNone;
    default: return Domain::kGpu;
  }
}

void Add(ScoreCounts& c, const ScoredLog& log) {
  ++c.total;
  c.cause_ok += log.cause_ok;
  c.domain_ok += log.domain_ok;
  c.memory_logs += log.label_domain != "none";
  c.memory_unexplained += log.memory_unexplained;
  c.not_memory_logs += log.label_domain == "none";
  c.memory_false += log.memory_false;
}

std::string Percent(int part, int whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5.1f%%", whole ? 100.0 * part / whole : 0.0);
  return buf;
}

}  // namespace

Result<CorpusScore> ScoreCorpus(const std::string& path, const std::string& split) {
  std::ifstream in(path);
  if (!in) return MakeError("cannot open '" + path + "'");
  CorpusScore score;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    std::string where = path + ":" + std::to_string(number);
    if (j.is_discarded() || !j.is_object()) return MakeError(where + ": not a JSON object");
    for (const char* key : {"id", "excerpt", "accept", "domain"}) {
      if (!j.contains(key)) return MakeError(where + ": no '" + key + "'");
    }
    if (!j["excerpt"].is_string() || !j["accept"].is_array()) return MakeError(where + ": bad excerpt or accept");
    if (!split.empty() && j.contains("split") && j["split"] != split) continue;
    ScoredLog log;
    log.id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    log.framework = j.contains("framework") && j["framework"].is_string() ? j["framework"].get<std::string>() : "?";
    std::set<Domain> spanned;
    std::set<std::string> accept;
    for (const auto& a : j["accept"]) {
      std::optional<Cause> c = a.is_string() ? CauseFromName(a.get<std::string>()) : std::nullopt;
      if (!c) return MakeError(where + ": unknown class " + a.dump());
      accept.insert(a.get<std::string>());
      spanned.insert(DomainOfClass(*c));
    }
    log.accept.assign(accept.begin(), accept.end());
    log.label_domain = j["domain"].is_string() ? j["domain"].get<std::string>() : "none";

    Report r = ExplainText(j["excerpt"].get<std::string>());
    log.got_cause = r.findings.empty() ? "not_memory" : std::string(CauseName(r.findings[0].cause));
    log.got_domain = r.findings.empty() ? "none" : std::string(DomainName(r.findings[0].domain));
    log.confidence = r.findings.empty() ? "" : std::string(ConfidenceName(r.findings[0].confidence));
    log.cause_ok = accept.count(log.got_cause) > 0;
    // A label without a domain whose accepted classes span domains leaves it open.
    log.domain_ok = log.got_domain == log.label_domain || (j["domain"].is_null() && spanned.size() > 1);
    bool memory_finding = false;
    for (const Finding& f : r.findings) memory_finding = memory_finding || f.domain != Domain::kNone;
    log.memory_unexplained = log.label_domain != "none" && !memory_finding;
    log.memory_false = log.label_domain == "none" && memory_finding;
    Add(score.all, log);
    Add(score.per_framework[log.framework], log);
    score.logs.push_back(std::move(log));
  }
  return score;
}

std::string FormatScore(const std::string& name, const CorpusScore& score, bool list_misses) {
  std::string out = name + ": " + std::to_string(score.all.total) + " logs\n";
  char row[256];
  std::snprintf(row, sizeof row, "  %-22s %5s %16s %16s %14s\n", "framework", "logs", "top cause", "domain",
                "mem no finding");
  out += row;
  auto line = [&](const std::string& label, const ScoreCounts& c) {
    std::snprintf(row, sizeof row, "  %-22s %5d %4d %s %5d %s %7d/%d\n", label.c_str(), c.total, c.cause_ok,
                  Percent(c.cause_ok, c.total).c_str(), c.domain_ok, Percent(c.domain_ok, c.total).c_str(),
                  c.memory_unexplained, c.memory_logs);
    out += row;
  };
  for (const auto& [framework, counts] : score.per_framework) line(framework, counts);
  line("all", score.all);
  if (score.all.not_memory_logs > 0) {
    out += "  logs labelled with no memory domain given a memory finding: " + std::to_string(score.all.memory_false) + "/" +
           std::to_string(score.all.not_memory_logs) + "\n";
  }
  if (list_misses) {
    for (const ScoredLog& log : score.logs) {
      // A memory finding on a log whose only accepted class is not_memory (a healthy log) is a miss even
      // where the top finding is not: the false positive corpus_healthy.jsonl counts.
      bool healthy_hit = log.memory_false && log.accept == std::vector<std::string>{"not_memory"};
      if (log.cause_ok && log.domain_ok && !log.memory_unexplained && !healthy_hit) continue;
      std::string accept;
      for (const std::string& a : log.accept) accept += (accept.empty() ? "" : ",") + a;
      out += "  miss " + log.id + " (" + log.framework + "): got " + log.got_cause + "/" + log.got_domain +
             (log.confidence.empty() ? "" : " " + log.confidence) + ", label " + accept + "/" + log.label_domain +
             (log.memory_unexplained ? ", memory log without a finding" : "") +
             (healthy_hit ? ", memory finding on a log about no memory problem" : "") + "\n";
    }
  }
  return out;
}

bool IsHeldOutCorpus(const std::string& file_name) { return file_name.find("heldout") != std::string::npos; }

bool HeldOutReadingAllowed() {
  const char* allowed = std::getenv("OOMGUARD_EXPLAIN_HELDOUT");
  return allowed != nullptr && std::strcmp(allowed, "1") == 0;
}

}  // namespace oomguard::explain
