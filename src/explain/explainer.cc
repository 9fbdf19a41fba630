#include "oomguard/explain/explainer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amounts.h"
#include "learned_layer.h"
#include "line_cleaner.h"
#include "observation.h"
#include "patterns.h"

namespace oomguard::explain {

struct Explainer::State {
  ExplainOptions options;
  std::vector<Observation> observations;  // in order of first appearance
  LogContext context;
  std::string last_framework;  // the framework named most recently
  uint64_t last_gpu_line = 0;   // the last line that spoke of the GPU (0: none yet)
  uint64_t last_host_line = 0;  // ... of host memory (RAM, CPU, pinned, /dev/shm, cgroup)
  uint64_t line_number = 0;
  uint64_t bytes = 0;
  uint64_t truncated = 0;
  std::string pending;  // AddText: partial line
  bool pending_truncated = false;
  std::vector<int> matches;
  ShapeCache shapes;
  std::vector<int> number_hits;
  std::string scratch;
  LogSample sample;  // the log's first and last bytes, for the learned layer (Finish)

  void Line(std::string_view raw);
  void Scan(std::string_view block);
  void CountLines(std::string_view region);
  void AppendPending(std::string_view part);
  void Segment(std::string_view text);
  void Record(int pattern_index, std::string_view text);
  void ExtractNumbers(std::string_view text, Observation& o);
  void NoteDomainWords(bool gpu);
  LineDomain DomainOf(std::string_view text, bool* both_undecided);
  Observation& ObservationFor(Signal signal);
};

// A line that speaks of the GPU (or of host memory): it colours the family and
// prose lines of the window around it.
void Explainer::State::NoteDomainWords(bool gpu) {
  if ((gpu ? last_gpu_line : last_host_line) == line_number) return;  // once per line
  (gpu ? last_gpu_line : last_host_line) = line_number;
  for (Observation& o : observations) {
    if (UsesDomainWindow(o.signal) && line_number <= o.window_end) {
      ++(gpu ? o.near_gpu : o.near_host);
    }
  }
}

// Most lines of a log match nothing. One DFA pass of the prefilter over the
// block finds the next line that might match; the lines before it are only
// counted. REQUIRES: block ends with '\n'.
void Explainer::State::Scan(std::string_view block) {
  const RE2& prefilter = *Compiled().prefilter;
  const re2::StringPiece text(block.data(), block.size());
  size_t pos = 0;
  while (pos < block.size()) {
    re2::StringPiece hit;
    if (!prefilter.Match(text, pos, block.size(), RE2::UNANCHORED, &hit, 1)) {
      CountLines(block.substr(pos));
      break;
    }
    size_t hit_at = static_cast<size_t>(hit.data() - block.data());
    const void* before = memrchr(block.data() + pos, '\n', hit_at - pos);
    size_t line_start = before ? static_cast<size_t>(static_cast<const char*>(before) - block.data()) + 1 : pos;
    CountLines(block.substr(pos, line_start - pos));
    size_t line_end =
        static_cast<size_t>(static_cast<const char*>(std::memchr(block.data() + hit_at, '\n', block.size() - hit_at)) -
                            block.data());
    std::string_view line = block.substr(line_start, line_end - line_start);
    if (line.size() > options.max_line_bytes) {
      ++truncated;
      line = line.substr(0, options.max_line_bytes);
    }
    Line(line);
    pos = line_end + 1;
  }
}

// Counts the whole lines of `region` (and those over the length cap) without looking at them.
void Explainer::State::CountLines(std::string_view region) {
  const char* p = region.data();
  const char* end = p + region.size();
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (!nl) nl = end;
    if (static_cast<size_t>(nl - p) > options.max_line_bytes) ++truncated;
    ++line_number;
    p = nl + 1;
  }
}

void Explainer::State::AppendPending(std::string_view part) {
  if (pending_truncated) return;
  size_t room = options.max_line_bytes - pending.size();
  if (part.size() > room) {
    pending.append(part.substr(0, room));
    pending_truncated = true;
    ++truncated;
  } else {
    pending.append(part);
  }
}

