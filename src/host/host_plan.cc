#include "oomguard/host/host_plan.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <sstream>

#include "oomguard/doctor/system_view.h"
#include "oomguard/units.h"
#include "pipeline_constants.h"

namespace oomguard::host {
namespace {

namespace k = constants;

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  uint64_t bytes;
};

constexpr std::array<DTypeInfo, 9> kDTypes = {{{DType::kUint8, "uint8", 1},
                                               {DType::kInt8, "int8", 1},
                                               {DType::kInt16, "int16", 2},
                                               {DType::kInt32, "int32", 4},
                                               {DType::kInt64, "int64", 8},
                                               {DType::kFloat16, "float16", 2},
                                               {DType::kBFloat16, "bfloat16", 2},
                                               {DType::kFloat32, "float32", 4},
                                               {DType::kFloat64, "float64", 8}}};

bool IsFloat(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

uint64_t PowerOf2Ceil(uint64_t n) {
  if (n <= 1) return n;
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

uint64_t Times(int64_t count, uint64_t bytes) { return static_cast<uint64_t>(count) * bytes; }

// Bytes one pinned copy of a batch takes: each tensor (items, labels) is its own block.
uint64_t PinnedBatchBytes(const PipelineOptions& o, uint64_t item_bytes, bool power_of_two) {
  uint64_t items = Times(o.batch, item_bytes);
  uint64_t labels = Times(o.batch, k::kLabelBytesPerItem);
  if (power_of_two) return PowerOf2Ceil(items) + PowerOf2Ceil(labels);
  return RoundUp(items, k::kPinnedPoolAlignment) + RoundUp(labels, k::kPinnedPoolAlignment);
}

}  // namespace

std::string_view Name(DType dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

uint64_t ElementBytes(DType dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.dtype == dtype) return d.bytes;
  }
  return 0;
}

uint64_t Sample::Bytes() const {
  uint64_t n = ElementBytes(dtype);
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

std::string Sample::ToString() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s + ":" + std::string(Name(dtype));
}

Result<Sample> ParseSample(std::string_view text) {
  const std::string quoted = "--sample '" + std::string(text) + "': ";
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return MakeError(quoted + "expected DIMS:DTYPE like 3x480x640:uint8");
  }
  Sample s;
  std::string_view type = text.substr(colon + 1);
  bool known = false;
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == type) {
      s.dtype = d.dtype;
      known = true;
    }
  }
  if (type == "float") s.dtype = DType::kFloat32, known = true;
  if (type == "half") s.dtype = DType::kFloat16, known = true;
  if (!known) {
    std::string names;
    for (const DTypeInfo& d : kDTypes) names += (names.empty() ? "" : ", ") + std::string(d.name);
    return MakeError(quoted + "unknown dtype '" + std::string(type) + "' (choose from " + names + ")");
  }
  std::string_view dims = text.substr(0, colon);
  long double bytes = static_cast<long double>(ElementBytes(s.dtype));
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t end = dims.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = dims.size();
    std::string_view part = dims.substr(pos, end - pos);
    int64_t d = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || d <= 0) {
      return MakeError(quoted + "DIMS must be positive integers like 3x480x640");
    }
    bytes *= static_cast<long double>(d);
    if (bytes > static_cast<long double>(k::kMaxItemBytes)) {
      return MakeError(quoted + "one item would be more than " + FormatBytes(k::kMaxItemBytes) +
                       "; is a dimension mistyped?");
    }
    s.dims.push_back(d);
    pos = end + 1;
  }
  return s;
}

