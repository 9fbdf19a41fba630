// The pattern table: named RE2 patterns that recognize lines of a log, each
// tagged with the signal it gives, the framework that prints it and a real
// example line (patterns_test.cc checks every example against the table).
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace oomguard::explain {

// What a matching line tells. Signals make findings; contexts only colour the
// verdict of other findings.
enum class Signal {
  // --- signals (the first matching one in table order wins for a line)
  kTorchOomNumbers,     // PyTorch/HIP caching allocator OOM with its numbers
  kHostPinnedOom,       // pinned (page-locked) host allocation failed
  kImpossibleHint,      // the framework says the size itself is wrong
  kGpuOomWarning,       // an allocator says its OOM is not a failure
  kGpuOom,              // a device allocation failed (with or without numbers)
  kLibraryAllocFailure, // cuBLAS/cuDNN/cuFFT/nvJPEG could not get memory
  kLibraryInitFailure,  // cuBLAS/cuDNN could not initialize (usually no memory left)
  kDaliAllocFailure,    // DALI's decoder allocator failed (buffers grow with images)
  kShmExhausted,
  kHostRamOom,
  kProcessKilled,       // SIGKILL / "Killed" without saying by whom
  kLeakGrowth,
  kWrongDevice,
  kDriverMismatch,
  kCudaLibraryMismatch,
  kNotMemory,
  kGpuStatusRow,        // an nvidia-smi / gpustat row: used / total per GPU
  // --- contexts
  kContextFramework,        // the line names the framework that wrote the log
  kContextExpandableOn,     // expandable_segments is already on
  kContextPinMemory,        // pin_memory / pinned buffers are involved
  kContextWsl,              // the log comes from WSL
  kContextPreallocation,    // TF/JAX preallocation is mentioned
  kContextTwoFrameworks,    // TF and another framework share the process
};

bool IsContext(Signal signal);

struct Pattern {
  const char* name;
  Signal signal;
  const char* framework;  // "" when the line does not say
  const char* regex;      // RE2 syntax, matched on raw bytes (Latin-1)
  const char* example;    // a real line this pattern recognizes (tested)
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
  std::unique_ptr<RE2::Set> set;  // all of Patterns(), index = table index
  std::vector<std::unique_ptr<RE2>> each;
  std::vector<std::unique_ptr<RE2>> numbers;  // NumberPatterns()
  // Keywords one of which every pattern needs: text without a hit cannot match.
  std::unique_ptr<RE2> prefilter;
};
const CompiledPatterns& Compiled();

// Reads "15836 / 16130 MB" or "15000MiB / 16160MiB" (nvidia-smi, gpustat: MiB)
// and the row's GPU utilization in percent (-1 when the row has none).
bool ParseGpuRow(std::string_view line, uint64_t* used_bytes, uint64_t* total_bytes, int* utilization);

// Indices of the patterns matching `line`, in table order.
void MatchLine(std::string_view line, std::vector<int>* matches);

}  // namespace oomguard::explain