Observation& Explainer::State::ObservationFor(Signal signal) {
  for (Observation& o : observations) {
    if (o.signal == signal) return o;
  }
  observations.emplace_back();
  observations.back().signal = signal;
  return observations.back();
}

namespace {

bool ContainsCaseless(std::string_view text, std::string_view word) {
  if (word.size() > text.size()) return false;
  for (size_t i = 0; i + word.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < word.size() && std::tolower(static_cast<unsigned char>(text[i + k])) == word[k]) ++k;
    if (k == word.size()) return true;
  }
  return false;
}

// The memory a specific signal is about, whatever words its line holds: true the GPU, false the host.
std::optional<bool> EvidenceOfSignal(Signal signal) {
  switch (signal) {
    case Signal::kTorchOomNumbers:
    case Signal::kGpuOom:
    case Signal::kGpuStatusRow:
    case Signal::kGpuStartupMemory:
    case Signal::kTfDeviceAllocFailed: return true;
    case Signal::kHostPinnedOom:
    case Signal::kShmExhausted:
    case Signal::kKernelOomKiller:
    case Signal::kHostRamOom:
    case Signal::kWorkerKilled:
    case Signal::kProcessKilled:
    case Signal::kLauncherKilled: return false;
    default: return std::nullopt;
  }
}

}  // namespace

void Explainer::State::Line(std::string_view raw) {
  ++line_number;
  // '\r' ends a segment too: CRLF and progress bars that redraw with '\r'.
  size_t start = 0;
  while (start <= raw.size()) {
    const void* cr = std::memchr(raw.data() + start, '\r', raw.size() - start);
    size_t end = cr ? static_cast<const char*>(cr) - raw.data() : raw.size();
    if (end > start) Segment(raw.substr(start, end - start));
    if (!cr) break;
    start = end + 1;
  }
}

void Explainer::State::Segment(std::string_view text) {
  if (std::memchr(text.data(), '\x1b', text.size()) != nullptr) {
    scratch = StripAnsi(text);
    text = scratch;
  }
  shapes.Match(text, &matches);
  if (matches.empty()) return;
  std::span<const Pattern> table = Patterns();
  int signal_index = -1;
  int growth_index = -1;  // a line that reports an OOM and describes growth (or another process): both
  for (int index : matches) {
    const Pattern& p = table[index];
    if (!IsContext(p.signal)) {
      if (signal_index < 0) signal_index = index;
      if (growth_index < 0 && (p.signal == Signal::kLeakGrowth || p.signal == Signal::kOtherProcessProse)) {
        growth_index = index;
      }
      continue;
    }
    switch (p.signal) {
      case Signal::kContextFramework:
        ++context.framework_lines[p.framework];
        last_framework = p.framework;
        break;
      case Signal::kContextExpandableOn: context.expandable_segments_on = true; break;
      case Signal::kContextPinMemory: context.pin_memory = true; break;
      case Signal::kContextWsl: context.wsl = true; break;
      case Signal::kContextPreallocation: context.preallocation = true; break;
      case Signal::kContextPinningCall: context.pinning_call = true; break;
      case Signal::kContextGpu:
        ++context.gpu_lines;
        NoteDomainWords(true);
        break;
      case Signal::kContextHost:
        ++context.host_lines;
        NoteDomainWords(false);
        break;
      default: break;
    }
  }
  if (signal_index < 0) return;
  // A framework's own message on the line speaks before a person's words around it ("torch.load(...,
  // map_location='cpu') ... Segmentation fault"): a specific pattern later in the table wins over prose
  // (not a status row or a report field, which only carry numbers); growth or another process named in the
  // prose is still recorded below.
  int prose_index = -1;
  if (table[signal_index].tier == Tier::kProse) {
    for (int index : matches) {
      Signal s = table[index].signal;
      if (index > signal_index && !IsContext(s) && table[index].tier == Tier::kSpecific &&
          s != Signal::kGpuStatusRow && s != Signal::kOomguardReportField) {
        prose_index = signal_index;
        signal_index = index;
        break;
      }
    }
  }
  if ((table[signal_index].signal == Signal::kMemoryVocabulary || table[signal_index].signal == Signal::kGrowthVocabulary) &&
      IsCodeErrorLine(text)) {
    return;
  }
  // Healthy output with a trouble word in a zero count, a status field's key or an advising "if" (round 12):
  // a family or last-layer match that does not survive erasing them is no finding; the line's contexts stay.
  // An OOM named as what a setting avoids (round 13) is erased whatever the tier.
  // The erased line goes through the shape cache (a log repeats such lines with other numbers); when a match
  // survives, the original line is matched again (a cache hit) so that DomainOf reads its shape, not the erased one.
  if (std::optional<std::string> edited =
          table[signal_index].tier != Tier::kSpecific ? EraseHealthyNoise(text) : EraseAvoidedOom(text)) {
    std::vector<int> again;
    shapes.Match(*edited, &again);
    if (std::all_of(again.begin(), again.end(), [&](int index) { return IsContext(table[index].signal); })) return;
    shapes.Match(text, &again);
  }
  // A message whose memory is certain ("exit code 137", an OOM-killer line, a device OOM with its numbers)
  // is evidence of that memory for the wordings around it, even when it names no domain word.
  if (std::optional<bool> gpu = EvidenceOfSignal(table[signal_index].signal);
      gpu && (*gpu ? last_gpu_line : last_host_line) != line_number) {
    ++(*gpu ? context.gpu_lines : context.host_lines);
    NoteDomainWords(*gpu);
  }
  Record(signal_index, text);
  if (growth_index > signal_index) {
    Signal first = table[signal_index].signal;
    if (first == Signal::kGpuOom || first == Signal::kMemoryFamily || first == Signal::kMemoryProse) {
      Record(growth_index, text);
    }
  } else if (growth_index >= 0 && growth_index == prose_index) {
    Record(growth_index, text);
  }
}

