// Splitting a global batch over several GPUs, possibly with different memory:
// a local batch per GPU, each GPU's predicted peak, and a loss weight (the
// GPU's share of the global batch) so uneven shares still average correctly.
//
// Each strategy is a memory model per GPU, built from the planner:
//   dp    (nn.DataParallel, one process): GPU 0 runs the full step (master
//         parameters, gradients, optimizer state, the loss) on its share and
//         also holds the whole global input batch, the gathered outputs of the
//         whole batch (with the loss's copy and their gradient) and the
//         reduce-add buffers (10 MiB per GPU); every other GPU holds a
//         parameter copy, its gradients until the reduction, and its own
//         activations (planned as plain SGD without a loss).
//   ddp   every rank holds full model states, its own activations and two
//         gradient buckets (--bucket-mib, 25 MiB by default).
//   zero1 optimizer state partitioned over the ranks; zero2 + gradients;
//   zero3 + parameters, and the largest layer's parameters are gathered whole
//         while it runs. ZeRO ranks also hold the two buckets.
//
// Thread safety: PlanSplit is reentrant and calls `plan` from the calling
// thread. It never prints or exits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/fit/fit.h"
#include "oomguard/plan/planner.h"

namespace oomguard::fit {

enum class Strategy { kDp, kDdp, kZero1, kZero2, kZero3 };

// "dp", "ddp", "zero1", "zero2", "zero3"; the error lists them.
Result<Strategy> ParseStrategy(std::string_view name);
std::string_view Name(Strategy strategy);

inline constexpr uint64_t kDefaultBucketBytes = 25ull << 20;         // torch DDP bucket_cap_mb
inline constexpr uint64_t kDataParallelReduceBufferBytes = 10ull << 20;  // reduce_add_coalesced

struct SplitRequest {
  plan::PlanOptions base;  // the step; base.batch is ignored
  std::vector<uint64_t> budget_bytes;  // usable bytes per GPU (capacity - reserve - margin)
  Strategy strategy = Strategy::kDdp;
  std::optional<int64_t> global_batch;  // absent: find the largest global batch (--maximize)
  uint64_t bucket_bytes = kDefaultBucketBytes;
  // Per GPU, a local batch that likely fits (0: none known; FitOptions::likely_fits): the advice's
  // other strategies and what-ifs start each GPU's search from the split they are compared with.
  std::vector<int64_t> likely_max_batch;
};

struct GpuShare {
  int index = 0;
  int64_t batch = 0;          // local batch
  double loss_weight = 0;     // batch / global batch
  uint64_t budget_bytes = 0;
  uint64_t peak_bytes = 0;    // predicted required bytes at `batch`, strategy extras included
  uint64_t extra_bytes = 0;   // the strategy's bytes on top of the plan (buckets, gathered outputs)
  int64_t max_batch = 0;      // the largest local batch this GPU holds (dp GPU 0: at this global batch)
  plan::StepPlan plan;        // the planner's answer at `batch` (without extra_bytes)
};

struct EvenShare {            // what an even split would need on each GPU
  int64_t batch = 0;          // per GPU (global batch / GPUs, rounded up)
  std::vector<uint64_t> peak_bytes;
  std::vector<bool> fits;
};

struct SplitResult {
  Strategy strategy = Strategy::kDdp;
  int gpus = 0;
  bool possible = false;
  int64_t global_batch = 0;      // as asked, or the largest one with --maximize
  int64_t max_global_batch = 0;  // the largest global batch this strategy can split here
  std::vector<GpuShare> per_gpu;  // filled when possible
  std::optional<EvenShare> even;  // when a global batch was asked
  std::string reason;             // when !possible: why, in numbers
  std::vector<std::string> notes; // how to apply the split with this strategy
};

// Fails on bad input (no GPUs, a budget of 0, global batch < GPUs) and on
// planner errors; an impossible split is a result with possible == false.
Result<SplitResult> PlanSplit(const PlanFunction& plan, const SplitRequest& request);

// With threads > 1 the two below plan their alternatives on that many threads at once (the plan
// function must then be safe to call from several threads, as PlanWith(BatchPlanner) is); the
// answer is the same.
//
// For each other strategy (dp -> ddp, zero1..3; ddp -> zero1..3; ...), the
// split re-planned with it: action "strategy_<name>", required_bytes the
// largest per-GPU peak, max_batch the largest global batch.
struct AdviceItem;
struct ModelInput;
Result<std::vector<AdviceItem>> AdviseStrategies(const PlanFunction& plan,
                                                 const SplitRequest& request,
                                                 const SplitResult& baseline, int threads = 1);

// The single-GPU what-ifs (AMP, checkpointing, lighter optimizer, halved
// resolution, FC layer -> pooling), each applied to every GPU and the whole
// split re-planned: required_bytes the largest per-GPU peak of an even split,
// fits whether the global batch splits, max_batch the largest global batch.
// What-ifs the planner cannot plan are left out.
Result<std::vector<AdviceItem>> AdviseSplitWhatIfs(const PlanFunction& plan, const SplitRequest& request,
                                                   const SplitResult& baseline,
                                                   const std::vector<ModelInput>& inputs, int threads = 1);

}  // namespace oomguard::fit