Status ValidatePipeline(const PipelineOptions& o) {
  auto count = [](const char* flag, int64_t v, int64_t min) -> Status {
    if (v < min) return MakeError(std::string(flag) + " must be at least " + std::to_string(min) + ", got " + std::to_string(v));
    if (v > k::kMaxCount) return MakeError(std::string(flag) + " " + std::to_string(v) + " is absurdly large");
    return Status::Ok();
  };
  if (o.sample.dims.empty() || o.sample.Bytes() == 0) return MakeError("--sample: no item shape");
  for (Status s : {count("--batch", o.batch, 1), count("--loader-workers", o.loader_workers, 0),
                   count("--prefetch-factor", o.prefetch_factor, 1), count("--queue", o.queue_items, 0),
                   count("--dataset-in-memory", o.dataset_in_memory, 0)}) {
    if (!s.ok()) return s;
  }
  if (o.loader_workers > 4096) return MakeError("--loader-workers " + std::to_string(o.loader_workers) + " is absurdly large");
  // The largest product the plan forms, in floating point: refuse totals beyond 2^60 bytes.
  long double item = static_cast<long double>(o.sample.Bytes());
  long double batches = static_cast<long double>(o.loader_workers) * o.prefetch_factor + 4;
  long double total = item * (static_cast<long double>(o.batch) * (batches + o.loader_workers) * 2 +
                              static_cast<long double>(o.queue_items) + o.dataset_in_memory);
  if (total > static_cast<long double>(1ull << 60)) {
    return MakeError("the pipeline would hold more than 1 EiB (" + o.sample.ToString() + " x batch " +
                     std::to_string(o.batch) + "); is a count mistyped?");
  }
  return Status::Ok();
}

HostPlan PlanHost(const PipelineOptions& o) {
  HostPlan p;
  p.item_bytes = o.sample.Bytes();
  p.batch_bytes = Times(o.batch, p.item_bytes + k::kLabelBytesPerItem);
  p.baseline_bytes = k::kProcessBaselineBytes;
  p.cuda_runtime_bytes = o.cuda ? k::kCudaRuntimeHostBytes : 0;
  p.step_bytes = o.step_bytes;
  const bool preloaded = o.dataset_in_memory > 0;
  const double batch_items = static_cast<double>(Times(o.batch, p.item_bytes));
  if (o.loader_workers > 0) {
    const uint64_t assembly = preloaded ? 0 : static_cast<uint64_t>(k::kWorkerAssemblyStreamed * batch_items);
    p.per_worker_bytes = k::kWorkerPrivateBytes + assembly;
    p.workers_bytes = Times(o.loader_workers, p.per_worker_bytes);
    p.in_flight_batches = o.loader_workers * o.prefetch_factor + k::kLoopHeldBatches;
  } else {
    p.workers_bytes =
        static_cast<uint64_t>((preloaded ? k::kMainAssemblyPreloaded : k::kMainAssemblyStreamed) * batch_items);
    p.in_flight_batches = k::kMainProcessBatches;
  }
  p.held_bytes = Times(o.queue_items + o.dataset_in_memory, p.item_bytes);
  if (preloaded && IsFloat(o.sample.dtype)) {
    p.preload_slack_bytes =
        static_cast<uint64_t>(k::kPreloadRetention * static_cast<double>(Times(o.dataset_in_memory, p.item_bytes)));
    p.notes.push_back("preloading float items leaves conversion temporaries in the heap: counted " +
                      FormatBytes(p.preload_slack_bytes) + ", give or take " + FormatBytes(p.preload_slack_bytes) +
                      " (measured 0.04x-1.0x of the preloaded set, varying from run to run)");
  }
  uint64_t in_flight_total = Times(p.in_flight_batches, p.batch_bytes);
  p.in_flight_bytes = in_flight_total;
  uint64_t pinned_pageable = 0;  // pinned copies that fell back to pageable memory (bounded pool)
  if (o.pin_memory && o.cuda) {
    const int64_t pinned_batches = p.in_flight_batches + k::kPinnedExtraBatches - k::kLoopHeldBatches;
    const bool pytorch_cache = !o.pinned_limit_bytes.has_value();
    uint64_t wanted = Times(pinned_batches, PinnedBatchBytes(o, p.item_bytes, pytorch_cache));
    p.pinned_bytes = pytorch_cache ? wanted : std::min(wanted, *o.pinned_limit_bytes);
    pinned_pageable = wanted - p.pinned_bytes;
    // Pinned copies replace the shared-memory batches; one batch is in both while it is copied.
    p.in_flight_bytes = p.batch_bytes;
    if (pytorch_cache) {
      uint64_t exact = Times(pinned_batches, PinnedBatchBytes(o, p.item_bytes, false));
      if (wanted > exact) {
        p.notes.push_back("PyTorch's pinned cache rounds each block up to a power of two: " +
                          FormatBytes(exact) + " of batches pin " + FormatBytes(wanted) + " (" +
                          FormatBytes(wanted - exact) + " wasted), kept until the cache is emptied");
      }
    }
  } else if (o.pin_memory) {
    p.notes.push_back("--pin-memory without CUDA: PyTorch pins nothing (target cpu)");
  }
  p.peak_bytes = p.baseline_bytes + p.cuda_runtime_bytes + p.workers_bytes + p.in_flight_bytes + p.held_bytes +
                 p.preload_slack_bytes + p.pinned_bytes + pinned_pageable + p.step_bytes;
  if (o.persistent_workers && o.loader_workers > 0) {
    p.notes.push_back("persistent workers keep their " + FormatBytes(p.workers_bytes) +
                      " between epochs (the peak is the same; the memory is never given back)");
  }
  return p;
}

