// The host side of a training run: the RAM and pinned memory of the input
// pipeline (PyTorch DataLoader workers, batches in flight, queues, preloaded
// items, the pinned-memory cache) and of the process itself, predicted before
// the run. The article's run died here, not on the GPU: 5100 decoded photos
// held as float32 (18.8 GB) on a 16 GB machine.
//
// PlanHost() is a pure function of PipelineOptions; its constants live in
// src/host/pipeline_constants.h, each with where it comes from (measured on
// this machine's torch, or read from PyTorch's source). AdviseHost() re-plans
// each change. HostLimitsFromSystem() reads MemTotal, the memlock limit and
// the size of /dev/shm through doctor::SystemView (a fake in tests).
//
// Thread safety: all functions are pure or read-only; safe from many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/result.h"

namespace oomguard::doctor {
class SystemView;
}

namespace oomguard::host {

enum class DType { kUint8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64 };

std::string_view Name(DType dtype);
uint64_t ElementBytes(DType dtype);

// One item as the pipeline holds it: "3x480x640:float32".
struct Sample {
  std::vector<int64_t> dims;
  DType dtype = DType::kFloat32;
  uint64_t Bytes() const;
  std::string ToString() const;  // "3x480x640:float32"
};

// Parses DIMS:DTYPE. Errors are one line naming the text, e.g.
// "--sample '3x480:float': unknown dtype 'float' (choose from uint8, ...)".
// Dimensions must be positive and an item at most 1 TiB.
Result<Sample> ParseSample(std::string_view text);

struct PipelineOptions {
  Sample sample;
  int64_t batch = 1;
  int64_t loader_workers = 0;   // DataLoader num_workers; 0: the main process loads
  int64_t prefetch_factor = 2;  // batches each worker keeps ready (PyTorch's default 2)
  bool pin_memory = false;      // the pin-memory thread copies each batch into pinned memory
  bool persistent_workers = false;
  int64_t queue_items = 0;         // items held in a queue or shuffle buffer
  int64_t dataset_in_memory = 0;   // items preloaded, decoded, in the main process
  bool cuda = true;                // the process runs CUDA (its runtime keeps host memory too)
  uint64_t step_bytes = 0;         // target cpu: the training step itself lives in host memory
  // A bounded pinned pool (oomguard's PinnedHostPool, OOMGUARD_PINNED_LIMIT) in place of
  // PyTorch's power-of-two cache: exact sizes, at most this many bytes pinned.
  std::optional<uint64_t> pinned_limit_bytes;
};

// REQUIRES for PlanHost: sample valid (ParseSample), counts >= 0, batch >= 1,
// prefetch_factor >= 1 (ValidatePipeline checks these and the byte totals).
Status ValidatePipeline(const PipelineOptions& options);

struct HostPlan {
  uint64_t item_bytes = 0;         // one item (the sample)
  uint64_t batch_bytes = 0;        // one collated batch: items and int64 labels
  uint64_t baseline_bytes = 0;     // python with torch, numpy and PIL imported
  uint64_t cuda_runtime_bytes = 0; // host memory of the CUDA runtime (0 without CUDA)
  uint64_t per_worker_bytes = 0;   // one worker: its private pages and the batch it assembles
  uint64_t workers_bytes = 0;      // all workers (or the main process's assembly with 0 workers)
  int64_t in_flight_batches = 0;   // collated batches alive at once
  uint64_t in_flight_bytes = 0;    // those batches, in shared memory (pageable part)
  uint64_t held_bytes = 0;         // queue and preloaded items
  uint64_t preload_slack_bytes = 0;  // heap the conversion of preloaded float items leaves (± itself)
  uint64_t pinned_bytes = 0;       // page-locked bytes the pinned cache holds at its peak
  uint64_t step_bytes = 0;         // target cpu: the training step
  uint64_t peak_bytes = 0;         // the sum: what must fit in host RAM
  std::vector<std::string> notes;  // assumptions worth saying (e.g. the power-of-two waste)
};

HostPlan PlanHost(const PipelineOptions& options);

// What the machine offers.
struct HostLimits {
  std::optional<uint64_t> memory_bytes;   // MemTotal (or --host-memory)
  std::optional<uint64_t> memlock_bytes;  // RLIMIT_MEMLOCK soft limit; nullopt: unlimited
  std::optional<uint64_t> shm_bytes;      // size of /dev/shm; nullopt: unknown
};

HostLimits HostLimitsFromSystem(const doctor::SystemView& system);

struct HostVerdict {
  std::optional<bool> fits;             // peak_bytes <= memory_bytes; nullopt without a capacity
  int64_t headroom_bytes = 0;           // memory - peak (negative: short by)
  std::vector<std::string> warnings;    // memlock, /dev/shm
};

HostVerdict JudgeHost(const HostPlan& plan, const HostLimits& limits);

struct HostAdvice {
  std::string action;        // one line a user can apply
  uint64_t saves_bytes = 0;  // host peak bytes saved (re-planned)
  uint64_t peak_bytes = 0;   // the host peak after the change
  uint64_t pinned_bytes = 0; // pinned bytes after the change
  bool fits = false;         // the change alone makes the host side fit
};

// Each change re-planned against `memory_bytes`, most bytes saved first; only
// changes that save something.
std::vector<HostAdvice> AdviseHost(const PipelineOptions& options, uint64_t memory_bytes);

}  // namespace oomguard::host
