#include "learned_layer.h"

#include "patterns.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

// data/explain_learned_layer.json, embedded by src/explain/CMakeLists.txt (learned_layer_data.S).
extern "C" {
extern const char oomguard_explain_learned_layer_begin[];
extern const char oomguard_explain_learned_layer_end[];
}

namespace oomguard::explain {

namespace {

constexpr size_t kClasses = 4;  // gpu, host, none, healthy: the order of the data file's "classes"
constexpr size_t kGpu = 0, kHost = 1, kNone = 2, kHealthy = 3;

struct Model {
  LearnedModelInfo info;
  std::array<double, kClasses> prior{};
  std::unordered_map<std::string, std::array<double, kClasses>> weights;
  // Round 16's gates: a log that holds one of a gate's phrases (ASCII ones padded with a space each side, as
  // they are matched on PhraseText) is held to its threshold when that is larger than the strict one.
  struct Gate {
    std::string name;
    double threshold = 0;
    bool needs_failure_word = false;  // ... and, with this, one of failure_words (or a word ending in a suffix)
    std::vector<std::string> phrases;
  };
  std::vector<Gate> gates;
  std::unordered_set<std::string> failure_words;
  std::vector<std::string> failure_suffixes;
  std::array<std::vector<std::string>, 2> domain_nouns;  // the words for the GPU's memory [kGpu], the host's [kHost]
  bool drop_zero_count_lines = false;  // round 17: the gates and domain nouns skip GateText's zero-count lines
  bool erase_avoided_oom = false;      // round 31: ... and read no OOM named as what a setting avoids
};

// A phrase as PhraseText's output holds it.
std::string Padded(const std::string& phrase) {
  const bool ascii = std::all_of(phrase.begin(), phrase.end(), [](char c) { return (c & 0x80) == 0; });
  return ascii ? " " + phrase + " " : phrase;
}

bool Phrases(const nlohmann::json& list, std::vector<std::string>& out) {
  if (!list.is_array()) return false;
  for (const auto& v : list) {
    if (!v.is_string()) return false;
    out.push_back(Padded(v.get<std::string>()));
  }
  return true;
}

const Model& TheModel() {
  static const Model model = [] {
    Model m;
    std::string_view raw(oomguard_explain_learned_layer_begin,
                         static_cast<size_t>(oomguard_explain_learned_layer_end - oomguard_explain_learned_layer_begin));
    nlohmann::json j = nlohmann::json::parse(raw, nullptr, false);
    if (j.is_discarded() || !j.is_object() ||
        j.value("classes", nlohmann::json()) != nlohmann::json({"gpu", "host", "none", "healthy"}) ||
        !j.contains("prior") || !j["prior"].is_array() || j["prior"].size() != kClasses || !j.contains("tokens") ||
        !j["tokens"].is_object()) {
      return m;  // not loaded: the layer stays silent
    }
    for (size_t c = 0; c < kClasses; ++c) m.prior[c] = j["prior"][c].get<double>();
    for (const auto& [token, w] : j["tokens"].items()) {
      if (!w.is_array() || w.size() != kClasses) return Model{};
      std::array<double, kClasses>& to = m.weights[token];
      for (size_t c = 0; c < kClasses; ++c) to[c] = w[c].get<double>();
    }
    for (const auto& g : j.value("gates", nlohmann::json::array())) {
      Model::Gate gate;
      if (!g.is_object() || !Phrases(g.value("phrases", nlohmann::json()), gate.phrases)) return Model{};
      gate.name = g.value("name", "");
      gate.threshold = g.value("threshold_not_memory", 0.0);
      gate.needs_failure_word = g.value("needs_failure_word", false);
      m.gates.push_back(std::move(gate));
    }
    m.drop_zero_count_lines = j.value("drop_zero_count_lines", false);
    m.erase_avoided_oom = j.value("erase_avoided_oom", false);
    for (const auto& w : j.value("failure_words", nlohmann::json::array())) {
      if (!w.is_string()) return Model{};
      m.failure_words.insert(w.get<std::string>());
    }
    for (const auto& w : j.value("failure_suffixes", nlohmann::json::array())) {
      if (!w.is_string()) return Model{};
      m.failure_suffixes.push_back(w.get<std::string>());
    }
    const nlohmann::json nouns = j.value("domain_nouns", nlohmann::json::object());
    if (nouns.contains("gpu") && !Phrases(nouns["gpu"], m.domain_nouns[kGpu])) return Model{};
    if (nouns.contains("host") && !Phrases(nouns["host"], m.domain_nouns[kHost])) return Model{};
    m.info.loaded = true;
    m.info.tokens = m.weights.size();
    m.info.threshold_not_memory = j.value("threshold_not_memory", 0.0);
    m.info.trained_on = j.value("trained_on", "");
    return m;
  }();
  return model;
}

bool AsciiLetter(unsigned char b) { return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z'); }
bool WordByte(unsigned char b) { return AsciiLetter(b) || (b >= '0' && b <= '9') || b == '_'; }

// The posterior, and (when `words` is set) the at most three tokens that weigh most for `toward` against
// not memory.
LearnedPosterior Posterior(std::string_view text, size_t toward, std::vector<std::string>* words) {
  const Model& m = TheModel();
  if (!m.info.loaded) return {};
  std::array<double, kClasses> score = m.prior;
  std::vector<std::pair<double, std::string>> weighing;
  for (const std::string& token : LearnedTokens(text)) {
    auto it = m.weights.find(token);
    if (it == m.weights.end()) continue;  // outside the vocabulary: says nothing
    const std::array<double, kClasses>& w = it->second;
    for (size_t c = 0; c < kClasses; ++c) score[c] += w[c];
    const double against = std::max(w[kNone], w[kHealthy]);
    if (words && w[toward] > against) weighing.emplace_back(against - w[toward], token);
  }
  if (words) {
    std::sort(weighing.begin(), weighing.end());
    for (size_t i = 0; i < weighing.size() && i < 3; ++i) words->push_back(weighing[i].second);
  }
  const double top = *std::max_element(score.begin(), score.end());
  std::array<double, kClasses> p{};
  double z = 0;
  for (size_t c = 0; c < kClasses; ++c) z += p[c] = std::exp(score[c] - top);
  return {p[kGpu] / z, p[kHost] / z, (p[kNone] + p[kHealthy]) / z};
}

}  // namespace

std::string PhraseText(std::string_view text) {
  std::string out = " ";
  out.reserve(text.size() + 2);
  for (const char ch : text) {
    const unsigned char b = static_cast<unsigned char>(ch);
    if (b < 0x80 && (!WordByte(b) || b == '_')) {  // not a letter or digit ('_' included): one space
      if (out.back() != ' ') out.push_back(' ');
      continue;
    }
    out.push_back(b >= 'A' && b <= 'Z' ? static_cast<char>(b | 0x20) : ch);
  }
  if (out.back() != ' ') out.push_back(' ');
  return out;
}

bool ZeroCountLine(std::string_view line) {
  size_t last = std::string_view::npos;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] >= '0' && line[i] <= '9') {
      if (line[i] != '0') return false;
      last = i;
    }
  }
  if (last == std::string_view::npos) return false;
  for (size_t i = last + 1; i < line.size(); ++i) {
    const unsigned char b = static_cast<unsigned char>(line[i]);
    if (b < 0x80 && WordByte(b) && b != '_') return false;
  }
  return true;
}

