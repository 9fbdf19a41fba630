// The pattern table: named RE2 patterns that recognize lines of a log, each
// tagged with the signal it gives, the framework that prints it and a real
// example line (patterns_test.cc checks every example against the table).
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomguard::explain {

// What a matching line tells. Signals make findings; contexts only colour the
// verdict of other findings.
enum class Signal {
  // --- signals (the first matching one in table order wins for a line)
  kTorchOomNumbers,     // PyTorch/HIP caching allocator OOM with its numbers
  kOomguardReport,      // oomguard's own OOM report (text or report= JSON): head or verdict line
  kHostPinnedOom,       // pinned (page-locked) host allocation failed
  kImpossibleHint,      // the framework says the size itself is wrong
  kGpuOomWarning,       // an allocator says its OOM is not a failure
  kGpuOom,              // a device allocation failed (with or without numbers)
  kGpuStartupMemory,    // a framework's start-up line: the GPU's total / free memory
  kLibraryAllocFailure, // cuBLAS/cuDNN/cuFFT/nvJPEG could not get memory
  kLibraryInitFailure,  // cuBLAS/cuDNN could not initialize (usually no memory left)
  kDaliAllocFailure,    // DALI's decoder allocator failed (buffers grow with images)
  kCollectiveCudaError, // NCCL's "unhandled cuda error": often a failed allocation, not always
  kShmExhausted,
  kKernelOomKiller,     // the kernel's OOM killer names its victim
  kHostRamOom,
  kWorkerKilled,        // a DataLoader worker died of SIGKILL
  kProcessKilled,       // SIGKILL / "Killed" / return code -9 without saying by whom
  kLauncherKilled,      // a launcher killed its workers after one failed (DeepSpeed, torch.distributed)
  kMemoryFamily,        // an out-of-memory wording of any framework; the domain comes from the line or the log
  kMemoryProse,         // memory named as the problem in prose ("uses too much memory"): weak, any domain
  kLeakGrowth,
  kPreallocationProse,  // "uses 70% of the GPU whatever the model", "60 GB taken on import"
  kPreallocationSetting,// a preallocation setting named in prose (weak: never hides an error)
  kOtherProcessProse,   // "a killed job still holds GPU memory", "my labmate's job"
  kFragmentationProse,  // "OOMs because of memory fragmentation"
  kFragmentationSetting,// an allocator setting against fragmentation named in prose (weak: never hides an error)
  kTfDeviceAllocFailed, // TF could not reserve its region of the GPU at start-up
  kAllocatorStats,      // a printout of allocated vs reserved (cached) memory
  kHostUsageProse,      // "CPU memory used=137 GB" when the problem occurs
  kPinnedProse,         // "solved by pin_memory=False"
  kShmProse,            // "--shm-size 8G": /dev/shm named in prose (weak: never hides an error)
  kWrongDeviceMemory,   // memory lands on GPU 0 instead of each rank's device
  kWrongDevice,         // the process does not see the GPU it expects
  kDriverMismatch,
  kCudaLibraryMismatch,
  kCudaInvalidArgument, // "invalid argument": not memory, unless it failed while pinning host memory
  kNotMemory,
  kGpuStatusRow,        // an nvidia-smi / gpustat row: used / total per GPU
  kMemoryVocabulary,    // memory named beside trouble, in no wording above: the last layer, kept only
                        // when no other finding has a memory domain, and ranked last
  kGrowthVocabulary,    // the last layer's growth: memory named with a verb of growth ("RAM keeps
                        // increasing") in no leak wording above; kept and ranked like kMemoryVocabulary
  kOomguardReportField, // a numeric field of oomguard's OOM report (numbers only, no finding)
  // --- contexts
  kContextFramework,        // the line names the framework that wrote the log
  kContextExpandableOn,     // expandable_segments is already on
  kContextPinMemory,        // pin_memory / pinned buffers are involved
  kContextWsl,              // the log comes from WSL
  kContextPreallocation,    // TF/JAX preallocation is mentioned
  kContextTwoFrameworks,    // TF and another framework share the process
  kContextPinningCall,      // the failure happened while pinning host memory (pin_memory(), cudaHostRegister)
  kContextGpu,              // the line speaks of the GPU (CUDA, device, cuDNN, ...)
  kContextHost,             // the line speaks of host memory (CPU, RAM, swap)
};

// How a pattern recognises a problem; it sets the finding's confidence.
enum class Tier {
  kSpecific,  // one framework's own message (high with its numbers, medium without)
  kFamily,    // a wording many frameworks share ("out of memory", "failed to allocate"): medium
  kProse,     // a person describing the problem, or a cue from context: low
};

// Which memory a line speaks of, from its words (kGpuWords / kHostWords / kPinnedWords).
enum class LineDomain { kUnknown, kGpu, kHost, kPinned };

bool IsContext(Signal signal);

struct Pattern {
  const char* name;
  Signal signal;
  const char* framework;  // "" when the line does not say
  const char* regex;      // RE2 syntax, matched on raw bytes (Latin-1)
  const char* example;    // a real line this pattern recognizes (tested)
  Tier tier = Tier::kSpecific;
  // The memory a family wording implies when its line names none ("std::bad_alloc",
  // "exceeded memory limit": host); kUnknown: the lines around it decide, then the log.
  LineDomain implied = LineDomain::kUnknown;
};

// The table, in priority order.
std::span<const Pattern> Patterns();

// Number extractors: each captures one amount (group 1) from a line that a
// signal pattern matched. The first extractor of a key that matches wins.
struct NumberPattern {
  const char* key;    // "requested_bytes", "total_bytes", ...
  const char* regex;  // group 1: an amount ("20.00 MiB", "8589934592", "1.25TiB")
};
std::span<const NumberPattern> NumberPatterns();

// The compiled table, built once per process.
struct CompiledPatterns {
  // All of Patterns() with each bounded gap ".{0,N}" widened to ".*" (index =
  // table index): a superset that keeps the set's DFA small, so one pass over a
  // line stays fast; candidates whose pattern was widened are confirmed by `each`.
  std::unique_ptr<RE2::Set> set;
  std::vector<bool> widened;
  std::vector<std::unique_ptr<RE2>> each;
  // Patterns whose regex names a digit ("exit code 137", "[1-9]"); all others
  // answer the same for two lines that differ only in their digits.
  std::vector<bool> digit_sensitive;
  std::unique_ptr<RE2::Set> sensitive_set;  // the digit-sensitive patterns, widened like `set`
  std::vector<int> sensitive_index;         // sensitive_set index -> table index
  // The digit-sensitive patterns with every digit they name read as \d (and
  // widened): a superset that answers the same for every line of one shape, so
  // the shape cache asks it once per shape whether the sensitive set can match.
  std::unique_ptr<RE2::Set> blind_set;
  std::vector<std::unique_ptr<RE2>> numbers;  // NumberPatterns()
  std::unique_ptr<RE2::Set> number_set;       // NumberPatterns(), widened likewise: which extractors can match
  // Keywords one of which every pattern needs: text without a hit cannot match.
  std::unique_ptr<RE2> prefilter;
};
const CompiledPatterns& Compiled();

// Reads "15836 / 16130 MB" or "15000MiB / 16160MiB" (nvidia-smi, gpustat: MiB)
// and the row's GPU utilization in percent (-1 when the row has none).
bool ParseGpuRow(std::string_view line, uint64_t* used_bytes, uint64_t* total_bytes, int* utilization);

// The programs a log can come from, and the memory each allocates (round 30): when no line of a log names a
// memory (the lines around an out-of-memory wording name none, nor does the log as a whole), the program that
// wrote it decides, not a GPU default. Host-only programs (Redis, PHP, the JVM, the Erlang VM, Node.js,
// WebAssembly, databases and search engines, Go, compilers) allocate only host memory; a GPU framework's log
// (PyTorch, TensorFlow, JAX, CUDA ...) keeps the GPU. One table, read by ProgramOfText.
struct ProgramDomain {
  const char* name;     // "redis"
  const char* regex;    // RE2 syntax, matched on raw bytes (Latin-1), anywhere in the text
  LineDomain domain;    // kHost or kGpu
  const char* example;  // a real line that names the program (tested)
};
std::span<const ProgramDomain> ProgramDomains();

// The memory the programs `text` names allocate: kGpu when a GPU framework is named (whatever else is),
// kHost when only host-only programs are, kUnknown when none is. `name`, when given, gets the first program of
// that domain in table order.
LineDomain ProgramOfText(std::string_view text, std::string* name = nullptr);

// Which memory `line` speaks of: pinned words win over host words, host words
// over GPU words ("CUDA host allocation" is host memory).
LineDomain DomainOfLine(std::string_view line);

// Every kind of memory word a line holds (DomainOfLine keeps only the strongest):
// a line that names both the GPU and host memory ("CPU memory < GPU memory")
// leaves the choice to the lines around it.
struct LineWords {
  bool pinned = false, host = false, gpu = false;
  bool Both() const { return host && gpu && !pinned; }
};
LineWords WordsOfLine(std::string_view line);

// A line whose only memory words are the weak host cues (Colab, Kaggle, a notebook, Keras' fit/predict, a
// database, the BEAM ...: kWeakHostWords): its memory is the host's only when the lines around it do not name
// the GPU (round 30: "I faced OutofMermoryError ... in the Sample Colab" above "Environment: Google Colab T4 GPU").
bool OnlyWeakHostWords(std::string_view line);

// The memory a line's memory noun itself names, for a line that names both the GPU
// and the host: RAM, swap, system/host/CPU memory, 内存 are the host's; VRAM, GPU/video/
// device memory, 显存 the GPU's ("内存占用过大 with torch.device('mps')" is host RAM).
// kUnknown when it names both kinds or neither.
LineDomain MemoryNounOfLine(std::string_view line);

// A complaint about the code itself (a compiler's or the interpreter's: "#include
// <memory>", "undefined symbol", "No module named", "has no attribute"): memory
// words in it are names, not a shortage, so the last layer ignores the line.
bool IsCodeErrorLine(std::string_view line);

// Healthy output that carries an out-of-memory or memory-trouble word and reports nothing (round 12, from
// the healthy logs of tests/data/explain/corpus_healthy.jsonl): a count of OOMs that is zero ("CUDA OOMs: 0"
// in torch.cuda.memory_summary(), fairseq's "oom=0"), the dotted key of a key=value status field
// ("memory.required.full=" in ollama's offload line) and a conditional hint that gives advice ("if memory is
// not enough, you can set force_col_wise=true"). The line with them erased (blanked), or nullopt when it has
// none; the explainer reads a family or last-layer match that does not survive the erasure as no finding.
std::optional<std::string> EraseHealthyNoise(std::string_view line);

// An out-of-memory error named as what a setting is meant to avoid ("To avoid cuda out of memory error, I set 1
// to batch size", round 13): the line with that phrase erased, or nullopt when it has none. Unlike
// EraseHealthyNoise it is asked for every tier: a framework's own wording quoted as the thing avoided is no report.
std::optional<std::string> EraseAvoidedOom(std::string_view line);

// The verdict line of oomguard's OOM report: 0 none, else the OomVerdict + 1
// (1 cap_too_low, 2 fragmentation, 3 truly_full, 4 upstream_failed).
int OomguardVerdictOfLine(std::string_view line);

// Indices of the patterns matching `line`, in table order.
void MatchLine(std::string_view line, std::vector<int>* matches);

// A regex with every digit it names outside a {m,n} count read as \d ("137"
// -> "\d\d\d", "[1-9]" -> "[\d]"): a superset of the regex whose answer does
// not depend on which digits a line holds.
std::string DigitBlind(std::string_view regex);

// MatchLine with a memory of line shapes: a line's shape is the line with every
// digit replaced by '0'. Patterns that name no digit answer the same for every
// line of one shape, so a log that repeats a message with other numbers (an OOM
// every step, an allocator dump) costs a hash lookup per line; the small set of
// digit-sensitive patterns runs only on lines whose shape its digit-blind
// superset matches. The shape also remembers DomainOfLine (its words name no
// digit). Bounded: kEntries shapes of at most kMaxShape bytes (longer lines go
// to MatchLine). One per Explainer (not shared).
class ShapeCache {
 public:
  ShapeCache();
  void Match(std::string_view line, std::vector<int>* matches);
  // DomainOfLine(line) for the line last given to Match.
  LineDomain Domain(std::string_view line);
  // WordsOfLine(line) for the line last given to Match.
  LineWords Words(std::string_view line);

 private:
  static constexpr size_t kEntries = 4096;
  static constexpr size_t kMaxShape = 512;
  struct Entry {
    std::string shape;
    std::vector<int> insensitive;  // matching patterns that name no digit
    bool may_sensitive = false;    // the digit-blind sensitive set matches this shape
    int domain = -1;               // DomainOfLine, -1 until asked
    int words = -1;                // WordsOfLine as bits (1 pinned, 2 host, 4 gpu), -1 until asked
    bool used = false;
  };
  std::vector<Entry> entries_;
  Entry* last_ = nullptr;  // the entry of the line last matched, null when it was not cached
  std::string shape_;
  std::vector<int> sensitive_;
};

}  // namespace oomguard::explain