// The memory a line's words name: pinned before host before GPU (DomainOfLine), except that a line naming
// the GPU and the host takes the memory its memory noun names ("GPU memory keeps growing while the CPU
// idles", "RAM error with torch.device('cuda')"); *both_undecided when it names both and no noun decides.
LineDomain Explainer::State::DomainOf(std::string_view text, bool* both_undecided) {
  LineDomain domain = shapes.Domain(text);
  *both_undecided = false;
  if (shapes.Words(text).Both()) {
    LineDomain noun = MemoryNounOfLine(text);
    if (noun != LineDomain::kUnknown) return noun;
    *both_undecided = true;
  }
  return domain;
}

void Explainer::State::Record(int pattern_index, std::string_view text) {
  const Pattern& p = Patterns()[pattern_index];
  Signal signal = p.signal;
  LineDomain line_domain = LineDomain::kUnknown;
  bool both_memories = false;  // the line names the GPU and host memory: the lines around it decide
  if (signal == Signal::kMemoryFamily || signal == Signal::kMemoryProse || signal == Signal::kOomguardReport ||
      signal == Signal::kOomguardReportField || signal == Signal::kMemoryVocabulary ||
      signal == Signal::kGrowthVocabulary) {
    line_domain = DomainOf(text, &both_memories);
    // The last layer's line that names both and no memory noun: the lines around it decide.
    if (signal != Signal::kMemoryVocabulary && signal != Signal::kGrowthVocabulary && signal != Signal::kMemoryFamily) {
      both_memories = false;
    }
    if (both_memories) line_domain = LineDomain::kUnknown;
  }
  if (signal == Signal::kMemoryFamily) {
    // A family wording: the line's own words say which memory, when they do.
    switch (line_domain) {
      case LineDomain::kGpu: signal = Signal::kGpuOom; break;
      case LineDomain::kHost:
        // Weak host cues only (a notebook, Colab): the lines around it may still name the GPU (round 30).
        if (!OnlyWeakHostWords(text)) signal = Signal::kHostRamOom;
        break;
      case LineDomain::kPinned: signal = Signal::kHostPinnedOom; break;
      case LineDomain::kUnknown: break;
    }
  }
  if (signal == Signal::kOomguardReportField) {
    // A field of the report= JSON or the text report: numbers for the report, not a finding.
    Observation& report = ObservationFor(Signal::kOomguardReport);
    if (report.line_domain == LineDomain::kUnknown) report.line_domain = line_domain;
    if (++report.field_lines <= kDetailedLines) ExtractNumbers(text, report);
    return;
  }
  Observation& o = ObservationFor(signal);
  if (o.count == 0) {
    o.pattern = p.name;
    o.first_line = line_number;
  }
  ++o.count;
  if (UsesDomainWindow(signal)) {
    // The lines just before count now, those just after as they come (NoteDomainWords).
    if (o.count <= kDetailedLines) {
      if (last_gpu_line && line_number - last_gpu_line <= kDomainWindow) ++o.near_gpu;
      if (last_host_line && line_number - last_host_line <= kDomainWindow) ++o.near_host;
    }
    o.window_end = line_number + kDomainWindow;
    if (o.implied == LineDomain::kUnknown) o.implied = p.implied;
  }
  if (o.framework.empty()) o.framework = p.framework[0] != '\0' ? p.framework : last_framework;
  if (p.tier < o.tier) o.tier = p.tier;
  if (signal == Signal::kOomguardReport && o.oomguard_verdict == 0) o.oomguard_verdict = OomguardVerdictOfLine(text);

  if (std::optional<int> rank = RankOf(text); rank && o.ranks.size() < kMaxRanks) o.ranks.insert(*rank);
  // The first lines of a kind say what there is to say (evidence, numbers, the
  // back-off sequence); a log that repeats the message every step then costs
  // one pattern match per line.
  if (o.count > kDetailedLines) return;
  if (o.line_domain == LineDomain::kUnknown && !both_memories) {
    bool both = false;
    o.line_domain = line_domain != LineDomain::kUnknown ? line_domain : DomainOf(text, &both);
    o.weak_line_domain = o.line_domain == LineDomain::kHost && OnlyWeakHostWords(text);
  }

  std::string clean = CleanLine(text);
  bool known = false;
  for (const Evidence& e : o.evidence) known = known || e.text == clean;
  if (!known && o.evidence.size() < kMaxEvidence) o.evidence.push_back({line_number, clean});

  if (ContainsCaseless(text, "expandable_segments") || ContainsCaseless(text, "max_split_size_mb")) {
    o.has_fragmentation_hint = true;
  }
  // The same domain words as the line's domain (patterns.cc), not a list of their own.
  LineWords words = shapes.Words(text);
  o.mentions_gpu = o.mentions_gpu || words.gpu;
  o.mentions_host = o.mentions_host || words.host || words.pinned;
  if (ContainsCaseless(text, "shm") || ContainsCaseless(text, "shared memory")) o.shm_words = true;

  ExtractNumbers(text, o);
}