HostLimits HostLimitsFromSystem(const doctor::SystemView& system) {
  HostLimits l;
  if (std::optional<std::string> meminfo = system.ReadFile("/proc/meminfo")) {
    std::istringstream in(*meminfo);
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib) {
      std::getline(in, unit);
      if (key == "MemTotal:") {
        l.memory_bytes = kib * 1024;
        break;
      }
    }
  }
  l.memlock_bytes = system.MemlockLimitBytes();
  l.shm_bytes = system.FilesystemBytes("/dev/shm");
  return l;
}

HostVerdict JudgeHost(const HostPlan& p, const HostLimits& limits) {
  HostVerdict v;
  if (limits.memory_bytes) {
    v.fits = p.peak_bytes <= *limits.memory_bytes;
    v.headroom_bytes = static_cast<int64_t>(*limits.memory_bytes) - static_cast<int64_t>(p.peak_bytes);
  }
  if (limits.memlock_bytes && p.pinned_bytes > *limits.memlock_bytes) {
    v.warnings.push_back("pinned " + FormatBytes(p.pinned_bytes) + " is above the memlock limit " +
                         FormatBytes(*limits.memlock_bytes) +
                         " (ulimit -l): PyTorch's cudaHostAlloc is not held to it, but pinning through mlock "
                         "or RDMA registration is");
  }
  const uint64_t shared = p.in_flight_batches > 0 && p.per_worker_bytes > 0
                              ? static_cast<uint64_t>(p.in_flight_batches) * p.batch_bytes
                              : 0;
  if (limits.shm_bytes && shared > *limits.shm_bytes) {
    v.warnings.push_back("DataLoader workers pass " + FormatBytes(shared) + " of batches through /dev/shm, which has " +
                         FormatBytes(*limits.shm_bytes) +
                         ": expect 'No space left on device' or a bus error (docker: --shm-size)");
  }
  return v;
}

