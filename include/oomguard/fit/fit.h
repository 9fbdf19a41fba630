// The largest batch that fits: searches the planner's prediction over the
// batch size and returns the largest batch whose required bytes fit a budget.
//
// The planner is passed in as a function (PlanFunction), so the search is
// tested against fake memory curves and used with the real planner in the CLI.
// Thread safety: FindMaxBatch is reentrant; it calls `plan` from the calling
// thread only. It never prints or exits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "oomguard/plan/planner.h"
#include "oomguard/result.h"

namespace oomguard::fit {

// Predicts one training step. The real one is
//   [&](const PlanOptions& o) { return plan::PlanStep(*model, o); }
// Searches mostly need one number per batch, the required bytes: a planner
// that answers it without building the whole plan (BatchPlanner) passes that
// as `required` too. required(o, reach) must equal (*this)(o)->required_bytes;
// `reach` is the largest batch the caller will ask with these options (0 when
// unknown), a hint.
class PlanFunction {
 public:
  using Plan = std::function<Result<plan::StepPlan>(const plan::PlanOptions&)>;
  using Required = std::function<Result<uint64_t>(const plan::PlanOptions&, int64_t reach)>;

  PlanFunction() = default;
  PlanFunction(Plan plan, Required required) : plan_(std::move(plan)), required_(std::move(required)) {}
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, PlanFunction> && std::is_constructible_v<Plan, F>)
  PlanFunction(F&& plan) : plan_(std::forward<F>(plan)) {}  // NOLINT: a lambda is a PlanFunction

  Result<plan::StepPlan> operator()(const plan::PlanOptions& o) const { return plan_(o); }
  // The required bytes alone (from the plan when no `required` was given).
  Result<uint64_t> RequiredBytes(const plan::PlanOptions& o, int64_t reach = 0) const {
    if (required_) return required_(o, reach);
    Result<plan::StepPlan> p = plan_(o);
    if (!p) return MakeError(p.error());
    return p->required_bytes;
  }
  bool answers_required_alone() const { return static_cast<bool>(required_); }

 private:
  Plan plan_;
  Required required_;
};

// A PlanFunction answering from `planner` (which must outlive it): the graph
// analysed once per option set, not once per batch.
inline PlanFunction PlanWith(plan::BatchPlanner& planner) {
  return PlanFunction([&planner](const plan::PlanOptions& o) { return planner.Plan(o); },
                      [&planner](const plan::PlanOptions& o, int64_t reach) { return planner.RequiredBytes(o, reach); });
}

// The default safety margin, in percent of the device capacity. The planner is
// accurate to a few percent; the margin keeps a prediction at the edge from
// becoming an OOM in practice (and leaves room for the allocator's own growth).
inline constexpr double kDefaultMarginPercent = 5.0;

// What the step may use on one device.
struct Budget {
  uint64_t capacity_bytes = 0;  // device memory (catalog GPU, --memory, --fraction)
  uint64_t reserve_bytes = 0;   // held by other processes (--reserve)
  double margin_percent = kDefaultMarginPercent;  // of capacity_bytes (--margin)
};

// capacity - reserve - margin. Fails when the margin is outside [0, 100) or the
// reserve and margin leave nothing.
Result<uint64_t> UsableBytes(const Budget& budget);

struct FitOptions {
  uint64_t budget_bytes = 0;  // a step fits when required_bytes <= budget_bytes
  int64_t max_batch_limit = 1'000'000;  // never searched beyond this batch
  // After the search, these batches above the answer are planned as well; if
  // any fits (while the first failing batch is more than ~3 % over the budget:
  // the caching allocator's fragmentation noise), or the planned curve is not
  // monotone beyond that noise, the search falls back to planning every batch
  // from 1 to twice the first failing batch.
  int verify_window = 2;
  // The fallback plans every batch only up to this one; above, the bracket's
  // answer stands (the search still ends with a batch that fits and one above
  // it that does not).
  int64_t exhaustive_limit = 256;
  // A batch that likely fits (0: none known): another search's answer at options that need no
  // less memory (fit's in-place and what-if searches start from the base answer). Planned right
  // after batches 1 and 2, then the batch above it, so that a search whose answer is near it ends
  // in a few plans rather than closing in from batch 2. Where it does not fit, it bounds the search.
  int64_t likely_fits = 0;
  // The caller reads max_batch and hit_limit alone (a what-if's largest batch, a split's per-GPU
  // limit): the search leaves FitResult::plan and next_plan empty, and plans the batches above the
  // answer only where the exhaustive fallback could follow (above exhaustive_limit they cannot
  // change the answer). max_batch is the same as without it; plans_evaluated is smaller.
  bool answer_only = false;
};

struct FitResult {
  int64_t max_batch = 0;  // 0 when batch 1 does not fit
  uint64_t budget_bytes = 0;
  // The plan at max_batch, or at batch 1 when nothing fits.
  plan::StepPlan plan;
  // The plan at max_batch + 1 (absent when max_batch hit max_batch_limit).
  std::optional<plan::StepPlan> next_plan;
  bool hit_limit = false;         // max_batch == max_batch_limit and it fits
  bool exhaustive_fallback = false;  // the curve was not monotone; every batch was planned
  int plans_evaluated = 0;
};

// REQUIRES: plan is callable; options.max_batch_limit >= 1. `base.batch` is ignored.
// Fails with the planner's error if planning batch 1 fails.
Result<FitResult> FindMaxBatch(const PlanFunction& plan, const plan::PlanOptions& base,
                               const FitOptions& options);

// The largest batch in [1, limit] whose plan fits, planning every batch (the
// reference the search must agree with; slow). 0 when none fits.
Result<int64_t> FindMaxBatchExhaustive(const PlanFunction& plan, const plan::PlanOptions& base,
                                       uint64_t budget_bytes, int64_t limit);

// Model states = weights + gradients + optimizer state (+ CUDA context and
// workspace, which do not depend on the batch either).
uint64_t BatchIndependentBytes(const plan::StepPlan& plan);

}  // namespace oomguard::fit