// Numbers: the first extractor of each key that matches this line.
void Explainer::State::ExtractNumbers(std::string_view text, Observation& o) {
  const CompiledPatterns& compiled = Compiled();
  std::span<const NumberPattern> number_table = NumberPatterns();
  std::map<std::string, uint64_t> found;
  re2::StringPiece piece(text.data(), text.size());
  // One pass finds the extractors that can match; only those run with captures.
  number_hits.clear();
  compiled.number_set->Match(piece, &number_hits);
  std::sort(number_hits.begin(), number_hits.end());
  for (int hit : number_hits) {
    size_t i = static_cast<size_t>(hit);
    if (found.count(number_table[i].key)) continue;
    std::string amount;
    if (RE2::PartialMatch(piece, *compiled.numbers[i], &amount)) {
      if (std::optional<uint64_t> bytes = ParseAmount(amount)) found[number_table[i].key] = *bytes;
    }
  }
  if (std::optional<uint64_t> tensor = TensorBytesInLine(text)) found["tensor_bytes"] = *tensor;
  if (o.signal == Signal::kGpuStatusRow) {
    uint64_t used = 0, total = 0;
    int utilization = -1;
    if (ParseGpuRow(text, &used, &total, &utilization) && total > 0) {
      // Held: nearly full, or half full while the GPU computes nothing.
      if (used * 10 >= total * 9 || (utilization == 0 && used * 2 >= total)) ++o.full_rows;
      if (o.fullest_total == 0 || used * o.fullest_total > o.fullest_used * total) {
        o.fullest_used = used;
        o.fullest_total = total;
      }
    }
    return;
  }
  if (auto r = found.find("requested_bytes"); r != found.end()) {
    if ((o.requests.empty() || o.requests.back() != r->second) && o.requests.size() < kMaxRequests) {
      o.requests.push_back(r->second);
    }
  }
  for (const auto& [key, value] : found) o.numbers.emplace(key, value);
}

