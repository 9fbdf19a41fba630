#include "oomguard/explain/report_format.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "oomguard/units.h"
#include "report_json.h"

namespace oomguard::explain {

namespace {

std::string DomainWords(Domain d) {
  switch (d) {
    case Domain::kGpu: return "GPU memory";
    case Domain::kHost: return "host memory";
    case Domain::kNone: return "not memory";
  }
  return "";
}

std::string NumberText(const std::string& key, uint64_t value) {
  std::string name = key;
  bool bytes = name.size() > 6 && name.compare(name.size() - 6, 6, "_bytes") == 0;
  if (bytes) name.resize(name.size() - 6);
  for (char& c : name) c = c == '_' ? ' ' : c;
  if (!bytes) return name + " " + std::to_string(value);
  return name + " " + FormatBytes(value);
}

std::string LinesText(uint64_t n) { return std::to_string(n) + (n == 1 ? " line" : " lines"); }

// Numbers in the order a reader needs them: what was asked, what there is, who holds it.
int NumberRank(const std::string& key) {
  static const char* kOrder[] = {"requested_bytes", "last_attempt_bytes", "attempts", "tensor_bytes", "total_bytes",
                                 "limit_bytes", "free_bytes", "allocated_bytes", "reserved_bytes",
                                 "reserved_unallocated_bytes", "process_in_use_bytes", "other_processes_bytes",
                                 "used_bytes"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (key == kOrder[i]) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kOrder));
}

std::string RankText(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8) {
      out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return out;
}

}  // namespace

std::string FormatReport(const Report& report, const std::string& source) {
  std::string out;
  if (report.findings.empty()) {
    out += "no memory problem found in " + source + " (" + LinesText(report.lines_read) + ")\n";
  } else {
    out += std::to_string(report.findings.size()) + (report.findings.size() == 1 ? " finding" : " findings") +
           " in " + source + " (" + LinesText(report.lines_read) + "), most important first\n";
  }
  int index = 0;
  for (const Finding& f : report.findings) {
    out += "\n" + std::to_string(++index) + ". " + std::string(CauseName(f.cause)) + " (" + DomainWords(f.domain) +
           ", " + f.framework + ", " + std::string(ConfidenceName(f.confidence)) + " confidence)\n";
    out += "   " + f.summary + "\n";
    if (!f.alternatives.empty()) {
      out += "   Undecided: " + f.undecided_because + "; it could also be ";
      for (size_t i = 0; i < f.alternatives.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == f.alternatives.size() ? " or " : ", ") + std::string(CauseName(f.alternatives[i]));
      }
      out += ".\n";
    }
    if (!f.numbers.empty()) {
      out += "   numbers:";
      bool first = true;
      std::vector<std::pair<std::string, uint64_t>> ordered(f.numbers.begin(), f.numbers.end());
      std::stable_sort(ordered.begin(), ordered.end(),
                       [](const auto& a, const auto& b) { return NumberRank(a.first) < NumberRank(b.first); });
      for (const auto& [key, value] : ordered) {
        out += (first ? " " : "; ") + NumberText(key, value);
        first = false;
      }
      out += "\n";
    }
    if (f.occurrences > 0 || !f.evidence.empty()) {  // the learned layer's estimate has no evidence line
      out += "   evidence (" + std::to_string(f.occurrences) + (f.occurrences == 1 ? " line" : " lines");
      if (f.evidence.size() < f.occurrences) out += ", " + std::to_string(f.evidence.size()) + " shown";
      if (!f.ranks.empty()) out += ", ranks " + RankText(f.ranks);
      out += "):\n";
      for (const Evidence& e : f.evidence) out += "     " + std::to_string(e.line_number) + ": " + e.text + "\n";
    }
    for (const std::string& a : f.advice) out += "   - " + a + "\n";
  }
  if (report.lines_truncated > 0) {
    out += "\n(" + std::to_string(report.lines_truncated) + " lines longer than the line limit were read only in part)\n";
  }
  if (report.here) {
    const HereFacts& h = *report.here;
    out += "\nthis machine: RAM " + FormatBytes(h.ram_total_bytes) + " (" + FormatBytes(h.ram_available_bytes) +
           " available), swap " + FormatBytes(h.swap_total_bytes) + ", /dev/shm " +
           (h.shm_total_bytes ? FormatBytes(*h.shm_total_bytes) : std::string("absent")) + ", memlock " +
           (h.memlock_limit_bytes ? FormatBytes(*h.memlock_limit_bytes) : std::string("unlimited")) + ", NVIDIA driver " +
           (h.nvidia_driver ? *h.nvidia_driver : std::string("none")) +
           (h.gpus.empty() ? std::string() : ", " + std::to_string(h.gpus.size()) + " GPU(s)") + (h.wsl ? ", WSL" : "") +
           "\n";
  }
  return out;
}

nlohmann::json ReportToJson(const Report& report, const std::string& source) {
  nlohmann::json j;
  j["source"] = source;
  j["lines"] = report.lines_read;
  j["bytes"] = report.bytes_read;
  j["lines_truncated"] = report.lines_truncated;
  j["findings"] = nlohmann::json::array();
  for (const Finding& f : report.findings) {
    nlohmann::json jf;
    jf["cause"] = std::string(CauseName(f.cause));
    jf["domain"] = std::string(DomainName(f.domain));
    jf["framework"] = f.framework;
    jf["confidence"] = std::string(ConfidenceName(f.confidence));
    jf["summary"] = f.summary;
    jf["evidence"] = nlohmann::json::array();
    jf["evidence_lines"] = nlohmann::json::array();
    for (const Evidence& e : f.evidence) {
      jf["evidence"].push_back(e.text);
      jf["evidence_lines"].push_back(e.line_number);
    }
    jf["occurrences"] = f.occurrences;
    jf["ranks"] = f.ranks;
    jf["numbers"] = nlohmann::json::object();
    for (const auto& [k, v] : f.numbers) jf["numbers"][k] = v;
    jf["advice"] = f.advice;
    jf["alternatives"] = nlohmann::json::array();
    for (Cause c : f.alternatives) jf["alternatives"].push_back(std::string(CauseName(c)));
    jf["undecided_because"] = f.undecided_because.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.undecided_because);
    j["findings"].push_back(jf);
  }
  if (report.here) {
    const HereFacts& h = *report.here;
    nlohmann::json jh;
    jh["ram_total_bytes"] = h.ram_total_bytes;
    jh["ram_available_bytes"] = h.ram_available_bytes;
    jh["swap_total_bytes"] = h.swap_total_bytes;
    jh["swap_free_bytes"] = h.swap_free_bytes;
    jh["shm_total_bytes"] = h.shm_total_bytes ? nlohmann::json(*h.shm_total_bytes) : nlohmann::json(nullptr);
    jh["shm_free_bytes"] = h.shm_free_bytes ? nlohmann::json(*h.shm_free_bytes) : nlohmann::json(nullptr);
    jh["memlock_limit_bytes"] = h.memlock_limit_bytes ? nlohmann::json(*h.memlock_limit_bytes) : nlohmann::json(nullptr);
    jh["wsl"] = h.wsl;
    jh["nvidia_driver"] = h.nvidia_driver ? nlohmann::json(*h.nvidia_driver) : nlohmann::json(nullptr);
    jh["gpus"] = h.gpus;
    j["here"] = jh;
  }
  return j;
}

}  // namespace oomguard::explain