std::vector<HostAdvice> AdviseHost(const PipelineOptions& o, uint64_t memory_bytes) {
  const HostPlan base = PlanHost(o);
  std::vector<HostAdvice> out;
  auto add = [&](const std::string& action, const PipelineOptions& changed) {
    HostPlan p = PlanHost(changed);
    if (p.peak_bytes >= base.peak_bytes && p.pinned_bytes >= base.pinned_bytes) return;
    out.push_back({action, base.peak_bytes > p.peak_bytes ? base.peak_bytes - p.peak_bytes : 0, p.peak_bytes,
                   p.pinned_bytes, p.peak_bytes <= memory_bytes});
  };
  // Keep images as uint8 until they reach the GPU.
  if (IsFloat(o.sample.dtype)) {
    PipelineOptions c = o;
    c.sample.dtype = DType::kUint8;
    add("keep items as uint8 until they reach the GPU (--sample " + c.sample.ToString() +
            "; convert there: x.cuda().float().div_(255)), " + std::to_string(ElementBytes(o.sample.dtype)) +
            "x smaller",
        c);
  }
  // Fewer workers: the most that fit, else one.
  if (o.loader_workers > 1) {
    PipelineOptions c = o;
    for (c.loader_workers = o.loader_workers - 1; c.loader_workers > 1; --c.loader_workers) {
      if (PlanHost(c).peak_bytes <= memory_bytes) break;
    }
    add("--loader-workers " + std::to_string(c.loader_workers) + " (num_workers=" + std::to_string(c.loader_workers) +
            ")",
        c);
  }
  if (o.loader_workers > 0 && o.prefetch_factor > 1) {
    PipelineOptions c = o;
    c.prefetch_factor = 1;
    add("--prefetch-factor 1 (prefetch_factor=1)", c);
  }
  // Stream instead of preloading.
  if (o.dataset_in_memory > 0) {
    PipelineOptions c = o;
    c.dataset_in_memory = 0;
    add("stream the dataset instead of preloading " + std::to_string(o.dataset_in_memory) +
            " decoded items (decode in the workers)",
        c);
  }
  // oomguard feed: decode JPEGs under a hard budget, uint8, in place of the loader's workers and queues.
  if (o.loader_workers > 0 || o.dataset_in_memory > 0 || o.queue_items > 0) {
    PipelineOptions c = o;
    c.loader_workers = 0;
    c.dataset_in_memory = 0;
    c.queue_items = 0;
    c.sample.dtype = DType::kUint8;
    c.pin_memory = false;
    const uint64_t budget = RoundUp(4 * Times(o.batch, c.sample.Bytes()), 1ull << 20);
    HostPlan p = PlanHost(c);
    // feed's budget replaces the main process's assembly and batches in flight.
    uint64_t peak = p.peak_bytes - p.workers_bytes - p.in_flight_bytes + budget;
    if (peak < base.peak_bytes) {
      out.push_back({"oomguard feed DIR --budget " + std::to_string(budget >> 20) + "MiB --batch " + std::to_string(o.batch) +
                         " (decodes into uint8 batches under a hard byte budget, in place of the loader, queue and preloaded set)",
                     base.peak_bytes - peak, peak, 0, peak <= memory_bytes});
    }
  }
  if (o.pin_memory && o.cuda) {
    PipelineOptions off = o;
    off.pin_memory = false;
    add("pin_memory=False (drop --pin-memory): nothing page-locked", off);
    if (!o.pinned_limit_bytes) {
      PipelineOptions bounded = o;
      bounded.pinned_limit_bytes = RoundUp(k::kPinnedExtraBatches * PinnedBatchBytes(o, base.item_bytes, false), 1ull << 20);
      add("OOMGUARD_PINNED_LIMIT=" + std::to_string(*bounded.pinned_limit_bytes >> 20) + "MiB" +
              " (oomguard's bounded pinned pool: exact sizes, overflow to pageable memory)",
          bounded);
    }
  }
  // The largest queue (or preloaded set) that fits.
  auto largest = [&](int64_t PipelineOptions::*field, const char* flag, const char* what) {
    if (o.*field <= 0 || base.peak_bytes <= memory_bytes) return;
    // The peak grows with the count: binary search for the largest count in [1, count) that fits.
    PipelineOptions c = o;
    int64_t lo = 0, hi = o.*field - 1;
    while (lo < hi) {
      c.*field = lo + (hi - lo + 1) / 2;
      if (PlanHost(c).peak_bytes <= memory_bytes) {
        lo = c.*field;
      } else {
        hi = c.*field - 1;
      }
    }
    if (lo == 0) return;
    c.*field = lo;
    add(std::string(flag) + " " + std::to_string(lo) + " (the largest " + what + " that fits)", c);
  };
  largest(&PipelineOptions::queue_items, "--queue", "queue or shuffle buffer");
  largest(&PipelineOptions::dataset_in_memory, "--dataset-in-memory", "preloaded set");
  std::stable_sort(out.begin(), out.end(), [](const HostAdvice& a, const HostAdvice& b) {
    return a.saves_bytes != b.saves_bytes ? a.saves_bytes > b.saves_bytes : a.pinned_bytes < b.pinned_bytes;
  });
  return out;
}

}  // namespace oomguard::host