Explainer::Explainer(ExplainOptions options) : state_(new State) {
  state_->options = std::move(options);
  if (state_->options.max_line_bytes == 0) state_->options.max_line_bytes = 1;
}

Explainer::~Explainer() { delete state_; }

void Explainer::AddLine(std::string_view line) {
  state_->bytes += line.size() + 1;
  state_->sample.Add(line);
  state_->sample.Add("\n");
  if (line.size() > state_->options.max_line_bytes) {
    ++state_->truncated;
    line = line.substr(0, state_->options.max_line_bytes);
  }
  state_->Line(line);
}

void Explainer::AddText(std::string_view text) {
  State& s = *state_;
  s.bytes += text.size();
  s.sample.Add(text);
  // A line begun in an earlier block.
  if (!s.pending.empty() || s.pending_truncated) {
    const void* nl = std::memchr(text.data(), '\n', text.size());
    size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
    s.AppendPending(text.substr(0, end));
    if (!nl) return;
    s.Line(s.pending);
    s.pending.clear();
    s.pending_truncated = false;
    text.remove_prefix(end + 1);
  }
  // Whole lines, then the start of the next one.
  const void* last_nl = memrchr(text.data(), '\n', text.size());
  if (last_nl) {
    size_t n = static_cast<size_t>(static_cast<const char*>(last_nl) - text.data()) + 1;
    s.Scan(text.substr(0, n));
    text.remove_prefix(n);
  }
  if (!text.empty()) s.AppendPending(text);
}

Report Explainer::Finish() {
  State& s = *state_;
  if (!s.pending.empty() || s.pending_truncated) {
    s.Line(s.pending);
    s.pending.clear();
    s.pending_truncated = false;
  }
  Report report;
  report.lines_read = s.line_number;
  report.bytes_read = s.bytes;
  report.lines_truncated = s.truncated;
  report.here = s.options.here;
  // Which program wrote the log: read once, on the sampled text, only when something is to be decided.
  if (!s.observations.empty()) s.context.program = ProgramOfText(s.sample.Text(), &s.context.program_name);
  report.findings = Decide(s.observations, s.context, s.options);
  // The learned last layer: only when no rule gave any finding, once per log, on the sampled text.
  if (report.findings.empty()) {
    if (std::optional<Finding> estimate = LearnedFinding(s.sample.Text())) report.findings.push_back(*estimate);
  }
  return report;
}

Result<Report> ExplainFd(int fd, const ExplainOptions& options) {
  Explainer explainer(options);
  std::unique_ptr<char[]> buffer(new char[1 << 20]);
  for (;;) {
    ssize_t n = read(fd, buffer.get(), 1 << 20);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    explainer.AddText(std::string_view(buffer.get(), static_cast<size_t>(n)));
  }
  return explainer.Finish();
}

Result<Report> ExplainFile(const std::string& path, const ExplainOptions& options) {
  if (path == "-") return ExplainFd(STDIN_FILENO, options);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return MakeError("'" + path + "' is a directory, not a log file");
  }
  Result<Report> report = ExplainFd(fd, options);
  close(fd);
  if (!report.ok()) return MakeError("cannot read '" + path + "': " + report.error().substr(13));
  return report;
}

Report ExplainText(std::string_view text, const ExplainOptions& options) {
  Explainer explainer(options);
  explainer.AddText(text);
  return explainer.Finish();
}

}  // namespace oomguard::explain