std::string GateText(std::string_view text, bool erase_avoided_oom) {
  std::string kept;
  kept.reserve(text.size());
  bool first = true;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (!ZeroCountLine(line)) {
      if (!first) kept.push_back('\n');
      // A question keeps it: "How to load checkpoint shards one by one to avoid OOM error?" asks about an OOM
      // its writer has (corpus-2047).
      std::optional<std::string> edited =
          erase_avoided_oom && line.find('?') == std::string_view::npos ? EraseAvoidedOom(line) : std::nullopt;
      kept.append(edited ? std::string_view(*edited) : line);
      first = false;
    }
    start = end + 1;
  }
  return PhraseText(kept);
}

namespace {

bool HoldsPhrase(const std::string& phrase_text, const std::vector<std::string>& phrases) {
  return std::any_of(phrases.begin(), phrases.end(),
                     [&](const std::string& p) { return phrase_text.find(p) != std::string::npos; });
}

// Whether the text says something failed: one of the model's failure words, or a word ending in a suffix.
bool ReportsTrouble(const Model& m, std::string_view text) {
  for (const std::string& token : LearnedTokens(text)) {
    if (m.failure_words.count(token)) return true;
    for (const std::string& suffix : m.failure_suffixes) {
      if (token.size() >= suffix.size() && token.compare(token.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace


std::vector<std::string> LearnedTokens(std::string_view text) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  auto add = [&](std::string token) {
    if (seen.insert(token).second) out.push_back(std::move(token));
  };
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (!WordByte(b)) {
        ++i;
        continue;
      }
      // A run of letters, digits and '_': with a '_' it is an identifier (a snake_case name, a setting's key),
      // code rather than the log's words, and is skipped; otherwise its runs of 2 to 24 letters are tokens
      // (digits dropped, so numbers, sizes and hex are masked), lower-cased.
      size_t j = i;
      bool identifier = false;
      while (j < n && WordByte(static_cast<unsigned char>(text[j]))) identifier |= text[j++] == '_';
      for (size_t k = i; !identifier && k < j;) {
        if (!AsciiLetter(static_cast<unsigned char>(text[k]))) {
          ++k;
          continue;
        }
        size_t e = k;
        while (e < j && AsciiLetter(static_cast<unsigned char>(text[e]))) ++e;
        if (e - k >= 2 && e - k <= 24) {
          std::string token(text.substr(k, e - k));
          for (char& c : token) c = static_cast<char>(c | 0x20);  // ASCII letters only: lower case
          add(std::move(token));
        }
        k = e;
      }
      i = j;
      continue;
    }
    // Every non-ASCII UTF-8 character is a token of its own (CJK text has no spaces).
    const size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    add(std::string(text.substr(i, std::min(length, n - i))));
    i += length;
  }
  return out;
}

void LogSample::Add(std::string_view text) {
  if (head_.size() < kSampleBytes) {
    const size_t take = std::min(text.size(), kSampleBytes - head_.size());
    head_.append(text.substr(0, take));
    text.remove_prefix(take);
  }
  if (text.empty()) return;
  if (text.size() >= kSampleBytes) {
    tail_.assign(text.substr(text.size() - kSampleBytes));
    return;
  }
  tail_.append(text);
  if (tail_.size() > 2 * kSampleBytes) tail_.erase(0, tail_.size() - kSampleBytes);
}

std::string LogSample::Text() const {
  if (tail_.empty()) return head_;
  std::string_view tail(tail_);
  if (tail.size() > kSampleBytes) tail.remove_prefix(tail.size() - kSampleBytes);
  return head_ + "\n" + std::string(tail);
}

const LearnedModelInfo& LearnedModel() { return TheModel().info; }

LearnedPosterior LearnedPosteriorOf(std::string_view text) { return Posterior(text, kGpu, nullptr); }

std::optional<Finding> LearnedFinding(std::string_view text) {
  const Model& m = TheModel();
  if (!m.info.loaded) return std::nullopt;
  const LearnedPosterior p = LearnedPosteriorOf(text);
  double threshold = m.info.threshold_not_memory;
  std::string gate;  // the gate that let the finding through, if one did
  const std::string phrases = m.drop_zero_count_lines ? GateText(text, m.erase_avoided_oom) : PhraseText(text);
  if (!(p.not_memory < threshold)) {
    for (const auto& g : m.gates) {
      if (g.threshold > threshold && HoldsPhrase(phrases, g.phrases) &&
          (!g.needs_failure_word || ReportsTrouble(m, text))) {
        threshold = g.threshold;
        gate = g.name;
      }
    }
    if (!(p.not_memory < threshold)) return std::nullopt;
  }
  // The memory: the one the log's words name when they name only one, else the model's.
  const bool gpu_words = HoldsPhrase(phrases, m.domain_nouns[kGpu]);
  const bool host_words = HoldsPhrase(phrases, m.domain_nouns[kHost]);
  const bool gpu = gpu_words != host_words ? gpu_words : p.gpu >= p.host;
  std::vector<std::string> words;
  Posterior(text, gpu ? kGpu : kHost, &words);
  std::string weigh;
  for (const std::string& w : words) weigh += (weigh.empty() ? "'" : ", '") + w + "'";
  Finding f;
  f.cause = gpu ? Cause::kGpuDeviceOom : Cause::kHostRamOom;
  f.domain = gpu ? Domain::kGpu : Domain::kHost;
  f.confidence = Confidence::kLow;
  f.summary = std::string(kLearnedSummaryPrefix) + ", not from a recognised message: probably " +
              (gpu ? "GPU memory" : "host memory (RAM)") + " ran short.";
  f.advice.push_back(gpu ? "This is an estimate: find the error itself (run nvidia-smi while the job runs, keep the "
                           "whole traceback) and rerun oomguard explain on the fuller log."
                         : "This is an estimate: find the error itself (free -g while the job runs, dmesg for the "
                           "kernel's OOM killer, the whole traceback) and rerun oomguard explain on the fuller log.");
  f.alternatives = {gpu ? Cause::kHostRamOom : Cause::kGpuDeviceOom, Cause::kNotMemory};
  char odds[160];
  std::snprintf(odds, sizeof odds, "P(GPU) %.2f, P(host) %.2f, P(not memory) %.1e", p.gpu, p.host, p.not_memory);
  f.undecided_because = std::string(gate.empty() ? "" : "its words pass the '" + gate + "' gate, but ") +
                        "no rule recognised the log; a naive Bayes model of the development corpus's words "
                        "(data/explain_learned_layer.json) gives " + std::string(odds) +
                        (weigh.empty() ? "" : " (the words that weigh most: " + weigh + ")");
  return f;
}

}  // namespace oomguard::explain
