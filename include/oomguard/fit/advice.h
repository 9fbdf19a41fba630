// What-if advice: a ranked list of changes to a training step, each one
// re-planned with the planner (never guessed), with the bytes it saves, the
// resulting verdict and the largest batch that fits after the change.
//
// Thread safety: Advise is reentrant; it calls `plan` from the calling thread, and with
// AdviceRequest::threads > 1 from that many threads at once.
// It never prints or exits; a what-if the planner cannot plan is left out and
// named in AdviceList::skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oomguard/fit/fit.h"
#include "oomguard/plan/planner.h"

namespace oomguard::fit {

// A model input and its per-sample shape (without the batch dimension), used
// by the "halve the input resolution" what-if.
struct ModelInput {
  std::string name;
  std::vector<int64_t> per_sample_dims;  // e.g. {3, 224, 224}
};

// Calls work(0) .. work(count - 1), on up to `threads` threads (this one included); returns when all
// are done. Each index runs exactly once; what the calls share they must guard themselves.
void ForEachOnThreads(size_t count, int threads, const std::function<void(size_t)>& work);

struct AdviceRequest {
  plan::PlanOptions base;  // the step as the user asked for it; REQUIRES: base.batch set
  uint64_t budget_bytes = 0;
  std::vector<ModelInput> inputs;  // for the resolution what-if; empty: skip it
  bool search_max_batch = true;    // also find each what-if's largest batch (a fit search each)
  int64_t max_batch_limit = FitOptions{}.max_batch_limit;  // those searches' limit (fit's --max-batch)
  // What-ifs planned at once, each on its own thread (the plan function must then be safe to call
  // from several threads, as PlanWith(BatchPlanner) is). The advice is the same for any count.
  int threads = 1;
};

struct AdviceItem {
  std::string action;       // stable id: "lower_batch", "amp", "activation_checkpointing",
                            // "lighter_optimizer", "halve_resolution", "replace_fc_with_pooling",
                            // and for split: "strategy_ddp", "strategy_zero1", ...
  std::string description;  // what to do, in the user's words, with the flags to try it
  uint64_t required_bytes = 0;  // predicted after the change (at the same batch, unless lower_batch)
  uint64_t saves_bytes = 0;     // baseline required - required_bytes
  bool fits = false;            // required_bytes <= budget
  std::optional<int64_t> max_batch;  // the largest batch that fits after the change
  // lower_batch only: micro-batch x accumulation_steps == the batch asked for.
  std::optional<int64_t> micro_batch;
  std::optional<int64_t> accumulation_steps;
  std::string layer;  // replace_fc_with_pooling: the layer's name
  uint64_t layer_parameter_bytes = 0;
};

struct AdviceList {
  std::vector<AdviceItem> items;      // ranked: what fits first, then by bytes saved
  std::vector<std::string> skipped;   // "amp: <planner error>"
};

// One change to the step, before it is planned.
struct WhatIf {
  std::string action;
  std::string description;
  plan::PlanOptions options;  // the base with the change applied
  std::string layer;          // replace_fc_with_pooling: the layer
  uint64_t layer_parameter_bytes = 0;
};

// The applicable single-GPU what-ifs (amp, activation_checkpointing,
// lighter_optimizer, halve_resolution, replace_fc_with_pooling) for `base`;
// `baseline` (a plan of base) names the largest fully connected layer.
std::vector<WhatIf> WhatIfs(const plan::PlanOptions& base, const std::vector<ModelInput>& inputs,
                            const plan::StepPlan& baseline);

// Re-plans each applicable what-if against `baseline` (the plan of request.base).
// Fails only when request.base has no batch.
Result<AdviceList> Advise(const PlanFunction& plan, const AdviceRequest& request,
                          const plan::StepPlan& baseline);

// Sorts items: those that fit first, then by bytes saved (largest first), then by action.
void RankAdvice(std::vector<AdviceItem>& items);

// The smallest accumulation count s dividing `batch` with batch / s <= max_batch
// (so micro-batch x s == batch exactly). REQUIRES: batch >= 1, max_batch >= 1.
int64_t AccumulationSteps(int64_t batch, int64_t max_batch);

// The Gemm/MatMul layer with the most parameter bytes, or nullptr.
const plan::LayerMemory* LargestFullyConnectedLayer(const plan::StepPlan& plan);

}  // namespace oomguard::fit
